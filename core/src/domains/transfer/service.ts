import { formatAmount, type TTransferBody, type TTransferTerms, type TTransferCheck, type TTransferCurrency, type TTransferRecord } from '@obmen/shared';
import { statement, type Db, type Queryable } from '../../db/index.ts';
import { currencies, enabledCurrency, operatorCurrency, parseFraction, parseOperatorAmount, parseUserAmount } from '../currencies/service.ts';
import { AppError } from '../../errors.ts';
import { moneyError, withRetry } from '../../money-errors.ts';
import { batchedCall, type TBatchOutcome } from '../ledger/batch.ts';
import { ledgerCall } from '../ledger/service.ts';
import { requestHash } from '../idempotency/service.ts';
import { formatWalletState, type TWalletEnvelope, type TWalletState } from '../wallets/service.ts';
import { offerFeed } from '../events/service.ts';
import { totpEnabled, verifySecondFactor } from '../security/second-factor.ts';

export const TRANSFER_SCOPE = 'POST /api/transfer';

/** A transfer as stored by money_transfer_many(): amounts in minor units. */
type TRawTransfer = Omit<TTransferRecord, 'amount' | 'fee'> & { amount: string; fee: string };

async function formatTransfer(db: Queryable, raw: TRawTransfer): Promise<TTransferRecord> {
  const precision = (await currencies(db)).get(raw.currency)?.precision ?? 0;
  return { ...raw, amount: formatAmount(raw.amount, precision), fee: formatAmount(raw.fee, precision) };
}

/** GET /api/transfer: what can be sent, the limits and fees, and the user's balances. */
export async function transferInfo(db: Queryable, userId: string): Promise<{ currencies: TTransferCurrency[] }> {
  const rows = await db.query<{
    code: string;
    logo: string;
    precision: number;
    min: string;
    max: string | null;
    fee_percent: string;
    fee_fixed: string;
    balance: string;
  }>(
    `SELECT c.code, c.logo, c.precision, coalesce(t.min_amount, 1)::text AS min, t.max_amount::text AS max,
            coalesce(t.fee_percent, 0)::text AS fee_percent, coalesce(t.fee_fixed, 0)::text AS fee_fixed, coalesce(a.balance, 0)::text AS balance
     FROM currencies c
     LEFT JOIN transfer_settings t ON t.currency = c.code
     LEFT JOIN ledger_accounts a ON a.user_id = $1 AND a.currency = c.code
     WHERE c.enabled AND coalesce(t.enabled, true)
     ORDER BY c.position, c.code`,
    [userId],
  );
  return {
    currencies: rows.map((row) => ({
      code: row.code,
      logo: row.logo,
      precision: Number(row.precision),
      min: formatAmount(row.min, Number(row.precision)),
      max: row.max === null ? null : formatAmount(row.max, Number(row.precision)),
      fee_percent: row.fee_percent,
      fee_fixed: formatAmount(row.fee_fixed, Number(row.precision)),
      balance: formatAmount(row.balance, Number(row.precision)),
    })),
  };
}

/**
 * POST /api/transfer/check: the recipient's masked name, the fee and the total, or why not
 * (unknown account, yourself, limits, not enough money) as a 4xx naming the field.
 */
export async function checkTransfer(db: Queryable, userId: string, body: TTransferBody, secondFactor: boolean): Promise<TTransferCheck> {
  const currency = await enabledCurrency(db, body.currency);
  const amount = parseUserAmount(body.amount, currency);
  const [row] = await ledgerCall(db, () =>
    db.query<{ recipient_name: string; fee: string; balance: string }>(
      'SELECT recipient_name, fee::text AS fee, balance::text AS balance FROM transfer_prepare($1, $2, $3, $4)',
      [userId, body.account_id, currency.code, amount.toString()],
    ),
  );
  const fee = BigInt(row!.fee);
  const balance = BigInt(row!.balance);
  const format = (value: bigint) => formatAmount(value, currency.precision);
  if (balance < amount + fee) {
    throw moneyError('insufficient_funds', { currency: currency.code, balance: format(balance), needed: format(amount + fee) }, 'amount');
  }
  return {
    status: 'ok',
    recipient: { account_id: body.account_id, name: row!.recipient_name },
    currency: currency.code,
    amount: format(amount),
    fee: format(fee),
    total: format(amount + fee),
    balance: format(balance),
    second_factor: secondFactor,
    totp: secondFactor && (await totpEnabled(db, userId)),
  };
}

