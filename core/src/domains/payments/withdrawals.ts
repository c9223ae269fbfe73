import {
  formatAmount,
  translate,
  type TI18nKey,
  type TLocale,
  type TPaymentProvider,
  type TWithdrawal,
  type TWithdrawalState,
  type TWithdrawCheckBody,
  type TWithdrawFormBody,
  type TWithdrawLimits,
} from '@obmen/shared';
import type { Db, Queryable } from '../../db/index.ts';
import { AppError, notFoundOf } from '../../errors.ts';
import { currencies, operatorCurrency, parseOperatorAmount } from '../currencies/service.ts';
import { limitError, limitState, limitValue, showLimits, userLevel } from '../limits/service.ts';
import type { TDocumentCipher } from '../verification/cipher.ts';
import { assessPayment, type TPaymentAssessment } from './catalogue.ts';

/*
 * Withdrawals as they are read and checked: a request's row and its view, the check of the
 * form, the operators' lists and auto-approval amounts. The steps of a request (its state
 * machine) are in withdrawal-states.ts; the history and its CSV in payment-history.ts; the
 * limits in limits/service.ts.
 */

const OPEN_STATES: readonly TWithdrawalState[] = ['requested', 'approved', 'processing'];

export type TWithdrawalRow = {
  id: string;
  public_id: string;
  user_id: string;
  system_id: string;
  provider: TPaymentProvider;
  currency: string;
  amount: string;
  fee: string;
  receive: string;
  /** The form without the card number, which is only in card_number_sealed. */
  details: Record<string, string>;
  card_number_sealed: Buffer | null;
  details_shown: string;
  state: TWithdrawalState;
  reason: string | null;
  reason_text: string | null;
  hold_id: string;
  provider_ref: string | null;
  created_at: Date;
  expected_at: Date | null;
  finished_at: Date | null;
  /** The system's name per locale (null: a system no longer listed). */
  system_names: Record<TLocale, string> | null;
};

export const WITHDRAWAL_COLUMNS = `id::text AS id, public_id::text AS public_id, user_id::text AS user_id, system_id, provider, currency,
  amount::text AS amount, fee::text AS fee, receive::text AS receive, details, card_number_sealed, details_shown, state, reason, reason_text,
  hold_id::text AS hold_id, provider_ref, created_at, expected_at, finished_at,
  (SELECT p.names FROM payment_systems p WHERE p.id = withdrawals.system_id AND p.direction = 'withdraw') AS system_names`;

/** The payout form's fields a request keeps (the code is not one). */
export function formOf(body: Omit<TWithdrawFormBody, 'code'>): Record<string, string> {
  const form: Record<string, string> = {};
  for (const name of ['card_number', 'card_holder', 'iban', 'account_holder', 'address', 'memo'] as const) {
    const value = body[name];
    if (value !== undefined) form[name] = value;
  }
  return form;
}

export type TWithdrawCheck = {
  ok: boolean;
  currency: string;
  fee: string | null;
  receive: string | null;
  limits: TWithdrawLimits;
  fields: Record<string, string>;
  message: string | null;
};

/**
 * POST /api/withdraw/check: what the form would give (fee, amount received), the limits left,
 * and every refusal as a localized field message, without moving anything. Always 200.
 */
