// @vitest-environment happy-dom
import { fireEvent, render, screen } from '@testing-library/react';
import { describe, expect, it, vi } from 'vitest';
import { DICTIONARIES } from '@obmen/shared';
import type { TPaymentSystem } from '@obmen/shared/payments';
import DepositForm from '../../src/islands/DepositForm.tsx';
import { openedPayment } from './fixtures.ts';
import { mockApi, ok, refused, UNAVAILABLE, unavailable, resetAfterEach, stubNavigation } from './api-mock.ts';

const en = DICTIONARIES.en;
const system: TPaymentSystem = {
  id: 'card-usd',
  provider: 'sandbox-card',
  direction: 'deposit',
  name: { ru: 'Карта', en: 'Card' },
  logo: '',
  currency: 'USD',
  fee_percent: '1',
  fee_fixed: '0.00',
  min: '10.00',
  max: '1000.00',
  level: 0,
  locked: false,
  fields: [],
  confirmations: 0,
};
const opened = { payment: openedPayment({ pay_url: '/sandbox/card/p1', url: '/deposit/p1' }), address: null };
const assign = stubNavigation();

function fill(amount = '100') {
  render(<DepositForm locale="en" messages={en} system={system} />);
  fireEvent.change(screen.getByTestId('deposit-amount'), { target: { value: amount } });
}
const send = () => fireEvent.click(screen.getByTestId('deposit-submit'));

resetAfterEach();

describe('DepositForm', () => {
  it('shows the fee as typed, opens the deposit and goes to its payment page', async () => {
    const calls = mockApi({ '/deposit/integration_json': [ok(opened)] });
    fill();
    expect(screen.getByTestId('deposit-fee').textContent).toContain('1.00');
    send();
    await vi.waitFor(() => expect(assign).toHaveBeenCalledWith('/sandbox/card/p1'));
    expect(calls[0]!.form).toEqual({ ps: 'card-usd', currency: 'USD', amount: '100' });
  });

  it('names a too small amount before sending, and a server refusal on its field', async () => {
    const calls = mockApi({ '/deposit/integration_json': [refused(422, 'amount_too_large', 'The maximum today is 50 USD', { amount: 'Above the maximum' })] });
    fill('5');
    send();
    expect(screen.getByTestId('error-amount').textContent).toContain('10');
    expect(calls).toHaveLength(0);
    fireEvent.change(screen.getByTestId('deposit-amount'), { target: { value: '100' } });
    send();
    expect((await screen.findByTestId('error-amount')).textContent).toBe('The maximum today is 50 USD');
    expect(screen.queryByTestId('form-error')).toBeNull();
  });

  it('can be sent again after 503; opening a deposit moves no money, so it carries no key', async () => {
    const calls = mockApi({ '/deposit/integration_json': [unavailable(), ok(opened)] });
    fill();
    send();
    expect((await screen.findByTestId('form-error')).textContent).toBe(UNAVAILABLE);
    send();
    await vi.waitFor(() => expect(assign).toHaveBeenCalled());
    expect(calls.map((call) => call.key)).toEqual([null, null]);
  });
});
