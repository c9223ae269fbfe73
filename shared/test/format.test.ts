import { describe, expect, it } from 'vitest';
import {
  displayAmount,
  displayDateTime,
  displayMoney,
  displayPairRate,
  displayPercent,
  displayRate,
  isAmountText,
  isZeroAmount,
  localizeVars,
  sumAmounts,
  translate,
  validTimeZone,
} from '../src/index.ts';

const NNBSP = '\u202f';

describe('displayAmount: exact decimal strings in the reader’s language', () => {
  it('ru: comma decimal, narrow no-break space from five digits', () => {
    expect(displayAmount('50000.00', 'ru')).toBe(`50${NNBSP}000,00`);
    expect(displayAmount('5000.00', 'ru')).toBe('5000,00');
    expect(displayAmount('1234567.5', 'ru')).toBe(`1${NNBSP}234${NNBSP}567,5`);
    expect(displayAmount('12.50', 'ru')).toBe('12,50');
  });

  it('en: point decimal, commas from four digits', () => {
    expect(displayAmount('5000.00', 'en')).toBe('5,000.00');
    expect(displayAmount('1234567.5', 'en')).toBe('1,234,567.5');
    expect(displayAmount('100000.000000', 'en')).toBe('100,000.00');
    expect(displayAmount('999.99', 'en')).toBe('999.99');
  });

  it('trims trailing zeros down to two decimals (as far as the precision has them), never cuts a digit', () => {
    expect(displayAmount('1.500000000000000000', 'en')).toBe('1.50');
    expect(displayAmount('0.00150000', 'ru')).toBe('0,0015');
    expect(displayAmount('0.000000000000000001', 'en')).toBe('0.000000000000000001');
    expect(displayAmount('12', 'en')).toBe('12');
    expect(displayAmount('0.00152923', 'en', 0)).toBe('0.00152923');
    expect(displayAmount('3.000000', 'en', 0)).toBe('3');
  });

  it('large numbers stay exact (no float on the way)', () => {
    expect(displayAmount('12345678901234567890123.45', 'en')).toBe('12,345,678,901,234,567,890,123.45');
    expect(displayAmount('9007199254740993.01', 'ru')).toBe(`9${NNBSP}007${NNBSP}199${NNBSP}254${NNBSP}740${NNBSP}993,01`);
  });

  it('negative amounts carry a true minus sign; zero has none', () => {
    expect(displayAmount('-1234.50', 'en')).toBe('\u22121,234.50');
    expect(displayAmount('-0.05', 'ru')).toBe('\u22120,05');
    expect(displayAmount('-0.00', 'en')).toBe('0.00');
    expect(displayAmount('0.000000', 'ru')).toBe('0,00');
    expect(displayAmount('0', 'en')).toBe('0');
  });

  it('refuses what is not an exact decimal instead of guessing', () => {
    expect(() => displayAmount('1e5', 'en')).toThrow(RangeError);
    expect(() => displayAmount('12,5', 'en')).toThrow(RangeError);
    expect(() => displayAmount('NaN', 'ru')).toThrow(RangeError);
  });

  it('joins an amount and its code with a no-break space', () => {
    expect(displayMoney('10095.00', 'USD', 'ru')).toBe(`10${NNBSP}095,00\u00a0USD`);
  });
});

describe('displayRate: digits that suit the size', () => {
  it('large rates get two decimals, so neighbours line up', () => {
    expect(displayRate('3184', 'ru')).toBe('3184,00');
    expect(displayRate('3216.0804', 'ru')).toBe('3216,08');
    expect(displayRate('65326.63316', 'en')).toBe('65,326.63');
    expect(displayRate('65326.635', 'en')).toBe('65,326.64');
  });
  it('rates from 1 to 100 get four decimals', () => {
    expect(displayRate('91.2844036696', 'en')).toBe('91.2844');
    expect(displayRate('1', 'ru')).toBe('1,0000');
  });
  it('tiny rates keep four significant digits, rounded', () => {
    expect(displayRate('0.000015307692', 'en')).toBe('0.00001531');
    expect(displayRate('0.0000153076923076', 'ru')).toBe('0,00001531');
    expect(displayRate('0.999', 'en')).toBe('0.9990');
    expect(displayRate('0.99999', 'en')).toBe('1.0000');
  });
  it('zero and negative', () => {
    expect(displayRate('0', 'en')).toBe('0.00');
    expect(displayRate('-0.0125', 'en')).toBe('\u22120.01250');
  });
  it('quotes a pair from the side that reads at least 1', () => {
    expect(displayPairRate({ src: 'BTC', dst: 'USDT', rate: '65326.63316', rate_inverse: '0.0000153076' }, 'ru')).toBe(
      `1\u00a0BTC ≈ 65${NNBSP}326,63\u00a0USDT`,
    );
    expect(displayPairRate({ src: 'USDT', dst: 'BTC', rate: '0.0000153076', rate_inverse: '65326.63316' }, 'en')).toBe('1\u00a0BTC ≈ 65,326.63\u00a0USDT');
  });
});

