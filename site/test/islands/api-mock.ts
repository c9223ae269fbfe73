import { cleanup, fireEvent, screen } from '@testing-library/react';
import { afterEach, beforeEach, expect, vi } from 'vitest';
import { DICTIONARIES } from '@obmen/shared';

/** One answer of the mocked /api: its HTTP status and JSON body. */
export type TReply = { status: number; body: unknown };
export type TCall = { path: string; method: string; key: string | null; form: Record<string, string> };

export const ok = (body: Record<string, unknown>): TReply => ({ status: 200, body: { status: 'ok', ...body } });
export const refused = (status: number, code: string, message: string, fields?: Record<string, string>): TReply => ({
  status,
  body: { status: 'error', code, message, ...(fields ? { fields } : {}) },
});
export const UNAVAILABLE = DICTIONARIES.en['error.upstream_unavailable_retry_same_key']!;
/** What the BFF answers a keyed call when the core did not: the outcome is unknown, the same key must be sent again. */
export const unavailable = (): TReply => refused(503, 'upstream_unavailable', UNAVAILABLE);

/**
 * Replaces `fetch` (the browser's boundary, below the island and its hooks): each path answers
 * its queued replies in order; a call nobody expected fails the test.
 */
export function mockApi(routes: Record<string, TReply[]>): TCall[] {
  const calls: TCall[] = [];
  vi.stubGlobal(
    'fetch',
    vi.fn(async (url: string, init: RequestInit = {}) => {
      const path = url.replace(/^\/api/, '');
      const headers = new Headers(init.headers);
      const form = init.body instanceof URLSearchParams ? Object.fromEntries(init.body) : {};
      calls.push({ path, method: init.method ?? 'GET', key: headers.get('idempotency-key'), form });
      const reply = routes[path]?.shift();
      if (!reply) throw new Error(`unexpected call to ${url}`);
      return new Response(JSON.stringify(reply.body), { status: reply.status, headers: { 'content-type': 'application/json' } });
    }),
  );
  return calls;
}

/** Each test of the file starts on a clean page with the real `fetch` and `location` back. */
export function resetAfterEach(): void {
  afterEach(() => {
    cleanup();
    vi.restoreAllMocks();
    vi.unstubAllGlobals();
  });
}

/** `location.assign`, recorded instead of leaving the test page (the forms that end on another page). */
export function stubNavigation() {
  const assign = vi.fn();
  beforeEach(() => {
    assign.mockReset();
    vi.spyOn(window.location, 'assign').mockImplementation(assign);
  });
  return assign;
}

/**
 * The key's life in a money island: the send after an unknown outcome carries the first key
 * again; the send after a final answer carries a new one.
 */
export function expectRetriedThenRenewed([first, retry, afterFinal]: (string | null)[]): void {
  expect(first).toEqual(expect.any(String));
  expect(retry).toBe(first);
  expect(afterFinal).toEqual(expect.any(String));
  expect(afterFinal).not.toBe(first);
}

/**
 * A form island under test: `fill` shows it and types `values` (by test id), `send` clicks its
 * submit button; each test of the file starts on a clean page (resetAfterEach).
 */
export function formUnderTest(show: () => void, values: Record<string, string>, submitTestId: string) {
  resetAfterEach();
  return {
    fill() {
      show();
      for (const [testId, value] of Object.entries(values)) fireEvent.change(screen.getByTestId(testId), { target: { value } });
    },
    send: () => fireEvent.click(screen.getByTestId(submitTestId)),
  };
}

/** A refusal shown where it belongs: its field is marked invalid, and nothing stands above the form. */
export function expectOnItsField(fieldTestId: string): void {
  expect(screen.getByTestId(fieldTestId).getAttribute('aria-invalid')).toBe('true');
  expect(screen.queryByTestId('form-error')).toBeNull();
}

/**
 * Three sends of a filled money form whose calls answer 503, a final 'Not enough money', then
 * success: the unknown outcome and the refusal are shown, `done` waits for what the success
 * shows, and the keys go as expectRetriedThenRenewed says.
 */
export async function expectKeyAcrossRetryAndRefusal(calls: TCall[], send: () => void, done: () => Promise<unknown>): Promise<void> {
  send();
  expect((await screen.findByTestId('form-error')).textContent).toBe(UNAVAILABLE);
  send();
  expect(await screen.findByText('Not enough money')).toBeTruthy();
  send();
  await done();
  expectRetriedThenRenewed(calls.map((call) => call.key));
}
