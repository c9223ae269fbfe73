import type { TPaymentSystem } from '@obmen/shared';
import { callCore, CoreError, type TCoreCall, type TCoreLocals } from './core.ts';
import { CALLS } from '@obmen/shared/calls';

/** The currency a purchase page offers first when the address names none. */
export const DEFAULT_PURCHASE_CURRENCY = 'BTC';

/** GET /api/purchase/ps/{x} for a page: the ways to buy x; null when x is no enabled currency (the 404 page). */
export async function loadPurchaseSystems(locals: TCoreLocals, buy: string, call: TCoreCall): Promise<TPaymentSystem[] | null> {
  if (!/^[A-Z0-9]{2,10}$/.test(buy)) return null;
  try {
    return (await callCore(locals, CALLS['GET /api/purchase/ps/{x}'], { ...call, params: { x: buy } })).systems;
  } catch (err) {
    if (err instanceof CoreError && err.status >= 400 && err.status < 500 && err.status !== 401) return null;
    throw err;
  }
}
