// @vitest-environment happy-dom
import { render, screen } from '@testing-library/react';
import { describe, expect, it, vi } from 'vitest';
import { DICTIONARIES } from '@obmen/shared';
import PurchaseForm from '../../src/islands/PurchaseForm.tsx';
import { formUnderTest, mockApi, ok, refused, UNAVAILABLE, unavailable, stubNavigation } from './api-mock.ts';
import { openedPayment, paymentLimits, purchaseQuote } from './fixtures.ts';

const en = DICTIONARIES.en;
const opened = { payment: openedPayment({ direction: 'purchase', pay_url: '/sandbox/card/p2', url: '/purchase/p2' }), quote: purchaseQuote };
const quoted = ok({
  ok: true,
  currency: 'USD',
  limits: paymentLimits,
  message: null,
  fee: '1.00',
  receive: '99.00',
  fields: {},
  quote: { buy: 'BTC', receive: '0.001', rate: '99000', rate_inverse: '0.0000101', fee: '0' },
});
const assign = stubNavigation();

const { fill, send } = formUnderTest(
  () =>
    render(<PurchaseForm locale="en" messages={en} ps="card-usd" buy="BTC" options={[{ currency: 'USD', min: '10', max: '1000' }]} initialCurrency="USD" />),
  { 'purchase-amount': '100' },
  'purchase-submit',
);
/** The quote asked as typed may come at any time in a test: it always answers. */
const routes = (replies: ReturnType<typeof ok>[]) => ({ '/purchase/integration_json': replies, '/purchase/check': [quoted, quoted, quoted] });

describe('PurchaseForm', () => {
  it('shows the quote as typed, opens the purchase and goes to the card page', async () => {
    const calls = mockApi(routes([ok(opened)]));
    fill();
    expect((await screen.findByTestId('purchase-receive', {}, { timeout: 2000 })).textContent).toContain('0.001');
    send();
    await vi.waitFor(() => expect(assign).toHaveBeenCalledWith('/sandbox/card/p2'));
    expect(calls.find((call) => call.path === '/purchase/integration_json')!.form).toEqual({ ps: 'card-usd', currency: 'USD', buy: 'BTC', amount: '100' });
  });

  it('shows a refusal on the amount', async () => {
    mockApi(routes([refused(422, 'amount_too_large', 'The maximum is 50 USD', { amount: 'Above the maximum' })]));
    fill();
    send();
    expect((await screen.findByTestId('error-amount')).textContent).toBe('The maximum is 50 USD');
    expect(screen.queryByTestId('form-error')).toBeNull();
  });

  it('can be sent again after 503; opening a purchase moves no money, so it carries no key', async () => {
    const calls = mockApi(routes([unavailable(), ok(opened)]));
    fill();
    send();
    expect((await screen.findByTestId('form-error')).textContent).toBe(UNAVAILABLE);
    send();
    await vi.waitFor(() => expect(assign).toHaveBeenCalled());
    expect(calls.filter((call) => call.path === '/purchase/integration_json').map((call) => call.key)).toEqual([null, null]);
  });
});
