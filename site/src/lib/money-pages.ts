import type { TCurrencyInfo, TExchangeBatch } from '@obmen/shared';
import { callCore, CoreError, type TCoreCall, type TCoreLocals } from './core.ts';
import { CALLS } from '@obmen/shared/calls';

/** What each money island gets of the dictionary (pickMessages prefixes). */
export const EXCHANGE_MESSAGE_PREFIXES = ['exchangepage', 'exchange', 'money', 'validation', 'error'] as const;
export const TRANSFER_MESSAGE_PREFIXES = ['transferpage', 'transfer', 'money', 'validation', 'error', 'secondfactor', 'passkey'] as const;

/** Where a signed-out visitor of an account page goes: the login page, coming back afterwards. */
export function loginPath(url: URL): string {
  return `/login?next=${encodeURIComponent(url.pathname + url.search)}`;
}

export type TExchangeAllPreview = { currency: string; currencies: TCurrencyInfo[]; preview: TExchangeBatch };

/** GET /api/exchange/all[/{currency}] for a page; null when the currency is unknown or disabled (a 404). */
export async function loadExchangeAll(locals: TCoreLocals, currency: string | undefined, call: TCoreCall): Promise<TExchangeAllPreview | null> {
  if (currency !== undefined && !/^[A-Z0-9]{2,10}$/.test(currency)) return null;
  try {
    return await (currency
      ? callCore(locals, CALLS['GET /api/exchange/all/{currency}'], { ...call, params: { currency } })
      : callCore(locals, CALLS['GET /api/exchange/all'], call));
  } catch (err) {
    if (err instanceof CoreError && err.status >= 400 && err.status < 500 && err.status !== 401) return null;
    throw err;
  }
}
