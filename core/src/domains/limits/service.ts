import { formatAmount, stripTrailingZeros, type TLevelLimitInput, type TVerificationLimit, type TWithdrawLimits } from '@obmen/shared';
import type { Queryable } from '../../db/index.ts';
import { AppError, notFound } from '../../errors.ts';
import { currencies, operatorCurrency, parseOperatorAmount } from '../currencies/service.ts';

/*
 * The limits of a verification level, in one place: what a level may bring in (deposits and
 * purchases) and take out (withdrawals) per 24 hours and per 30 days (table
 * verification_limits, in one currency per level and operation), and the level itself, which
 * also opens systems (payments) and card orders (cards). Payments refuse over them; the check
 * forms and the withdraw page show what is left.
 */

/** The verification level of a user (0 until identity is approved); `lock` takes the user's row, serialising their requests. */
export async function userLevel(db: Queryable, userId: string, lock = false): Promise<number> {
  const [row] = await db.query<{ level: number }>(`SELECT verification_level AS level FROM users WHERE id = $1${lock ? ' FOR UPDATE' : ''}`, [userId]);
  return Number(row?.level ?? 0);
}

export type TLimitState = { level: number; currency: string; precision: number; per24h: bigint; per30d: bigint; left24h: bigint; left30d: bigint };

/** What a verification limit counts: money coming in (deposits and purchases) or going out. */
export type TLimitOperation = 'deposit' | 'withdrawal';

/**
 * The limits of the user's verification level for `operation` and what is left of them at
 * `now`. Withdrawals store their value in the limits' currency; deposits and purchases are
 * valued per currency at today's mid rate (rounded up). Ended ones (rejected, failed,
 * cancelled; declined, expired) do not count.
 */
export async function limitState(
  db: Queryable,
  userId: string,
  level: number,
  now: Date,
  operation: TLimitOperation = 'withdrawal',
  /** A deposit already stored that is not to count (the one being judged). */
  exceptPayment: string | null = null,
): Promise<TLimitState> {
  const [limit] = await db.query<{ currency: string; per_24h: string; per_30d: string }>(
    `SELECT currency, per_24h::text AS per_24h, per_30d::text AS per_30d FROM verification_limits WHERE level = $1 AND operation = $2`,
    [level, operation],
  );
  const currency = limit?.currency ?? 'USD';
  const used =
    operation === 'withdrawal'
      ? await db.query<{ currency: string; d: string; m: string }>(
          `SELECT $3::text AS currency, coalesce(sum(limit_value) FILTER (WHERE created_at > $2::timestamptz - interval '24 hours'), 0)::text AS d,
                  coalesce(sum(limit_value), 0)::text AS m
           FROM withdrawals WHERE user_id = $1 AND limit_currency = $3 AND created_at > $2::timestamptz - interval '30 days'
             AND state NOT IN ('rejected', 'failed', 'cancelled')`,
          [userId, now, currency],
        )
      : await db.query<{ currency: string; d: string; m: string }>(
          `SELECT currency, coalesce(sum(amount) FILTER (WHERE created_at > $2::timestamptz - interval '24 hours'), 0)::text AS d,
                  sum(amount)::text AS m
           FROM payments WHERE user_id = $1 AND direction IN ('deposit', 'purchase') AND created_at > $2::timestamptz - interval '30 days'
             AND state NOT IN ('declined', 'expired') AND id IS DISTINCT FROM $3::bigint
           GROUP BY currency`,
          [userId, now, exceptPayment],
        );
  let usedDay = 0n;
  let usedMonth = 0n;
  for (const row of used) {
    usedDay += await limitValue(db, row.currency, BigInt(row.d), currency);
    usedMonth += await limitValue(db, row.currency, BigInt(row.m), currency);
  }
  const per24h = BigInt(limit?.per_24h ?? '0');
  const per30d = BigInt(limit?.per_30d ?? '0');
  const clamp = (value: bigint) => (value > 0n ? value : 0n);
  const precision = (await currencies(db)).get(currency)?.precision ?? 2;
  return { level, currency, precision, per24h, per30d, left24h: clamp(per24h - usedDay), left30d: clamp(per30d - usedMonth) };
}

export function showLimits(state: TLimitState): TWithdrawLimits {
  const shown = (value: bigint) => formatAmount(value, state.precision);
  return {
    level: state.level,
    currency: state.currency,
    per_24h: shown(state.per24h),
    per_30d: shown(state.per30d),
    left_24h: shown(state.left24h),
    left_30d: shown(state.left30d),
  };
}

/** `amount` of `currency` in the limits' currency at mid rates, rounded up (minor units). */
export async function limitValue(db: Queryable, currency: string, amount: bigint, limitCurrency: string): Promise<bigint> {
  if (currency === limitCurrency || amount === 0n) return amount;
  const [row] = await db.query<{ value: string | null }>(
    `SELECT ceil($3::numeric * coalesce(
        (SELECT r.rate FROM rates r WHERE r.src = $1 AND r.dst = $2),
        1 / nullif((SELECT r.rate FROM rates r WHERE r.src = $2 AND r.dst = $1), 0))
      * power(10::numeric, (SELECT precision FROM currencies WHERE code = $2) - (SELECT precision FROM currencies WHERE code = $1)))::text AS value`,
    [currency, limitCurrency, amount.toString()],
  );
  if (row?.value == null) throw new AppError('rates_unavailable');
  return BigInt(row.value);
}

