import { describe, expect, it } from 'vitest';
import {
  MoneyFormatError,
  ZExchangeCheckBody,
  ZHistoryQuery,
  ZTransferBody,
  decimalToString,
  divCeil,
  divFloor,
  formatAmount,
  parseAmount,
  parseDecimal,
  stripTrailingZeros,
  tryParseAmount,
} from '../src/index.ts';

describe('parseAmount', () => {
  it('reads major units into exact minor units', () => {
    expect(parseAmount('0.0015', 8)).toBe(150_000n);
    expect(parseAmount('12.5', 2)).toBe(1250n);
    expect(parseAmount('12,50', 2)).toBe(1250n);
    expect(parseAmount(' 7 ', 0)).toBe(7n);
    expect(parseAmount('.5', 2)).toBe(50n);
    expect(parseAmount('3.', 2)).toBe(300n);
    expect(parseAmount('1.500', 2)).toBe(150n);
    expect(parseAmount('0', 6)).toBe(0n);
  });

  it('keeps 18 decimals and 38 digits exact (no float anywhere)', () => {
    expect(parseAmount('123456789012345678.123456789012345678', 18)).toBe(123456789012345678123456789012345678n);
    expect(parseAmount('0.1', 18) + parseAmount('0.2', 18)).toBe(parseAmount('0.3', 18));
    expect(parseAmount('9007199254740993', 0)).toBe(9007199254740993n);
  });

  it('refuses more decimals than the currency has, never rounding', () => {
    expect(() => parseAmount('0.001', 2)).toThrowError(MoneyFormatError);
    let thrown: unknown;
    try {
      parseAmount('0.123456789', 8);
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(MoneyFormatError);
    expect(thrown).toMatchObject({ key: 'money.amount_too_precise', vars: { precision: 8 } });
  });

  it('refuses what is not a plain amount', () => {
    for (const bad of ['', ' ', '.', '-1', '+1', '1e3', '1 000', '1.2.3', 'abc', '0x10', '1_000', 'NaN', 'Infinity', '1'.repeat(41)]) {
      expect(tryParseAmount(bad, 2), bad).toBeNull();
    }
  });
});

describe('stripTrailingZeros', () => {
  it('drops trailing zeros of the fraction only', () => {
    expect(stripTrailingZeros('1.000000')).toBe('1');
    expect(stripTrailingZeros('0.00150000')).toBe('0.0015');
    expect(stripTrailingZeros('100')).toBe('100');
    expect(stripTrailingZeros('100.00')).toBe('100');
    expect(stripTrailingZeros('-0.050')).toBe('-0.05');
  });
});

describe('formatAmount', () => {
  it('prints exactly the precision', () => {
    expect(formatAmount(150_000n, 8)).toBe('0.00150000');
    expect(formatAmount('1250', 2)).toBe('12.50');
    expect(formatAmount(0n, 2)).toBe('0.00');
    expect(formatAmount(7n, 0)).toBe('7');
    expect(formatAmount(-5n, 2)).toBe('-0.05');
    expect(formatAmount(123456789012345678123456789012345678n, 18)).toBe('123456789012345678.123456789012345678');
  });

  it('round-trips with parseAmount', () => {
    for (const [text, precision] of [
      ['0.00000001', 8],
      ['1000000.00', 2],
      ['0.000000000000000001', 18],
      ['42', 0],
    ] as const) {
      expect(formatAmount(parseAmount(text, precision), precision)).toBe(text);
    }
  });
});

describe('decimals and division', () => {
  it('parses and prints rates exactly', () => {
    expect(parseDecimal('0.0000153846')).toEqual({ num: 153846n, scale: 10 });
    expect(parseDecimal('65000.00')).toEqual({ num: 65000n, scale: 0 });
    expect(parseDecimal('-0.5')).toEqual({ num: -5n, scale: 1 });
    expect(decimalToString({ num: 1250n, scale: 3 })).toBe('1.25');
    expect(decimalToString({ num: 5n, scale: 0 })).toBe('5');
    expect(() => parseDecimal('1e5')).toThrow();
  });

  it('floors and ceils like mathematics, also below zero', () => {
    expect(divFloor(7n, 2n)).toBe(3n);
    expect(divCeil(7n, 2n)).toBe(4n);
    expect(divFloor(-7n, 2n)).toBe(-4n);
    expect(divCeil(-7n, 2n)).toBe(-3n);
    expect(divFloor(6n, 3n)).toBe(2n);
    expect(divCeil(6n, 3n)).toBe(2n);
    expect(() => divFloor(1n, 0n)).toThrow();
  });
});

describe('request schemas', () => {
  it('exchange check takes exactly one side, upper-cases codes, treats empty form fields as absent', () => {
    expect(ZExchangeCheckBody.parse({ src: 'usdt', dst: 'btc', amount: '100', amount_receive: '' })).toEqual({ src: 'USDT', dst: 'BTC', amount: '100' });
    const none = ZExchangeCheckBody.safeParse({ src: 'USDT', dst: 'BTC' });
    expect(none.success).toBe(false);
    expect(none.error?.issues[0]?.message).toBe('exchange.amount_required');
    expect(ZExchangeCheckBody.safeParse({ src: 'USDT', dst: 'BTC', amount: '1', amount_receive: '1' }).success).toBe(false);
    expect(ZExchangeCheckBody.safeParse({ src: 'BTC', dst: 'btc', amount: '1' }).success).toBe(false);
  });

  it('transfer reads an 8-digit account number, with spaces allowed', () => {
    expect(ZTransferBody.parse({ account_id: '1234 5678', currency: 'usdt', amount: '5' })).toEqual({ account_id: 12345678, currency: 'USDT', amount: '5' });
    expect(ZTransferBody.safeParse({ account_id: '123', currency: 'USDT', amount: '5' }).error?.issues[0]?.message).toBe('money.account_id_invalid');
    expect(ZTransferBody.safeParse({ account_id: '12345678', currency: 'USDT', amount: '-5' }).success).toBe(false);
  });

  it('history query has defaults and bounds', () => {
    expect(ZHistoryQuery.parse({})).toMatchObject({ page: 1, per_page: 20, format: 'json' });
    expect(ZHistoryQuery.parse({ page: '3', per_page: '50', from: '2026-01-01', currency: 'btc', format: 'csv' })).toMatchObject({
      page: 3,
      per_page: 50,
      from: '2026-01-01',
      currency: 'BTC',
      format: 'csv',
    });
    expect(ZHistoryQuery.safeParse({ per_page: '1000' }).success).toBe(false);
    expect(ZHistoryQuery.safeParse({ from: 'yesterday' }).success).toBe(false);
  });
});