const MONEY_TRANSFER_MANY = statement(
  'money_transfer_many',
  'SELECT i, r FROM money_transfer_many($1::bigint[], $2::text[], $3::text[], $4::integer[], $5::text[], $6::numeric[], $7::text[])',
);

export type TTransferResult = { transfer: TTransferRecord; replayed: boolean } & TWalletEnvelope;

type TTransferItem = {
  userId: string;
  key: string;
  hash: string;
  accountId: TTransferBody['account_id'];
  currency: string;
  amount: string;
  comment: string | null;
};
type TTransferDone = { replayed: boolean; result: { transfer: TRawTransfer }; wallet: TWalletState; users?: string[] };
type TTransferAnswer = TTransferDone | { refused: string; detail: string | null };

/** A refusal of one item as the database error it would have been alone (ledgerCall reads it). */
function refusalError(answer: { refused: string; detail: string | null }): Error {
  return Object.assign(new Error(answer.refused), { code: 'OB000', detail: answer.detail ?? undefined });
}

/**
 * Concurrent transfers go out together (ledger/batch.ts): one money_transfer_many() call, one
 * commit, each item answered for itself. Deadlocks retry the whole batch (nothing of it was
 * committed). At most 48 items: each applied item is a subtransaction, and past 64 of them in
 * one transaction PostgreSQL's snapshots of every other session get slower.
 */
const transferInBatch = batchedCall<TTransferItem, TTransferDone>({
  max: 48,
  slots: 2,
  run: async (db, items) => {
    const column = <K extends keyof TTransferItem>(name: K) => items.map((item) => item[name]);
    const rows = await withRetry(() =>
      db.query<{ i: number; r: TTransferAnswer }>(MONEY_TRANSFER_MANY, [
        column('userId'),
        column('key'),
        column('hash'),
        column('accountId'),
        column('currency'),
        column('amount'),
        column('comment'),
      ]),
    );
    const answers = new Array<TBatchOutcome<TTransferDone>>(items.length);
    for (const { i, r } of rows) answers[i - 1] = 'refused' in r ? { error: refusalError(r) } : { value: r };
    return answers;
  },
});

/**
 * POST /api/transfer: moves the money in ONE round trip, shared with the transfers arriving at
 * the same moment (money_transfer_many(): idempotency key, checks, locks in id order, ledger,
 * record, the sender's wallets). The same key replays the first answer.
 *
 * `secondFactor` (2FA is on; the session says so, so a user without it pays no query): the code
 * or passkey of the body is checked and spent first, unless this key already has its answer —
 * a retry replays it, whose code the first attempt spent.
 */
export async function makeTransfer(
  db: Db,
  userId: string,
  key: string,
  body: TTransferBody,
  secondFactor: { nowMs: number } | null = null,
): Promise<TTransferResult> {
  const currency = await enabledCurrency(db, body.currency);
  const amount = parseUserAmount(body.amount, currency);
  const comment = body.comment ?? null;
  const hash = requestHash(TRANSFER_SCOPE, { account_id: body.account_id, currency: currency.code, amount, comment });
  if (secondFactor) {
    const [answered] = await db.query('SELECT 1 FROM idempotency_keys WHERE user_id = $1 AND key = $2 AND request_hash = $3 AND response IS NOT NULL', [
      userId,
      key,
      hash,
    ]);
    if (!answered) await verifySecondFactor(db, userId, body, secondFactor.nowMs);
  }
  const item = { userId, key, hash, accountId: body.account_id, currency: currency.code, amount: amount.toString(), comment };
  const { replayed, result, wallet, users } = await ledgerCall(db, () => transferInBatch(db, item));
  // Both users' "wallets" events were recorded with the transfer and are committed now.
  if (users) db.announce?.(users);
  if (!replayed) offerFeed(db, { kind: 'transfer', currency: currency.code, amount: formatAmount(amount, currency.precision) });
  return { transfer: await formatTransfer(db, result.transfer), replayed, ...formatWalletState(wallet) };
}

