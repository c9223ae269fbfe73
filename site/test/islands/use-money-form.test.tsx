// @vitest-environment happy-dom
import type { ReactNode } from 'react';
import { act, renderHook } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { DICTIONARIES } from '@obmen/shared';
import { CALLS } from '@obmen/shared/calls';
import { api } from '../../src/lib/api.ts';
import { useMoneyForm, useQuoteCountdown } from '../../src/lib/use-money-form.ts';
import { IslandRoot } from '../../src/islands/IslandRoot.tsx';
import { mockApi, ok, refused, UNAVAILABLE, unavailable } from './api-mock.ts';

const wrapper = ({ children }: { children: ReactNode }) => (
  <IslandRoot locale="en" messages={DICTIONARIES.en}>
    {children}
  </IslandRoot>
);

function setup(fields: readonly string[] = ['amount']) {
  return renderHook(() => useMoneyForm(fields), { wrapper });
}

/** A call whose answer is a plain ok: the hook's behaviour does not depend on which call it sends. */
const send = (key: string) => api(CALLS['POST /api/security/sessions/{id}/revoke'], { params: { id: 's1' }, body: {}, idempotencyKey: key });
const PATH = '/security/sessions/s1/revoke';

afterEach(() => vi.unstubAllGlobals());

describe('useMoneyForm', () => {
  it('sends the same key again after 503 and a new one after the final answer', async () => {
    const calls = mockApi({ [PATH]: [unavailable(), ok({ message: 'done' }), ok({ message: 'again' })] });
    const { result } = setup();
    await act(() => result.current.submit(send));
    expect(result.current.formError).toBe(UNAVAILABLE);
    const answer = await act(() => result.current.submit(send));
    expect(answer).toMatchObject({ message: 'done' });
    await act(() => result.current.submit(send));
    expect(calls.map((call) => call.key)).toEqual([calls[0]!.key, calls[0]!.key, expect.any(String)]);
    expect(calls[2]!.key).not.toBe(calls[0]!.key);
  });

  it('keeps the key after no answer at all, and after 502 and 504', async () => {
    const calls = mockApi({ [PATH]: [refused(502, 'bad_gateway', 'x'), refused(504, 'timeout', 'x'), ok({})] });
    const { result } = setup();
    await act(() => result.current.submit(send));
    await act(() => result.current.submit(send));
    await act(() => result.current.submit(send));
    expect(new Set(calls.map((call) => call.key)).size).toBe(1);
  });

  it('puts a refusal on its field and renews the key after it', async () => {
    const calls = mockApi({ [PATH]: [refused(422, 'validation', 'Please check', { amount: 'Enter an amount' }), ok({})] });
    const { result } = setup();
    expect(await act(() => result.current.submit(send))).toBeUndefined();
    expect(result.current.errors).toEqual({ amount: 'Enter an amount' });
    expect(result.current.formError).toBe('');
    await act(() => result.current.submit(send));
    expect(calls[1]!.key).not.toBe(calls[0]!.key);
  });

  it('shows a refusal that names no field of the form above it', async () => {
    mockApi({ [PATH]: [refused(409, 'insufficient_funds', 'Not enough money', { balance: 'low' })] });
    const { result } = setup();
    await act(() => result.current.submit(send));
    expect(result.current.formError).toBe('Not enough money');
  });

  it('forgets the key of an unknown outcome once the form is edited', async () => {
    const calls = mockApi({ [PATH]: [unavailable(), ok({})] });
    const { result } = setup();
    await act(() => result.current.submit(send));
    act(() => result.current.edit('amount'));
    expect(result.current.formError).toBe('');
    await act(() => result.current.submit(send));
    expect(calls[1]!.key).not.toBe(calls[0]!.key);
  });

  it('keeps one key per scope', async () => {
    const calls = mockApi({ [PATH]: [unavailable(), ok({}), ok({})] });
    const { result } = setup();
    await act(() => result.current.submit(send, { scope: 'confirm' }));
    await act(() => result.current.submit(send, { scope: 'cancel' }));
    await act(() => result.current.submit(send, { scope: 'confirm' }));
    expect(calls[2]!.key).toBe(calls[0]!.key);
    expect(calls[1]!.key).not.toBe(calls[0]!.key);
  });

  it('sends once while a send is under way, and stays busy when the answer leaves the page', async () => {
    const calls = mockApi({ [PATH]: [ok({})] });
    const { result } = setup();
    await act(async () => {
      const first = result.current.submit(send, { leaving: true });
      expect(await result.current.submit(send)).toBeUndefined();
      await first;
    });
    expect(calls).toHaveLength(1);
    expect(result.current.busy).toBe(true);
  });

  it('shows the generic message for a failure that is not an answer of /api', async () => {
    const { result } = setup();
    await act(() => result.current.submit(() => Promise.reject(new TypeError('boom'))));
    expect(result.current.formError).toBe(DICTIONARIES.en['error.generic']);
  });
});

describe('useQuoteCountdown', () => {
  it('counts a quote down each second, starts again for a new quote, and is 0 without one', () => {
    vi.useFakeTimers();
    try {
      let quote: { expires_in: number } | null = { expires_in: 30 };
      const { result, rerender } = renderHook(() => useQuoteCountdown(quote));
      expect(result.current).toBe(30);
      act(() => vi.advanceTimersByTime(10_000));
      expect(result.current).toBe(20);
      act(() => vi.advanceTimersByTime(25_000));
      expect(result.current).toBe(0);
      quote = { expires_in: 30 };
      rerender();
      expect(result.current).toBe(30);
      quote = null;
      rerender();
      expect(result.current).toBe(0);
    } finally {
      vi.useRealTimers();
    }
  });
});
