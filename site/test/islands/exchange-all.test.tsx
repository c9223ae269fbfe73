// @vitest-environment happy-dom
import { fireEvent, render, screen } from '@testing-library/react';
import { describe, expect, it, vi } from 'vitest';
import { DICTIONARIES, type TExchangeAllLeg, type TExchangeBatch } from '@obmen/shared';
import ExchangeAll from '../../src/islands/ExchangeAll.tsx';
import { walletEnvelope } from './fixtures.ts';
import { mockApi, ok, refused, UNAVAILABLE, unavailable, resetAfterEach } from './api-mock.ts';

const en = DICTIONARIES.en;
const leg = (src: string, status: TExchangeAllLeg['status'] = 'planned'): TExchangeAllLeg => ({
  src,
  amount: '1.00',
  amount_receive: '100.00',
  fee: '0.01',
  rate: '100',
  status,
  exchange_id: null,
  error_code: null,
  error: null,
});
const batch = (status: TExchangeBatch['status'], legs: TExchangeAllLeg[]): TExchangeBatch => ({
  id: 'b1',
  currency: 'USD',
  status,
  amount_receive: '200.00',
  legs,
  created_at: '2026-01-01T10:00:00Z',
});
const currencies = ['EUR', 'BTC'].map((code) => ({ code, kind: 'fiat' as const, precision: 2, name: code, logo: `/image/${code}.svg` }));
const preview = batch('empty', [leg('EUR'), leg('BTC')]);
const done = ok({ message: 'All exchanged', batch: batch('completed', [leg('EUR', 'completed'), leg('BTC', 'completed')]), ...walletEnvelope });

const show = () => render(<ExchangeAll locale="en" messages={en} currency="USD" currencies={currencies} preview={preview} />);
const confirm = () => fireEvent.click(screen.getByTestId('exchange-all-confirm'));

resetAfterEach();

describe('ExchangeAll', () => {
  it('exchanges the chosen wallets and reports each leg', async () => {
    const calls = mockApi({ '/exchange/all/USD': [done] });
    show();
    confirm();
    expect((await screen.findByTestId('exchange-all-message')).textContent).toBe('All exchanged');
    expect(screen.getByTestId('exchange-all-result').dataset.status).toBe('completed');
    expect(calls[0]).toMatchObject({ method: 'POST', form: { currencies: 'BTC,EUR' }, key: expect.any(String) });
  });

  it('shows a refusal above the confirm button', async () => {
    mockApi({ '/exchange/all/USD': [refused(409, 'rates_stale', 'Rates changed, refresh the preview')] });
    show();
    confirm();
    expect((await screen.findByTestId('form-error')).textContent).toBe('Rates changed, refresh the preview');
  });

  it('replays the same selection with its key after 503, and another selection gets another key', async () => {
    const calls = mockApi({ '/exchange/all/USD': [unavailable(), unavailable(), refused(409, 'rates_stale', 'No'), done] });
    show();
    confirm();
    expect((await screen.findByTestId('form-error')).textContent).toBe(UNAVAILABLE);
    confirm();
    await vi.waitFor(() => expect(calls).toHaveLength(2));
    await vi.waitFor(() => expect(screen.getByTestId<HTMLButtonElement>('exchange-all-confirm').disabled).toBe(false));
    fireEvent.click(screen.getByTestId('leg-check-BTC'));
    confirm();
    expect(await screen.findByText('No')).toBeTruthy();
    confirm();
    await screen.findByTestId('exchange-all-result');
    const [first, retry, other, afterFinal] = calls;
    expect(retry!.key).toBe(first!.key);
    expect(other!.form.currencies).toBe('EUR');
    expect(other!.key).not.toBe(first!.key);
    expect(afterFinal!.key).not.toBe(other!.key);
  });
});