describe('displayPercent, sums and checks', () => {
  it('turns fractions into percentages exactly', () => {
    expect(displayPercent('0.001', 'ru')).toBe('0,1');
    expect(displayPercent('0.0125', 'en')).toBe('1.25');
    expect(displayPercent('0', 'en')).toBe('0');
    expect(displayPercent('0.5', 'ru')).toBe('50');
  });
  it('sums decimals of any scale exactly and tells zero', () => {
    expect(sumAmounts(['0.10', '0.005'])).toBe('0.105');
    expect(sumAmounts(['541.732725', '499.000500', '3230.516250'])).toBe('4271.249475');
    expect(sumAmounts([])).toBe('0');
    expect(isZeroAmount('0.000000')).toBe(true);
    expect(isZeroAmount('0.000001')).toBe(false);
  });
  it('one rule for typed amounts', () => {
    for (const ok of ['1', '1.5', '1,5', '.5', ',5', '10.']) expect(isAmountText(ok), ok).toBe(true);
    for (const bad of ['', '-1', '1e5', '1.2.3', 'abc', '1 000', '1'.repeat(41)]) expect(isAmountText(bad), bad).toBe(false);
  });
});

describe('messages', () => {
  it('amounts in message placeholders read the locale’s way; other values pass unchanged', () => {
    expect(localizeVars({ amount: '1234.50', currency: 'USD', precision: 2, id: '42' }, 'ru')).toEqual({
      amount: `1234,50`,
      currency: 'USD',
      precision: 2,
      id: '42',
    });
    expect(translate('ru', 'transfer.done', { amount: '12345.00', currency: 'USDT', name: 'A***' })).toContain(`12${NNBSP}345,00 USDT`);
    expect(translate('en', 'transfer.done', { amount: '12345.00', currency: 'USDT', name: 'A***' })).toContain('12,345.00 USDT');
  });
});

describe('displayPercent rounding', () => {
  it('rounds to the places asked, half up', () => {
    expect(displayPercent('0.005995', 'ru', 2)).toBe('0,6');
    expect(displayPercent('0.011', 'en', 2)).toBe('1.1');
    expect(displayPercent('0.0000499', 'en', 2)).toBe('0');
    expect(displayPercent('0.12345', 'en', 2)).toBe('12.35');
  });
});

describe('displayDateTime: one text for the server and the browser, in the reader’s zone', () => {
  const at = '2026-11-26T18:05:00Z';
  it('prints numeric parts in the zone given, and says UTC when that is the zone', () => {
    expect(displayDateTime(at, 'ru', 'Asia/Vladivostok')).toBe('27.11.2026, 04:05');
    expect(displayDateTime(at, 'en', 'Europe/Moscow')).toBe('26/11/2026, 21:05');
    expect(displayDateTime(at, 'ru', 'UTC')).toBe('26.11.2026, 18:05 UTC');
    expect(displayDateTime(at, 'en', 'Asia/Vladivostok', 'short')).toBe('27/11, 04:05');
    expect(displayDateTime(at, 'ru', 'Europe/Moscow', 'time')).toBe('21:05');
    expect(displayDateTime('not a date', 'ru', 'UTC')).toBe('not a date');
  });
  it('accepts only time zones the runtime knows (the cookie is the visitor’s)', () => {
    expect(validTimeZone('Asia/Vladivostok')).toBe('Asia/Vladivostok');
    expect(validTimeZone('Mars/Olympus')).toBeNull();
    expect(validTimeZone('<script>')).toBeNull();
    expect(validTimeZone(undefined)).toBeNull();
    expect(validTimeZone('x'.repeat(200))).toBeNull();
  });
});
