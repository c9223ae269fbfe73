import type { TCardDetails, TCardOrder } from '@obmen/shared';
import { callCore, CoreError, type TCoreCall, type TCoreLocals } from './core.ts';
import { CALLS } from '@obmen/shared/calls';

/** What the card islands get of the dictionary (pickMessages prefixes). */
export const CARDS_MESSAGE_PREFIXES = ['cardspage', 'cards', 'money', 'validation', 'error', 'passkey'] as const;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A 4xx of the core (another user's, unknown) is the page's 404: null. */
async function orNull<T>(work: () => Promise<T>): Promise<T | null> {
  try {
    return await work();
  } catch (err) {
    if (err instanceof CoreError && err.status >= 400 && err.status < 500 && err.status !== 401) return null;
    throw err;
  }
}

export function loadOrder(locals: TCoreLocals, id: string | null, call: TCoreCall): Promise<TCardOrder | null> {
  if (!id || !UUID.test(id)) return Promise.resolve(null);
  return orNull(async () => (await callCore(locals, CALLS['GET /api/card/order/{id}'], { ...call, params: { id } })).order);
}

export function loadCard(locals: TCoreLocals, id: string | undefined, call: TCoreCall): Promise<TCardDetails | null> {
  if (!id || !UUID.test(id)) return Promise.resolve(null);
  return orNull(async () => (await callCore(locals, CALLS['GET /api/card/details/{id}'], { ...call, params: { id } })).card);
}
