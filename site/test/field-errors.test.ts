import { describe, expect, it } from 'vitest';
import { fieldErrors } from '../src/lib/field-errors.ts';

describe('fieldErrors', () => {
  it('puts a money refusal’s fuller message next to its one field', () => {
    expect(fieldErrors({ code: 'amount_too_large', message: 'The maximum is 2 BTC', fields: { amount: 'Above the maximum amount' } })).toEqual({
      amount: 'The maximum is 2 BTC',
    });
  });
  it('keeps validation answers per field', () => {
    const fields = { account_id: 'Enter the 8-digit account number', amount: 'Enter an amount' };
    expect(fieldErrors({ code: 'validation', message: 'Please check the highlighted fields.', fields })).toEqual(fields);
    expect(fieldErrors({ code: 'validation', message: 'Please check', fields: { from: 'bad' } })).toEqual({ from: 'bad' });
  });
});