export async function checkWithdrawal(db: Queryable, userId: string, body: TWithdrawCheckBody, locale: TLocale, now: Date): Promise<TWithdrawCheck> {
  const level = await userLevel(db, userId);
  const limits = await limitState(db, userId, level, now);
  const answer: TWithdrawCheck = { ok: false, currency: body.currency, fee: null, receive: null, limits: showLimits(limits), fields: {}, message: null };
  const fail = (err: unknown) => {
    Object.assign(answer, describeRefusal(locale, err));
    return answer;
  };
  let assessed: TPaymentAssessment;
  try {
    assessed = await assessPayment(db, {
      direction: 'withdraw',
      ps: body.ps,
      currency: body.currency,
      amount: body.amount,
      form: formOf(body),
      userLevel: level,
    });
  } catch (err) {
    return fail(err);
  }
  const precision = assessed.entry.currency.precision;
  answer.fee = formatAmount(assessed.fee, precision);
  answer.receive = formatAmount(assessed.receive, precision);
  try {
    const refusal = limitError(limits, await limitValue(db, assessed.entry.currency.code, assessed.amount, limits.currency));
    if (refusal) throw refusal;
    const [balance] = await db.query<{ balance: string }>(
      'SELECT coalesce((SELECT balance FROM ledger_accounts WHERE user_id = $1 AND currency = $2), 0)::text AS balance',
      [userId, assessed.entry.currency.code],
    );
    if (BigInt(balance!.balance) < assessed.amount) {
      throw new AppError('insufficient_funds', {
        vars: {
          currency: assessed.entry.currency.code,
          balance: formatAmount(balance!.balance, precision).replace(/\.?0+$/, '') || '0',
          needed: formatAmount(assessed.amount, precision).replace(/\.?0+$/, '') || '0',
        },
      });
    }
  } catch (err) {
    return fail(err);
  }
  answer.ok = true;
  return answer;
}

/**
 * A refusal as a check answers it (always 200): the localized message, and each field it names
 * with a message (`_` for the whole form). Anything but an AppError is rethrown.
 */
export function describeRefusal(locale: TLocale, err: unknown): { message: string; fields: Record<string, string> } {
  if (!(err instanceof AppError)) throw err;
  const message = translate(locale, err.messageKey, err.vars);
  const fields: Record<string, string> = {};
  for (const [field, key] of Object.entries(err.fields ?? { _: err.messageKey })) {
    // A refusal marks its field with the whole message and its values ("The minimum is 100
    // RUB"); a validation names each field's own message.
    fields[field] = err.code === 'validation' ? localizeKey(locale, key, err.vars) : message;
  }
  return { message, fields };
}

function localizeKey(locale: TLocale, key: string, vars: Record<string, string | number>): string {
  return key.includes('.') ? translate(locale, key as TI18nKey, vars) : key;
}

function reasonOf(row: Pick<TWithdrawalRow, 'reason' | 'reason_text'>, locale: TLocale): string | null {
  if (!row.reason) return null;
  const text = translate(locale, row.reason as TI18nKey);
  return row.reason_text ? `${text}: ${row.reason_text}` : text;
}

export function formatWithdrawal(row: TWithdrawalRow, precision: number, locale: TLocale): TWithdrawal {
  return {
    id: row.public_id,
    ps: row.system_id,
    system: row.system_names?.[locale] ?? row.system_id,
    provider: row.provider,
    currency: row.currency,
    amount: formatAmount(row.amount, precision),
    fee: formatAmount(row.fee, precision),
    receive: formatAmount(row.receive, precision),
    details: row.details_shown,
    state: row.state,
    reason: reasonOf(row, locale),
    created_at: new Date(row.created_at).toISOString(),
    expected_at: row.expected_at ? new Date(row.expected_at).toISOString() : null,
    finished_at: row.finished_at ? new Date(row.finished_at).toISOString() : null,
    cancellable: row.state === 'requested',
  };
}

/** One of the user's withdrawals; another user's answers exactly like a missing one. */
export async function withdrawalStatus(db: Queryable, userId: string, publicId: string, locale: TLocale): Promise<TWithdrawal> {
  if (!/^[0-9a-f-]{36}$/i.test(publicId)) throw notFoundOf('withdrawal');
  const [row] = await db.query<TWithdrawalRow>(`SELECT ${WITHDRAWAL_COLUMNS} FROM withdrawals WHERE public_id = $1 AND user_id = $2`, [publicId, userId]);
  if (!row) throw notFoundOf('withdrawal');
  return formatWithdrawal(row, (await currencies(db)).get(row.currency)?.precision ?? 0, locale);
}