/** The refusal of a request worth `value` (limits' currency) beyond what is left of `operation`'s limits. */
export function limitError(state: TLimitState, value: bigint, operation: TLimitOperation = 'withdrawal'): AppError | null {
  const code = operation === 'deposit' ? 'deposit_limit_exceeded' : 'withdrawal_limit_exceeded';
  const shown = (amount: bigint) => formatAmount(amount, state.precision).replace(/\.?0+$/, '') || '0';
  if (value > state.left24h) {
    return new AppError(code, {
      key: 'withdraw.limit_exceeded_24h',
      vars: { left: shown(state.left24h), limit: shown(state.per24h), currency: state.currency },
    });
  }
  if (value > state.left30d) {
    return new AppError(code, {
      key: 'withdraw.limit_exceeded_30d',
      vars: { left: shown(state.left30d), limit: shown(state.per30d), currency: state.currency },
    });
  }
  return null;
}

/**
 * Over `operation`'s limits of the user's level: refused. Takes the user's row lock, so two
 * requests at once cannot both fit; call it in the transaction that inserts the request.
 * Answers the request's value in the limits' currency (a withdrawal stores it).
 */
export async function refuseOverLimits(
  tx: Queryable,
  input: { userId: string; level: number; now: Date; operation: TLimitOperation; currency: string; amount: bigint },
): Promise<{ value: bigint; currency: string }> {
  await tx.query('SELECT 1 FROM users WHERE id = $1 FOR UPDATE', [input.userId]);
  const limits = await limitState(tx, input.userId, input.level, input.now, input.operation);
  const value = await limitValue(tx, input.currency, input.amount, limits.currency);
  const refusal = limitError(limits, value, input.operation);
  if (refusal) throw refusal;
  return { value, currency: limits.currency };
}

/**
 * Whether a deposit already stored (a chain transaction seen, its money on our address) is worth
 * more than what is left of its customer's deposit limits beside their other deposits. Without a
 * rate to value it, it is treated as over: an operator looks rather than the limits being skipped.
 */
export async function depositOverLimits(
  db: Queryable,
  payment: { id: string; user_id: string; currency: string; amount: string },
  now: Date,
): Promise<boolean> {
  try {
    const limits = await limitState(db, payment.user_id, await userLevel(db, payment.user_id), now, 'deposit', payment.id);
    return limitError(limits, await limitValue(db, payment.currency, BigInt(payment.amount), limits.currency), 'deposit') !== null;
  } catch (err) {
    if (err instanceof AppError && err.code === 'rates_unavailable') return true;
    throw err;
  }
}

/** Limits of every level (or one level's operation), amounts in major units (minor units inside, as everywhere). */
export async function listLimits(db: Queryable, only?: Pick<TVerificationLimit, 'level' | 'operation'>): Promise<TVerificationLimit[]> {
  const rows = await db.query<{
    level: number;
    operation: TVerificationLimit['operation'];
    currency: string;
    per_24h: string;
    per_30d: string;
    precision: number | null;
  }>(
    `SELECT l.level, l.operation, l.currency, l.per_24h::text, l.per_30d::text, c.precision
     FROM verification_limits l LEFT JOIN currencies c ON c.code = l.currency
     WHERE ($1::int IS NULL OR (l.level = $1 AND l.operation = $2))
     ORDER BY l.level, array_position(ARRAY['deposit','withdrawal','card'], l.operation)`,
    [only?.level ?? null, only?.operation ?? null],
  );
  const major = (minor: string, precision: number) => stripTrailingZeros(formatAmount(minor, precision));
  return rows.map((row) => ({
    level: row.level,
    operation: row.operation,
    currency: row.currency,
    per_24h: major(row.per_24h, row.precision ?? 2),
    per_30d: major(row.per_30d, row.precision ?? 2),
  }));
}

/**
 * `kyc:limits:set` and the approved `limits.level` change: a level's limits of one operation, in
 * a currency (major units). Requests already made keep counting in the currency they were
 * valued in, so a new currency starts its windows empty. Answers the row as it became.
 */
export async function setLevelLimit(tx: Queryable, input: TLevelLimitInput): Promise<TVerificationLimit> {
  const currency = await operatorCurrency(tx, input.currency);
  const per24h = parseOperatorAmount('per_24h', input.per_24h, currency);
  const per30d = parseOperatorAmount('per_30d', input.per_30d, currency);
  if (BigInt(per30d) < BigInt(per24h)) throw new AppError('validation', { fields: { per_30d: 'ops.config.limits_month_below_day' } });
  const updated = await tx.query(
    'UPDATE verification_limits SET currency = $3, per_24h = $4, per_30d = $5 WHERE level = $1 AND operation = $2 RETURNING level',
    [input.level, input.operation, currency.code, per24h, per30d],
  );
  if (!updated.length) throw notFound();
  return (await listLimits(tx, input))[0]!;
}
