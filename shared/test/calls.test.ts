import { describe, expect, it } from 'vitest';
import { AnswerMismatchError, buildPath, CALLS, checkAnswer, checkInput, ZEmptyBody } from '../src/calls.ts';
import { ZEmailBody } from '../src/auth.ts';

describe('the call declarations', () => {
  it('take their method and path from the key, every path under /api', () => {
    for (const [key, call] of Object.entries(CALLS)) {
      expect(`${call.method} ${call.path}`).toBe(key);
      expect(call.path).toMatch(/^\/api\//);
    }
    expect(CALLS['POST /api/withdraw/cancel/{id}']).toMatchObject({ method: 'POST', path: '/api/withdraw/cancel/{id}', encoding: 'form' });
  });

  it('declare a body for every call that sends one, and none for a GET', () => {
    for (const call of Object.values(CALLS)) if (call.method === 'GET') expect('body' in call, `${call.method} ${call.path}`).toBe(false);
  });
});

describe('buildPath', () => {
  it('fills in the parameters, encoded', () => {
    expect(buildPath(CALLS['GET /api/withdraw/status/{id}'], { params: { id: 'a/b c' } })).toBe('/api/withdraw/status/a%2Fb%20c');
    expect(buildPath(CALLS['POST /api/exchange/{src}/{dst}'], { params: { src: 'BTC', dst: 'USDT' } })).toBe('/api/exchange/BTC/USDT');
    expect(buildPath(CALLS['POST /api/chat/private/read/{id}'], { params: { id: 42 } })).toBe('/api/chat/private/read/42');
  });

  it('appends the query in the order given, encoded, leaving out what is undefined', () => {
    expect(buildPath(CALLS['GET /api/deposit/history'], { query: { currency: 'BTC', per_page: 10 } })).toBe('/api/deposit/history?currency=BTC&per_page=10');
    expect(buildPath(CALLS['GET /api/exchange/list'], { query: { search: 'a b&c' } })).toBe('/api/exchange/list?search=a%20b%26c');
    expect(buildPath(CALLS['GET /api/exchange/list'], { query: { search: undefined } })).toBe('/api/exchange/list');
    expect(buildPath(CALLS['GET /api/wallets'])).toBe('/api/wallets');
  });

  it('refuses a path whose parameter has no value', () => {
    expect(() => buildPath(CALLS['GET /api/card/details/{id}'], {})).toThrow('GET /api/card/details/{id}: no value for {id}');
  });
});

describe('checkAnswer', () => {
  const call = CALLS['GET /api/withdraw/status/{id}'];

  it('throws, naming the call and the issue, when an answer differs from its schema', () => {
    let caught: unknown;
    try {
      checkAnswer(call, { status: 'ok', withdrawal: { id: 7 } }, true);
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(AnswerMismatchError);
    const mismatch = caught as AnswerMismatchError;
    expect(mismatch.call).toBe('GET /api/withdraw/status/{id}');
    expect(mismatch.message).toContain('GET /api/withdraw/status/{id}: the answer does not match its schema');
    expect(mismatch.issues.map((issue) => issue.path.join('.'))).toContain('withdrawal.id');
  });

  it('lets a matching answer through, with keys the schema does not name (the BFF adds fv)', () => {
    expect(() => checkAnswer(CALLS['POST /api/security/sessions/{id}/revoke'], { status: 'ok', fv: 'abc' }, true)).not.toThrow();
  });

  it('checks nothing when told not to (production)', () => {
    expect(() => checkAnswer(call, { nothing: 'like it' }, false)).not.toThrow();
  });
});

describe('checkInput', () => {
  it('gives back the value as sent, not the parsed output, when it passes', () => {
    expect(checkInput(ZEmailBody, { email: '  a@b.co ' })).toEqual({ success: true, input: { email: '  a@b.co ' } });
  });

  it('gives the issues when it does not', () => {
    const result = checkInput(ZEmptyBody, { extra: 1 });
    expect(result.success).toBe(false);
  });
});