/** Operator (transfer:set): limits and fee of transfers in one currency; amounts in major units. */
export async function setTransferSettings(
  db: Queryable,
  code: string,
  input: { min?: string; max?: string; fee_percent?: string; fee_fixed?: string; enabled?: string },
): Promise<TTransferTerms> {
  const currency = await operatorCurrency(db, code);
  const amount = (name: string, text: string) => parseOperatorAmount(name, text, currency);
  const values: Record<string, string | boolean | null> = {};
  if (input.min !== undefined) values.min_amount = amount('min', input.min);
  if (input.max !== undefined) values.max_amount = input.max === 'none' ? null : amount('max', input.max);
  if (input.fee_fixed !== undefined) values.fee_fixed = amount('fee_fixed', input.fee_fixed);
  if (input.fee_percent !== undefined) values.fee_percent = parseFraction('fee_percent', input.fee_percent);
  if (input.enabled !== undefined) values.enabled = input.enabled === 'true';
  // The table's own checks, said per field rather than as a failed statement (with what is kept).
  const [kept] = await db.query<{ min: string; max: string | null }>(
    'SELECT min_amount::text AS min, max_amount::text AS max FROM transfer_settings WHERE currency = $1 FOR UPDATE',
    [currency.code],
  );
  const min = BigInt((values.min_amount as string | undefined) ?? kept?.min ?? '1');
  const max = 'max_amount' in values ? (values.max_amount as string | null) : (kept?.max ?? null);
  if (min < 1n) throw new AppError('validation', { fields: { min: 'ops.config.money_min_positive' } });
  if (max !== null && BigInt(max) < min) throw new AppError('validation', { fields: { max: 'ops.config.money_max_below_min' } });
  const columns = Object.keys(values);
  await db.query(
    `INSERT INTO transfer_settings (currency${columns.map((c) => `, ${c}`).join('')}) VALUES ($1${columns.map((_, i) => `, $${i + 2}`).join('')})
     ON CONFLICT (currency) DO ${columns.length ? `UPDATE SET ${columns.map((c) => `${c} = EXCLUDED.${c}`).join(', ')}` : 'NOTHING'}`,
    [currency.code, ...Object.values(values)],
  );
  return (await transferTerms(db, currency.code))[0]!;
}

/** The terms `transfer:set` set, per currency (major units), or one currency's; a currency never set has no row. */
export async function transferTerms(db: Queryable, code?: string): Promise<TTransferTerms[]> {
  const rows = await db.query<{
    currency: string;
    precision: number;
    min: string;
    max: string | null;
    fee_percent: string;
    fee_fixed: string;
    enabled: boolean;
  }>(
    `SELECT t.currency, c.precision, t.min_amount::text AS min, t.max_amount::text AS max, t.fee_percent::text AS fee_percent,
            t.fee_fixed::text AS fee_fixed, t.enabled
     FROM transfer_settings t JOIN currencies c ON c.code = t.currency
     WHERE $1::text IS NULL OR t.currency = $1`,
    [code ?? null],
  );
  return rows.map((row) => {
    const precision = Number(row.precision);
    return {
      currency: row.currency,
      min: formatAmount(row.min, precision),
      max: row.max === null ? null : formatAmount(row.max, precision),
      fee_percent: row.fee_percent,
      fee_fixed: formatAmount(row.fee_fixed, precision),
      enabled: row.enabled,
    };
  });
}
