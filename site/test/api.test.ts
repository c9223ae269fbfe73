// @vitest-environment happy-dom
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { DICTIONARIES } from '@obmen/shared';
import { AnswerMismatchError, CALLS } from '@obmen/shared/calls';
import { api, ApiError } from '../src/lib/api.ts';
import { VALIDATE_ANSWERS } from '../src/lib/answer-checks.ts';
import { callLight } from '../src/lib/light-call.ts';
import { setClientMessages } from '../src/lib/client-i18n.ts';

type TSent = { url: string; init: RequestInit };

/** `fetch` answering one JSON body with a status; records what was sent. */
function answerWith(status: number, body: unknown): TSent[] {
  const sent: TSent[] = [];
  vi.stubGlobal(
    'fetch',
    vi.fn(async (url: string, init: RequestInit) => {
      sent.push({ url, init });
      return new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });
    }),
  );
  return sent;
}

// The failures' messages come from the page's dictionary, as on a page.
beforeAll(() => setClientMessages(DICTIONARIES.en, 'en'));
afterEach(() => vi.unstubAllGlobals());

describe('api()', () => {
  it('validates answers in the unit tests', () => {
    expect(VALIDATE_ANSWERS).toBe(true);
  });

  it('fails loudly when an answer does not match its call', async () => {
    answerWith(200, { status: 'ok', withdrawal: { id: 'w1' } });
    const failure = api(CALLS['GET /api/withdraw/status/{id}'], { params: { id: 'w1' } });
    await expect(failure).rejects.toBeInstanceOf(AnswerMismatchError);
    await expect(failure).rejects.toThrow('GET /api/withdraw/status/{id}: the answer does not match its schema');
  });

  it('returns a matching answer as it came (the BFF-added fv included)', async () => {
    answerWith(200, { status: 'ok', blocked: true, fv: 'build-1' });
    const answer = await api(CALLS['POST /api/chat/private/block/{id}'], { params: { id: 5 }, body: { blocked: true } });
    expect(answer).toEqual({ status: 'ok', blocked: true, fv: 'build-1' });
  });

  it('sends a form call as a urlencoded form, fields left undefined out, on the built path', async () => {
    const sent = answerWith(200, { status: 'error', code: 'x', message: 'm' });
    await api(CALLS['POST /api/card/freeze'], { body: { card: 'c1' }, idempotencyKey: 'k1' }).catch(() => {});
    await api(CALLS['POST /api/exchange/check'], { body: { src: 'BTC', dst: undefined } }).catch(() => {});
    expect(sent[0]?.url).toBe('/api/card/freeze');
    expect(sent[0]?.init.method).toBe('POST');
    expect(String(sent[0]?.init.body)).toBe('card=c1');
    expect(new Headers(sent[0]?.init.headers).get('idempotency-key')).toBe('k1');
    expect(String(sent[1]?.init.body)).toBe('src=BTC');
  });

  it('sends a JSON call as JSON, and a GET with its query and no body', async () => {
    const sent = answerWith(500, null);
    await api(CALLS['POST /api/lang'], { body: { lang: 'en' } }).catch(() => {});
    await api(CALLS['GET /api/deposit/history'], { query: { currency: 'BTC', per_page: 10 } }).catch(() => {});
    expect(sent[0]?.init.body).toBe('{"lang":"en"}');
    expect(new Headers(sent[0]?.init.headers).get('content-type')).toBe('application/json');
    expect(sent[1]?.url).toBe('/api/deposit/history?currency=BTC&per_page=10');
    expect(sent[1]?.init).toMatchObject({ method: 'GET', body: null });
  });

  it('turns an error answer into an ApiError, unchecked against the success schema', async () => {
    answerWith(409, { status: 'error', code: 'not_cancellable', message: 'No longer' });
    await expect(api(CALLS['POST /api/withdraw/cancel/{id}'], { params: { id: 'w1' }, body: {} })).rejects.toMatchObject({
      constructor: ApiError,
      status: 409,
      code: 'not_cancellable',
    });
  });
});

describe('callLight() (the home page quote, without api()’s schemas up front)', () => {
  const quote = { src: 'USDT', dst: 'BTC', amount: '100', amount_receive: '0.001', fee: '1', rate: '0.00001', rate_inverse: '100000' };

  it('sends the form to the declared path and fails loudly on an answer that is not the declared one', async () => {
    const sent = answerWith(200, { status: 'ok', quote });
    const failure = callLight('POST /api/exchange/landing', { src: 'USDT', dst: 'BTC', amount: '100' });
    await expect(failure).rejects.toThrow('POST /api/exchange/landing: the answer does not match its schema');
    expect(sent[0]?.url).toBe('/api/exchange/landing');
    expect(sent[0]?.init.method).toBe('POST');
    expect(String(sent[0]?.init.body)).toBe('src=USDT&dst=BTC&amount=100');
  });

  it('gives an error answer’s code, message and fields, and nothing it cannot read', async () => {
    answerWith(400, { status: 'error', code: 'validation', message: 'Check the form', fields: { amount: 'Too small', bad: 1 } });
    expect(await callLight('POST /api/exchange/landing', { amount: '0' })).toEqual({
      ok: false,
      error: { code: 'validation', message: 'Check the form', fields: { amount: 'Too small' } },
    });
    answerWith(502, null);
    expect(await callLight('POST /api/exchange/landing', { amount: '1' })).toEqual({ ok: false, error: {} });
  });
});
