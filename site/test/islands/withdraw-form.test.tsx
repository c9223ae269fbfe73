// @vitest-environment happy-dom
import { render, screen } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { DICTIONARIES, factorFields } from '@obmen/shared';
import WithdrawForm from '../../src/islands/WithdrawForm.tsx';
import { requestedWithdrawal, walletEnvelope } from './fixtures.ts';
import { expectKeyAcrossRetryAndRefusal, expectOnItsField, formUnderTest, mockApi, ok, refused, unavailable } from './api-mock.ts';

const en = DICTIONARIES.en;

const { fill, send } = formUnderTest(
  () =>
    render(
      <WithdrawForm locale="en" messages={en} ps="card" currency="USD" fields={['card_number']} factor={{ code: false, passkey: false }} available="500.00" />,
    ),
  { 'withdraw-amount': '100', 'withdraw-card_number': '4111111111111111' },
  'withdraw-submit',
);

describe('WithdrawForm', () => {
  it('places the request and shows its status', async () => {
    const calls = mockApi({ '/withdraw/form/card': [ok({ message: 'Request sent', withdrawal: requestedWithdrawal, ...walletEnvelope })] });
    fill();
    send();
    expect((await screen.findByTestId('withdraw-message')).textContent).toBe(en['withdraw.placed']);
    expect(calls[0]).toMatchObject({ method: 'POST', form: { currency: 'USD', amount: '100', card_number: '4111111111111111' } });
  });

  it('shows a refusal on its field', async () => {
    mockApi({ '/withdraw/form/card': [refused(422, 'amount_too_large', 'The maximum is 50 USD', { amount: 'Above the maximum' })] });
    fill();
    send();
    expect((await screen.findByTestId('error-amount')).textContent).toBe('The maximum is 50 USD');
    expectOnItsField('withdraw-amount');
  });

  it('retries with the same key after 503 and uses a new one after a final answer', async () => {
    const calls = mockApi({
      '/withdraw/form/card': [
        unavailable(),
        refused(409, 'insufficient_funds', 'Not enough money'),
        ok({ message: 'Request sent', withdrawal: requestedWithdrawal, ...walletEnvelope }),
      ],
    });
    fill();
    await expectKeyAcrossRetryAndRefusal(calls, send, () => screen.findByTestId('withdraw-status'));
  });

  it('shows the code field only with TOTP on (factorFields): passkeys alone leave it out', () => {
    const form = (factor: { second_factor: boolean; totp: boolean }) =>
      render(<WithdrawForm locale="en" messages={en} ps="card" currency="USD" fields={['card_number']} factor={factorFields(factor)} available="500.00" />);
    const withTotp = form({ second_factor: true, totp: true });
    expect(screen.getByTestId('withdraw-code')).toBeTruthy();
    withTotp.unmount();
    form({ second_factor: true, totp: false });
    expect(screen.queryByTestId('withdraw-code')).toBeNull();
  });
});