/** The user's requests still under way, newest first (the /withdraw page). */
export async function openWithdrawals(db: Queryable, userId: string, locale: TLocale): Promise<TWithdrawal[]> {
  const rows = await db.query<TWithdrawalRow>(
    `SELECT ${WITHDRAWAL_COLUMNS} FROM withdrawals WHERE user_id = $1 AND state = ANY ($2::text[]) ORDER BY id DESC LIMIT 20`,
    [userId, OPEN_STATES],
  );
  const byCode = await currencies(db);
  return rows.map((row) => formatWithdrawal(row, byCode.get(row.currency)?.precision ?? 0, locale));
}

/** The withdraw page's view of the caller: their limits now. */
export async function withdrawLimits(db: Queryable, userId: string, now: Date): Promise<TWithdrawLimits> {
  return showLimits(await limitState(db, userId, await userLevel(db, userId), now));
}

/** Operators: requests in a state (default: those waiting for a decision), oldest first. */
export async function listWithdrawals(db: Queryable, filter: { state?: string; limit: number }) {
  return db.query<{ id: string; account_id: number; system_id: string; currency: string; amount: string; state: string; created_at: Date }>(
    `SELECT w.public_id::text AS id, u.account_id, w.system_id, w.currency, w.amount::text AS amount, w.state, w.created_at
     FROM withdrawals w JOIN users u ON u.id = w.user_id WHERE w.state = $1 ORDER BY w.id LIMIT $2`,
    [filter.state ?? 'requested', filter.limit],
  );
}

/**
 * Seals the card numbers that withdrawals written before card_number_sealed kept in `details`
 * (migration 091), and removes them from there. Run at every start, after the migrations: it
 * finds nothing once done, and two cores starting together seal each row once (the row's
 * number is taken only while still there). Returns how many rows it sealed.
 */
export async function sealPayoutCardNumbers(db: Db, cipher: TDocumentCipher): Promise<number> {
  let sealed = 0;
  for (;;) {
    const rows = await db.query<{ id: string; card_number: string }>(
      `SELECT id::text AS id, details ->> 'card_number' AS card_number FROM withdrawals WHERE jsonb_typeof(details -> 'card_number') = 'string' ORDER BY id LIMIT 500`,
    );
    for (const row of rows) {
      const updated = await db.query(
        `UPDATE withdrawals SET card_number_sealed = $2, details = details - 'card_number' WHERE id = $1 AND details ->> 'card_number' = $3 RETURNING 1`,
        [row.id, await cipher.encrypt(row.card_number), row.card_number],
      );
      sealed += updated.length;
    }
    if (rows.length < 500) return sealed;
  }
}

/** Operators: requests of `currency` up to `amount` (major units) are approved without review. */
export async function setAutoApproval(db: Queryable, code: string, amount: string): Promise<{ currency: string; max_amount: string }> {
  const currency = await operatorCurrency(db, code);
  const value = BigInt(parseOperatorAmount('amount', amount, currency));
  await db.query(
    `INSERT INTO withdraw_auto_approval (currency, max_amount) VALUES ($1, $2)
     ON CONFLICT (currency) DO UPDATE SET max_amount = EXCLUDED.max_amount`,
    [currency.code, value.toString()],
  );
  return { currency: currency.code, max_amount: formatAmount(value, currency.precision) };
}

/** The auto-approval amounts a fresh database starts with (major units), on an empty table only. */
const SEED_AUTO_APPROVAL: Record<string, string> = {
  RUB: '10000',
  USD: '100',
  EUR: '100',
  KZT: '50000',
  UAH: '4000',
  BTC: '0.001',
  ETH: '0.03',
  USDT: '100',
  USDC: '100',
  TON: '20',
  LTC: '1',
  TRX: '500',
};

