// @vitest-environment happy-dom
import { fireEvent, render, screen } from '@testing-library/react';
import { describe, expect, it, vi } from 'vitest';
import { DICTIONARIES } from '@obmen/shared';
import CardOrderConfirm from '../../src/islands/CardOrderConfirm.tsx';
import CardOrderForm from '../../src/islands/CardOrderForm.tsx';
import { placedOrder, virtualCard, walletEnvelope } from './fixtures.ts';
import { expectKeyAcrossRetryAndRefusal, expectOnItsField, formUnderTest, mockApi, ok, refused, unavailable, stubNavigation } from './api-mock.ts';

const en = DICTIONARIES.en;
const assign = stubNavigation();

const { fill, send } = formUnderTest(
  () => render(<CardOrderForm locale="en" messages={en} products={[virtualCard]} />),
  { 'card-name_on_card': 'IVAN PETROV' },
  'card-order-submit',
);

describe('CardOrderForm', () => {
  it('places the order and goes to its confirmation', async () => {
    const calls = mockApi({ '/card/order': [ok({ message: 'Order placed', order: placedOrder, ...walletEnvelope })] });
    fill();
    send();
    await vi.waitFor(() => expect(assign).toHaveBeenCalledWith('/cards/order/confirm?card=c1'));
    expect(calls[0]!.form).toEqual({ product: 'virtual-usd', currency: 'USD', name_on_card: 'IVAN PETROV' });
    expect(screen.getByTestId<HTMLButtonElement>('card-order-submit').disabled).toBe(true);
  });

  it('shows a refusal on its field', async () => {
    mockApi({ '/card/order': [refused(422, 'validation', 'Please check', { name_on_card: 'Latin letters only' })] });
    fill();
    send();
    expect((await screen.findByRole('alert')).textContent).toBe('Latin letters only');
    expectOnItsField('card-name_on_card');
  });

  it('retries with the same key after 503 and uses a new one after a final answer', async () => {
    const calls = mockApi({
      '/card/order': [
        unavailable(),
        refused(409, 'insufficient_funds', 'Not enough money'),
        ok({ message: 'Order placed', order: placedOrder, ...walletEnvelope }),
      ],
    });
    fill();
    await expectKeyAcrossRetryAndRefusal(calls, send, () => vi.waitFor(() => expect(assign).toHaveBeenCalled()));
  });
});

describe('CardOrderConfirm', () => {
  const show = () => render(<CardOrderConfirm locale="en" messages={en} order={placedOrder} />);

  it('confirms the order and shows its new status', async () => {
    mockApi({ '/card/order/confirm': [ok({ order: { ...placedOrder, status: 'issuing' }, message: 'Order confirmed', ...walletEnvelope })] });
    show();
    fireEvent.click(screen.getByTestId('card-order-confirm-button'));
    expect((await screen.findByTestId('card-order-message')).textContent).toBe('Order confirmed');
    expect(screen.getByTestId('card-order-confirm').dataset.status).toBe('issuing');
  });

  it('shows a refusal', async () => {
    mockApi({ '/card/order/cancel': [refused(409, 'card_state', 'The order can no longer be cancelled')] });
    show();
    fireEvent.click(screen.getByTestId('card-order-cancel-button'));
    expect((await screen.findByTestId('form-error')).textContent).toBe('The order can no longer be cancelled');
  });

  it('keeps each action’s key across a 503 and renews it after a final answer', async () => {
    const calls = mockApi({
      '/card/order/confirm': [unavailable(), unavailable()],
      '/card/order/cancel': [refused(409, 'card_state', 'No'), unavailable()],
    });
    show();
    // The click disables both buttons until the answer is handled.
    const click = async (testId: string) => {
      fireEvent.click(screen.getByTestId(testId));
      expect(screen.getByTestId<HTMLButtonElement>(testId).disabled).toBe(true);
      await vi.waitFor(() => expect(screen.getByTestId<HTMLButtonElement>(testId).disabled).toBe(false));
    };
    await click('card-order-confirm-button');
    await click('card-order-cancel-button');
    await click('card-order-cancel-button');
    await click('card-order-confirm-button');
    const [confirm1, cancel1, cancel2, confirm2] = calls.map((call) => call.key);
    expect(confirm2).toBe(confirm1);
    expect(cancel1).not.toBe(confirm1);
    expect(cancel2).not.toBe(cancel1);
  });
});
