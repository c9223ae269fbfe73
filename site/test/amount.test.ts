import { describe, expect, it } from 'vitest';
import { displayAmount, groupAmount, isZeroAmount, percentText, shortDecimal, sumAmounts, trimAmount } from '../src/lib/amount.ts';
import { fieldErrors } from '../src/lib/field-errors.ts';

describe('amount display helpers (exact, string based)', () => {
  it('trims only zeros, keeping two decimals', () => {
    expect(trimAmount('1.500000000000000000')).toBe('1.50');
    expect(trimAmount('0.05015292')).toBe('0.05015292');
    expect(trimAmount('50000.00')).toBe('50000.00');
    expect(trimAmount('12')).toBe('12');
    expect(trimAmount('0.000000', 0)).toBe('0');
    expect(trimAmount('0.00152923', 0)).toBe('0.00152923');
  });

  it('groups thousands per language, the point stays a point', () => {
    expect(groupAmount('50000.00', 'ru')).toBe('50\u202f000.00');
    expect(groupAmount('5000.00', 'ru')).toBe('5000.00');
    expect(groupAmount('5000.00', 'en')).toBe('5,000.00');
    expect(groupAmount('1234567.5', 'en')).toBe('1,234,567.5');
    expect(groupAmount('-1234567', 'en')).toBe('-1,234,567');
    expect(displayAmount('100000.000000', 'en')).toBe('100,000.00');
  });

  it('shortens rates to significant digits without rounding up', () => {
    expect(shortDecimal('0.0000153076923076', 6)).toBe('0.0000153076');
    expect(shortDecimal('91.2844036696', 6)).toBe('91.2844');
    expect(shortDecimal('65326.63316', 8)).toBe('65326.633');
    expect(shortDecimal('1234567', 6)).toBe('1234567');
    expect(shortDecimal('0.999', 6)).toBe('0.999');
  });

  it('turns fractions into percentages exactly', () => {
    expect(percentText('0.001')).toBe('0.1');
    expect(percentText('0.0125')).toBe('1.25');
    expect(percentText('0')).toBe('0');
    expect(percentText('0.5')).toBe('50');
  });

  it('sums decimals of any scale exactly and tells zero', () => {
    expect(sumAmounts(['0.10', '0.005'])).toBe('0.105');
    expect(sumAmounts(['541.732725', '499.000500', '3230.516250'])).toBe('4271.249475');
    expect(sumAmounts([])).toBe('0');
    expect(isZeroAmount('0.000000')).toBe(true);
    expect(isZeroAmount('0.000001')).toBe(false);
  });
});

describe('fieldErrors', () => {
  it('puts a money refusal’s fuller message next to its one field', () => {
    expect(fieldErrors({ code: 'amount_too_large', message: 'The maximum is 2 BTC', fields: { amount: 'Above the maximum amount' } })).toEqual({ amount: 'The maximum is 2 BTC' });
  });
  it('keeps validation answers per field', () => {
    const fields = { account_id: 'Enter the 8-digit account number', amount: 'Enter an amount' };
    expect(fieldErrors({ code: 'validation', message: 'Please check the highlighted fields.', fields })).toEqual(fields);
    expect(fieldErrors({ code: 'validation', message: 'Please check', fields: { from: 'bad' } })).toEqual({ from: 'bad' });
  });
});
