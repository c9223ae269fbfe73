import { formatAmount, type TWalletEnvelope } from '@obmen/shared';
import { statement, type Queryable } from '../../db/index.ts';
import { AppError } from '../../errors.ts';
import { currencies } from '../currencies/service.ts';

/** What the SQL function wallet_state(user) answers (core/sql/functions/wallet_state.sql). */
export type TWalletState = {
  account_id: number;
  last: string | null;
  display: { code: string; precision: number; logo: string };
  total: string;
  /** [currency, precision, logo, available balance, held balance] in minor units */
  wallets: Array<[string, number, string, string, string?]>;
};

export type { TWalletEnvelope };

/** A wallet's number: stable per user and currency, e.g. "12345678-BTC". */
export function walletNumber(accountId: number, currency: string): string {
  return `${accountId}-${currency}`;
}

export function formatWalletState(state: TWalletState): TWalletEnvelope {
  return {
    wallets: state.wallets.map(([currency, precision, logo, balance, held]) => ({
      number: walletNumber(state.account_id, currency),
      currency,
      logo,
      balance: formatAmount(balance, precision),
      held: formatAmount(held ?? '0', precision),
      last_exchange: currency === state.last,
    })),
    total_balance: {
      currency: state.display.code,
      amount: formatAmount(state.total, state.display.precision),
      logo: state.display.logo,
    },
  };
}

const WALLET_STATE = statement('wallet_state', 'SELECT wallet_state($1) AS state');

/**
 * The envelope keys `wallets` and `total_balance` of a user (spec §3): every enabled currency
 * with its available balance and its held one (holds), the last exchanged one flagged, and the total in the user's display
 * currency (USD unless chosen) at mid rates, rounded down, held money included. One round trip. Every call that
 * changes balances answers with this; GET /api/auth/check too.
 */
export async function getWalletEnvelope(db: Queryable, userId: string): Promise<TWalletEnvelope> {
  const [row] = await db.query<{ state: TWalletState | null }>(WALLET_STATE, [userId]);
  if (!row?.state) return { wallets: [], total_balance: { currency: 'USD', amount: '0.00', logo: '' } };
  return formatWalletState(row.state);
}

/** POST /api/wallets/display_currency: total_balance in another enabled currency. */
export async function setDisplayCurrency(db: Queryable, userId: string, code: string): Promise<TWalletEnvelope> {
  const currency = (await currencies(db)).get(code);
  if (!currency?.enabled) {
    throw new AppError('currency_disabled', { vars: { currency: code }, fields: { currency: 'money.currency_disabled' } });
  }
  await db.query(
    `INSERT INTO wallet_settings (user_id, display_currency) VALUES ($1, $2)
     ON CONFLICT (user_id) DO UPDATE SET display_currency = EXCLUDED.display_currency`,
    [userId, code],
  );
  return getWalletEnvelope(db, userId);
}
