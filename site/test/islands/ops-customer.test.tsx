// @vitest-environment happy-dom
import { cleanup, fireEvent, render, screen, waitFor } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { DICTIONARIES, type TOpsCustomer } from '@obmen/shared';
import OpsCustomer from '../../src/islands/ops/OpsCustomer.tsx';
import { mockApi, ok, refused, resetAfterEach } from './api-mock.ts';

const customer: TOpsCustomer = {
  account_id: 12345674,
  email: 'ivan@example.com',
  email_confirmed: true,
  locale: 'ru',
  created_at: '2026-11-01T10:00:00.000Z',
  level: 1,
  personal: {
    revealed: false,
    first_name: 'I***',
    last_name: 'P***',
    middle_name: null,
    birth_date: '****-**-**',
    phone: '***67',
    country: 'RU',
    city: 'M***',
    address: null,
  },
  sign_in_blocked_at: null,
  withdrawals_blocked_until: null,
  verification: { status: 'approved', type: 'passport', submitted_at: '2026-11-02T10:00:00.000Z', decided_at: '2026-11-02T12:00:00.000Z' },
  wallets: [{ currency: 'USDT', balance: '125.5', held: '10' }],
  ledger: [{ transaction_id: '7', at: '2026-11-03T10:00:00.000Z', kind: 'deposit', memo: null, account: 'user', currency: 'USDT', amount: '135.5' }],
  payments: [],
  exchanges: [],
  transfers: [],
  cards: [],
  referral: { invited: 0, referred_by: null },
  security: {
    second_factor: { enabled: true, enabled_at: '2026-11-01T10:00:00Z', recovery_codes_left: 10, passkeys: 0 },
    sessions: [],
    sign_ins: [],
    withdrawals_blocked_until: null,
  },
  support: { messages: 2, last_at: null, reports_against: 0 },
  notes: [],
  audit: [],
};
const page = `/ops/customers/${customer.account_id}`;
const en = DICTIONARIES.en;

const requests = `/ops/requests?account_id=${customer.account_id}`;
const me = (permissions: string[]) => ok({ operator: { email: 'ann@obmen.test', locale: 'en', roles: [], permissions } });
/** What the money section asks: who the operator is and what waits about this customer (none). */
const moneyLoad = (permissions = ['customers.view']) => ({ '/ops/me': [me(permissions)], [requests]: [ok({ pending: [], decided: [] })] });

const show = () => render(<OpsCustomer locale="en" messages={DICTIONARIES.en} timeZone="UTC" accountId={customer.account_id} />);

resetAfterEach();

describe('OpsCustomer', () => {
  it('shows the customer masked, with wallets in the shared format', async () => {
    mockApi({ [page]: [ok({ customer })], ...moneyLoad() });
    show();
    expect((await screen.findByTestId('ops-customer-profile')).textContent).toContain('P*** I***');
    expect(screen.getByTestId('ops-customer-wallets').textContent).toContain('125.5');
    expect(screen.getByTestId('ops-customer-payments').textContent).toContain(en['ops.none']);
  });

  it('asks for the second factor when the core wants a fresh one, then runs the action again', async () => {
    const blocked = { ...customer, sign_in_blocked_at: '2026-11-27T09:00:00.000Z' };
    const calls = mockApi({
      [page]: [ok({ customer }), ok({ customer: blocked })],
      [`${page}/block-sign-in`]: [refused(403, 'step_up_required', en['ops.step_up_required']!), ok({})],
      '/ops/step-up': [refused(400, 'second_factor_invalid', 'Wrong code', { code: 'Wrong code' }), ok({})],
      ...moneyLoad(),
    });
    show();
    await screen.findByTestId('ops-customer-profile');
    fireEvent.change(screen.getByTestId('ops-action-reason'), { target: { value: 'fraud_suspected' } });
    fireEvent.click(screen.getByTestId('ops-action-submit'));
    const code = await screen.findByTestId('ops-step-up-code');
    expect(screen.queryByTestId('ops-action-submit')).toBeNull();
    fireEvent.change(code, { target: { value: '000000' } });
    fireEvent.click(screen.getByTestId('ops-step-up-submit'));
    expect((await screen.findByTestId('ops-step-up-error')).textContent).toBe('Wrong code');
    fireEvent.change(code, { target: { value: '123456' } });
    fireEvent.click(screen.getByTestId('ops-step-up-submit'));
    expect((await screen.findByTestId('ops-action-done')).textContent).toBe(en['ops.action_done']);
    expect((await screen.findByTestId('ops-customer-blocks')).textContent).toContain('Sign-in blocked since');
    expect(calls.filter((call) => call.path === `${page}/block-sign-in`)).toHaveLength(2);
  });

  it('names the refusal when the role may not act', async () => {
    mockApi({ [page]: [ok({ customer })], [`${page}/block-sign-in`]: [refused(403, 'ops_forbidden', en['ops.forbidden']!)], ...moneyLoad() });
    show();
    await screen.findByTestId('ops-customer-profile');
    fireEvent.click(screen.getByTestId('ops-action-submit'));
    expect((await screen.findByTestId('ops-action-error')).textContent).toBe(en['ops.forbidden']);
  });

  it('shows money only to an operator who may move it; a credit is proposed, not made', async () => {
    const pending = {
      id: '9',
      action: 'ledger.adjust',
      params: { account_id: customer.account_id, currency: 'USDT', amount: '50', direction: 'credit', reason: 'compensation', memo: 'outage' },
      subject: `customer:${customer.account_id}`,
      reason_code: 'customer_request',
      reason_text: null,
      proposed_by: 'ann@obmen.test',
      proposed_at: '2026-11-27T09:00:00.000Z',
      expires_at: '2026-11-28T09:00:00.000Z',
      state: 'pending',
      decided_by: null,
      decided_at: null,
      mine: true,
    };
    mockApi({ [page]: [ok({ customer })], ...moneyLoad() });
    show();
    await screen.findByTestId('ops-customer-profile');
    await screen.findByTestId('ops-customer-actions');
    expect(screen.queryByTestId('ops-customer-money')).toBeNull();
    cleanup();

    const calls = mockApi({
      [page]: [ok({ customer })],
      '/ops/me': [me(['customers.view', 'ledger.adjust']), me(['customers.view', 'ledger.adjust'])],
      [requests]: [ok({ pending: [], decided: [] }), ok({ pending: [pending], decided: [] })],
      '/ops/requests': [ok({ request: pending })],
    });
    show();
    const money = await screen.findByTestId('ops-customer-money');
    expect(money.textContent).toContain(en['ops.money_title']);
    fireEvent.change(screen.getByTestId('ops-money-amount'), { target: { value: '50' } });
    fireEvent.change(screen.getByTestId('ops-money-memo'), { target: { value: 'outage' } });
    fireEvent.click(screen.getByTestId('ops-money-submit'));
    expect((await screen.findByTestId('ops-money-done')).textContent).toBe(en['ops.request_proposed']);
    await waitFor(() => expect(calls.filter((call) => call.path === requests)).toHaveLength(2));
    await waitFor(() =>
      expect(screen.getByTestId('ops-money-pending').textContent).toContain('Credit 50\u00a0USDT to account 12345674 (Compensation): outage'),
    );
    expect(calls.filter((call) => call.path === '/ops/requests' && call.method === 'POST')).toHaveLength(1);
  });
});
