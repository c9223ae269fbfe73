// @vitest-environment happy-dom
import { fireEvent, render, screen } from '@testing-library/react';
import { describe, expect, it, vi } from 'vitest';
import { DICTIONARIES, type TCurrencyInfo, type TExchangePair, type TExchangeQuote } from '@obmen/shared';
import ExchangeForm from '../../src/islands/ExchangeForm.tsx';
import { walletEnvelope } from './fixtures.ts';
import { expectRetriedThenRenewed, mockApi, ok, refused, resetAfterEach, UNAVAILABLE, unavailable } from './api-mock.ts';

const en = DICTIONARIES.en;
const usd: TCurrencyInfo = { code: 'USD', kind: 'fiat', precision: 2, name: 'US dollar', logo: '/image/usd.svg' };
const eur: TCurrencyInfo = { code: 'EUR', kind: 'fiat', precision: 2, name: 'Euro', logo: '/image/eur.svg' };
const pair: TExchangePair = {
  src: 'USD',
  dst: 'EUR',
  src_logo: '',
  dst_logo: '',
  rate: '0.9',
  rate_inverse: '1.11',
  fee_percent: '1',
  fee_fixed: '0',
  cost_percent: '0.01',
  min: '1.00',
  max: null,
};
const quote = (token: string, receive = '89.10'): TExchangeQuote => ({
  src: 'USD',
  dst: 'EUR',
  amount: '100.00',
  amount_receive: receive,
  fee: '1.00',
  rate: '0.9',
  rate_inverse: '1.11',
  cost: '1.00',
  cost_percent: '0.01',
  limits: { min: '1.00', max: null },
  expires_at: '2026-01-01T10:00:30Z',
  expires_in: 30,
  token,
  balance: '500.00',
  sufficient: true,
});
const exchanged = ok({
  message: 'Exchanged',
  exchange: {
    id: 'x1',
    batch_id: null,
    src: 'USD',
    dst: 'EUR',
    amount: '100.00',
    amount_receive: '89.10',
    fee: '1.00',
    rate: '0.9',
    status: 'completed',
    error: null,
    created_at: '2026-01-01T10:00:00Z',
  },
  ...walletEnvelope,
});

/** The page opened with ?amount=100: the quote is asked once the island is up. */
async function quoted() {
  render(<ExchangeForm locale="en" messages={en} pair={pair} src={usd} dst={eur} currencies={[usd, eur]} pairs={['USD/EUR']} signedIn initialAmount="100" />);
  await vi.waitFor(() => expect(screen.getByTestId('exchange-quote').dataset.state).toBe('ready'));
}
const confirm = () => fireEvent.click(screen.getByTestId('exchange-confirm'));

resetAfterEach();

describe('ExchangeForm', () => {
  it('quotes the typed amount, confirms it once and shows the result', async () => {
    const calls = mockApi({ '/exchange/check': [ok({ quote: quote('q1') })], '/exchange/USD/EUR': [exchanged] });
    await quoted();
    expect(screen.getByTestId<HTMLInputElement>('exchange-amount-receive').value).toBe('89.1');
    expect(screen.getByTestId('quote-timer').textContent).toContain('30');
    confirm();
    expect((await screen.findByTestId('exchange-result-message')).textContent).toBe('Exchanged');
    expect(calls[1]).toMatchObject({ path: '/exchange/USD/EUR', form: { quote: 'q1' }, key: expect.any(String) });
  });

  it('shows a refusal of the quote on its field', async () => {
    mockApi({ '/exchange/check': [refused(422, 'amount_too_large', 'The maximum is 50 USD', { amount: 'Above the maximum' })] });
    render(<ExchangeForm locale="en" messages={en} pair={pair} src={usd} dst={eur} currencies={[usd, eur]} pairs={['USD/EUR']} signedIn initialAmount="100" />);
    expect((await screen.findByTestId('error-amount')).textContent).toBe('The maximum is 50 USD');
    expect(screen.getByTestId('exchange-amount').getAttribute('aria-invalid')).toBe('true');
  });

  it('confirms again with the same key after 503; a refusal bringing a fresh quote shows it, confirmed with a new key', async () => {
    const calls = mockApi({
      '/exchange/check': [ok({ quote: quote('q1') })],
      '/exchange/USD/EUR': [
        unavailable(),
        { status: 409, body: { status: 'error', code: 'rate_changed', message: 'The rate changed', quote: quote('q2', '88.00') } },
        exchanged,
      ],
    });
    await quoted();
    confirm();
    expect((await screen.findByTestId('form-error')).textContent).toBe(UNAVAILABLE);
    confirm();
    expect((await screen.findByTestId('exchange-notice')).textContent).toBe('The rate changed');
    expect(screen.getByTestId<HTMLInputElement>('exchange-amount-receive').value).toBe('88');
    confirm();
    await screen.findByTestId('exchange-result');
    const sends = calls.filter((call) => call.path === '/exchange/USD/EUR');
    expect(sends.map((call) => call.form.quote)).toEqual(['q1', 'q1', 'q2']);
    expectRetriedThenRenewed(sends.map((call) => call.key));
  });
});