export async function seedWithdrawAutoApproval(tx: Queryable): Promise<boolean> {
  const [existing] = await tx.query('SELECT 1 FROM withdraw_auto_approval LIMIT 1');
  if (existing) return false;
  await tx.query(
    `INSERT INTO withdraw_auto_approval (currency, max_amount)
     SELECT c.code, t.amount::numeric * power(10::numeric, c.precision) FROM unnest($1::text[], $2::text[]) AS t (code, amount) JOIN currencies c ON c.code = t.code`,
    [Object.keys(SEED_AUTO_APPROVAL), Object.values(SEED_AUTO_APPROVAL)],
  );
  return true;
}

/**
 * Operators: from `amount` (major units) of `currency` on, approving a withdrawal by hand needs a
 * second operator (four eyes); 0 removes the rule for that currency.
 */
export async function setLargeAmount(db: Queryable, code: string, amount: string): Promise<{ currency: string; min_amount: string | null }> {
  const currency = await operatorCurrency(db, code);
  const value = BigInt(parseOperatorAmount('amount', amount, currency));
  if (value === 0n) {
    await db.query('DELETE FROM withdraw_large_amounts WHERE currency = $1', [currency.code]);
    return { currency: currency.code, min_amount: null };
  }
  await db.query(
    `INSERT INTO withdraw_large_amounts (currency, min_amount) VALUES ($1, $2)
     ON CONFLICT (currency) DO UPDATE SET min_amount = EXCLUDED.min_amount`,
    [currency.code, value.toString()],
  );
  return { currency: currency.code, min_amount: formatAmount(value, currency.precision) };
}

/** Per currency, from which amount (minor units) approving a withdrawal needs a second operator. */
export async function largeAmounts(db: Queryable): Promise<Map<string, bigint>> {
  const rows = await db.query<{ currency: string; min_amount: string }>('SELECT currency, trunc(min_amount)::text AS min_amount FROM withdraw_large_amounts');
  return new Map(rows.map((row) => [row.currency, BigInt(row.min_amount)]));
}

/**
 * Per currency, the amounts `withdraw:large` and `withdraw:auto` set (major units; null: no such
 * rule), or one currency's.
 */
export async function withdrawalAmounts(db: Queryable, code?: string): Promise<Map<string, { large: string | null; auto: string | null }>> {
  const rows = await db.query<{ currency: string; precision: number; large: string | null; auto: string | null }>(
    `SELECT c.code AS currency, c.precision, trunc(l.min_amount)::text AS large, a.max_amount::text AS auto
     FROM currencies c
     LEFT JOIN withdraw_large_amounts l ON l.currency = c.code
     LEFT JOIN withdraw_auto_approval a ON a.currency = c.code
     WHERE $1::text IS NULL OR c.code = $1`,
    [code ?? null],
  );
  const major = (minor: string | null, precision: number) => (minor === null ? null : formatAmount(minor, precision));
  return new Map(rows.map((row) => [row.currency, { large: major(row.large, Number(row.precision)), auto: major(row.auto, Number(row.precision)) }]));
}

/** Whether a withdrawal of `amount` minor units of `currency` needs a second operator's approval. */
export const isLarge = (large: Map<string, bigint>, currency: string, amount: bigint): boolean => {
  const from = large.get(currency);
  return from !== undefined && amount >= from;
};

/** The four-eyes amounts a fresh database starts with (major units: ten times the auto-approval ones), on an empty table only. */
export async function seedWithdrawLargeAmounts(tx: Queryable): Promise<boolean> {
  const [existing] = await tx.query('SELECT 1 FROM withdraw_large_amounts LIMIT 1');
  if (existing) return false;
  await tx.query(
    `INSERT INTO withdraw_large_amounts (currency, min_amount)
     SELECT c.code, trunc(10 * t.amount::numeric * power(10::numeric, c.precision)) FROM unnest($1::text[], $2::text[]) AS t (code, amount) JOIN currencies c ON c.code = t.code`,
    [Object.keys(SEED_AUTO_APPROVAL), Object.values(SEED_AUTO_APPROVAL)],
  );
  return true;
}
