import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { divFloor, parseAmount, parseDecimal, pow10 } from '@obmen/shared';
import { ENGINES, build } from '../../helpers.ts';
import { pairTerms } from '../../fixtures.ts';
import { costFraction, quoteCost, quoteFromPay, type TPairTerms } from '../../../src/domains/rates/quote.ts';

/** The fee and the spread shown together, against the mid-market rate. */

const terms = (overrides: Partial<TPairTerms> = {}) => pairTerms({ src: 'USD', dst: 'EUR', rate: '2', spread: '0.01', ...overrides });

describe('the whole cost of an exchange', () => {
  it('combines spread and fee: 1 − (1 − spread)(1 − fee), exactly', () => {
    expect(costFraction(terms())).toBe('0.01099');
    expect(costFraction(terms({ spread: '0', feePercent: '0' }))).toBe('0');
    expect(costFraction(terms({ spread: '0.005', feePercent: '0.001' }))).toBe('0.005995');
  });

  it('a quote costs its payment less the market value of what it receives, never understated', () => {
    const pair = terms();
    const amounts = quoteFromPay(pair, { src: 2, dst: 2 }, 100_000n);
    // 1000.00 USD: fee 1.00, the rest at 2 × 0.99 gives 1978.02 EUR, worth 989.01 USD at mid.
    expect(amounts.receive).toBe(197_802n);
    expect(quoteCost(pair, { src: 2, dst: 2 }, amounts)).toEqual({ cost: 1099n, fraction: '0.011' });
  });

  it('a fixed fee and the rounding count too; the share is rounded up', () => {
    const pair = terms({ feeFixed: 50n, rate: '3' });
    const amounts = quoteFromPay(pair, { src: 2, dst: 8 }, 1_000n);
    const { cost, fraction } = quoteCost(pair, { src: 2, dst: 8 }, amounts);
    const worth = divFloor(amounts.receive * pow10(2), pow10(8) * 3n);
    expect(cost).toBe(1_000n - worth);
    expect(cost).toBeGreaterThan(50n);
    const share = parseDecimal(fraction);
    expect((share.num * 1_000n * 10_000n) / pow10(share.scale)).toBeGreaterThanOrEqual(cost * 10_000n);
  });
});

describe.each(ENGINES)('the whole cost and currency names on the wire (%s)', (engine) => {
  let ctx: Awaited<ReturnType<typeof build>>;
  beforeAll(async () => {
    ctx = await build(engine);
  });
  afterAll(() => ctx.close());

  it('pairs and landing quotes carry cost_percent; the quote’s cost matches its amounts at mid', async () => {
    const list = (await ctx.app.inject({ url: '/api/exchange/list?search=USDT/BTC' })).json();
    const pair = list.pairs.find((p: { dst: string }) => p.dst === 'BTC');
    expect(parseDecimal(pair.cost_percent).num).toBeGreaterThan(0n);
    const res = await ctx.app.inject({ method: 'POST', url: '/api/exchange/landing', payload: { src: 'USDT', dst: 'BTC', amount: '1000' } });
    expect(res.statusCode).toBe(200);
    const quote = res.json().quote;
    const cost = parseAmount(quote.cost, 6);
    expect(cost).toBeGreaterThan(parseAmount(quote.fee, 6));
    expect(cost).toBeLessThan(parseAmount('1000', 6));
  });

  it('currency names follow the reader’s language', async () => {
    const names = async (locale: 'ru' | 'en') =>
      new Map(
        (await ctx.app.inject({ url: '/api/exchange/list', headers: { 'x-obmen-locale': locale } }))
          .json()
          .currencies.map((c: { code: string; name: string }) => [c.code, c.name]),
      );
    const [ru, en] = [await names('ru'), await names('en')];
    expect(ru.get('RUB')).toBe('Российский рубль');
    expect(en.get('RUB')).toBe('Russian rouble');
    expect(en.get('KZT')).toBe('Kazakhstani tenge');
    expect(ru.get('BTC')).toBe('Биткоин');
    const info = (await ctx.app.inject({ url: '/api/exchange/USD/RUB', headers: { 'x-obmen-locale': 'en' } })).json();
    expect(info.dst.name).toBe('Russian rouble');
  });
});
