// @vitest-environment happy-dom
import { fireEvent, render, screen } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { DICTIONARIES, type TTransferCurrency } from '@obmen/shared';
import TransferForm from '../../src/islands/TransferForm.tsx';
import { walletEnvelope } from './fixtures.ts';
import { expectRetriedThenRenewed, mockApi, ok, refused, UNAVAILABLE, unavailable, resetAfterEach } from './api-mock.ts';

const en = DICTIONARIES.en;
const usd: TTransferCurrency = { code: 'USD', logo: '', precision: 2, min: '1.00', max: null, fee_percent: '1', fee_fixed: '0', balance: '500.00' };
const checked = ok({
  recipient: { account_id: 12345678, name: 'I*** P***' },
  currency: 'USD',
  amount: '100.00',
  fee: '1.00',
  total: '101.00',
  balance: '500.00',
  second_factor: false,
  totp: false,
});
const sent = ok({
  message: 'Transfer sent',
  transfer: {
    id: 't1',
    direction: 'out',
    account_id: 12345678,
    name: 'I*** P***',
    currency: 'USD',
    amount: '100.00',
    fee: '1.00',
    comment: null,
    status: 'completed',
    created_at: '2026-01-01T10:00:00Z',
  },
  ...walletEnvelope,
});

function fill() {
  render(<TransferForm locale="en" messages={en} currencies={[usd]} />);
  fireEvent.change(screen.getByTestId('transfer-account'), { target: { value: '12345678' } });
  fireEvent.change(screen.getByTestId('transfer-amount'), { target: { value: '100' } });
}
const checkForm = async () => {
  fireEvent.click(screen.getByTestId('transfer-check-button'));
  await screen.findByTestId('transfer-send');
};
const send = () => fireEvent.click(screen.getByTestId('transfer-send'));

resetAfterEach();

describe('TransferForm', () => {
  it('checks the form, shows the total, sends it once and shows the result', async () => {
    const calls = mockApi({ '/transfer/check': [checked], '/transfer': [sent] });
    fill();
    await checkForm();
    expect(screen.getByTestId('transfer-total').textContent).toContain('101.00');
    send();
    expect((await screen.findByTestId('transfer-result-message')).textContent).toBe('Transfer sent');
    expect(calls[1]).toMatchObject({
      path: '/transfer',
      form: { account_id: '12345678', currency: 'USD', amount: '100', comment: '' },
      key: expect.any(String),
    });
  });

  it('shows a refusal of the check on its field', async () => {
    mockApi({ '/transfer/check': [refused(404, 'recipient_not_found', 'No account with this number', { account_id: 'Not found' })] });
    fill();
    fireEvent.click(screen.getByTestId('transfer-check-button'));
    expect((await screen.findByTestId('error-account_id')).textContent).toBe('No account with this number');
    expect(screen.getByTestId('transfer-account').getAttribute('aria-invalid')).toBe('true');
  });

  it('sends again with the same key after 503; a final refusal ends the checked form and the next one has a new key', async () => {
    const calls = mockApi({
      '/transfer/check': [checked, checked],
      '/transfer': [unavailable(), refused(409, 'insufficient_funds', 'Not enough money', { amount: 'Not enough' }), sent],
    });
    fill();
    await checkForm();
    send();
    expect((await screen.findByTestId('form-error')).textContent).toBe(UNAVAILABLE);
    send();
    expect((await screen.findByTestId('error-amount')).textContent).toBe('Not enough money');
    expect(screen.queryByTestId('transfer-check')).toBeNull();
    await checkForm();
    send();
    await screen.findByTestId('transfer-result');
    expectRetriedThenRenewed(calls.filter((call) => call.path === '/transfer').map((call) => call.key));
  });

  it('with 2FA on asks for the code; a wrong code keeps the checked transfer to try again', async () => {
    const guarded = ok({ ...(checked.body as Record<string, unknown>), second_factor: true, totp: true });
    const calls = mockApi({
      '/transfer/check': [guarded],
      '/transfer': [refused(400, 'second_factor_invalid', 'That code did not work', { code: 'Wrong or already used code' }), sent],
    });
    fill();
    await checkForm();
    fireEvent.change(screen.getByTestId('transfer-code'), { target: { value: '000000' } });
    send();
    expect((await screen.findByText('That code did not work')).id).toBe('tf-code-error');
    expect(screen.getByTestId('transfer-check')).toBeTruthy();
    fireEvent.change(screen.getByTestId('transfer-code'), { target: { value: '123456' } });
    send();
    await screen.findByTestId('transfer-result');
    const sends = calls.filter((call) => call.path === '/transfer');
    expect(sends.map((call) => call.form?.code)).toEqual(['000000', '123456']);
  });

  it('with passkeys alone (no TOTP) shows no code field: the passkey is the only proof, and a send without it says so above the form', async () => {
    mockApi({
      '/transfer/check': [ok({ ...(checked.body as Record<string, unknown>), second_factor: true, totp: false })],
      '/transfer': [refused(400, 'second_factor_required', 'Confirm with your passkey', { code: 'This field is required.' })],
    });
    fill();
    await checkForm();
    expect(screen.getByTestId('transfer-check')).toBeTruthy();
    expect(screen.queryByTestId('transfer-code')).toBeNull();
    send();
    expect((await screen.findByTestId('form-error')).textContent).toBe('Confirm with your passkey');
    expect(screen.getByTestId('transfer-check')).toBeTruthy();
  });
});
