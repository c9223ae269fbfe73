import {
  checkPaymentAmount,
  fieldsForCurrency,
  formatAmount,
  PAYMENT_SYSTEM_ID_PATTERN,
  parseAmount,
  paymentFormSchema,
  addressFormatOf,
  type TPaymentDirection,
  type TPaymentField,
  type TPaymentFormValues,
  type TPaymentProvider,
  type TLocale,
  type TPaymentSystem,
  type TPaymentSystemGroup,
  type TPaymentTerms,
  VERIFICATION_LEVELS,
} from '@obmen/shared';
import type { Db, Queryable } from '../../db/index.ts';
import { AppError } from '../../errors.ts';
import { moneyError } from '../../money-errors.ts';
import { findPaymentProvider } from './providers.ts';
import {
  currencies,
  enabledCurrency,
  operatorCurrency,
  parseFraction,
  parseOperatorAmount,
  parseUserAmount,
  publicCurrency,
  type TCurrency,
} from '../currencies/service.ts';

/*
 * The payment-system catalogue (migration 020): which systems take which currencies in which
 * direction, at what fee and limits, from which verification level, with which form. The
 * providers that run them are code (providers.ts); the catalogue is data an operator edits.
 */

type TSystemRow = {
  direction: TPaymentDirection;
  id: string;
  provider: TPaymentProvider;
  names: { ru: string; en: string };
  logo: string;
  level: number;
  fields: TPaymentField[];
  system_enabled: boolean;
  position: number;
  currency: string;
  fee_percent: string;
  fee_fixed: string;
  min_amount: string;
  max_amount: string;
  confirmations: number;
  enabled: boolean;
};

/** One system in one currency, with its terms in minor units. */
export type TCatalogueEntry = {
  system: TPaymentSystem;
  terms: TPaymentTerms;
  currency: TCurrency;
};

/**
 * The level a system needs as its users see it: its own, raised to the first verification level
 * whose limits allow the operation at all, so the list, the check and the limits table agree (a
 * level whose withdrawal limit is 0 sees every payout system locked, not offered and then refused).
 */
const LEVEL_NEEDED = `GREATEST(s.level, coalesce((SELECT min(l.level) FROM verification_limits l
    WHERE l.operation = CASE s.direction WHEN 'withdraw' THEN 'withdrawal' ELSE 'deposit' END AND l.per_24h > 0 AND l.per_30d > 0), s.level))`;

const selectSystems = (
  level: string,
) => `SELECT s.direction, s.id, s.provider, s.names, s.logo, ${level} AS level, s.fields, s.enabled AS system_enabled, s.position,
    c.currency, c.fee_percent::text AS fee_percent, c.fee_fixed::text AS fee_fixed, c.min_amount::text AS min_amount,
    c.max_amount::text AS max_amount, c.confirmations, c.enabled
  FROM payment_systems s JOIN payment_system_currencies c ON c.direction = s.direction AND c.system_id = s.id
  JOIN currencies cur ON cur.code = c.currency`;
/** As users see the catalogue; operators see each system's own level. */
const SELECT = selectSystems(LEVEL_NEEDED);
const SELECT_AS_CONFIGURED = selectSystems('s.level');

/** "1.5000" → "1.5": the percentage without the column's trailing zeros. */
function shortPercent(text: string): string {
  return text.includes('.') ? text.replace(/\.?0+$/, '') : text;
}

function toEntry(row: TSystemRow, currency: TCurrency, userLevel: number): TCatalogueEntry {
  const level = Number(row.level);
  return {
    currency,
    terms: { feePercent: shortPercent(row.fee_percent), feeFixed: BigInt(row.fee_fixed), min: BigInt(row.min_amount), max: BigInt(row.max_amount) },
    system: {
      id: row.id,
      provider: row.provider,
      direction: row.direction,
      name: row.names,
      logo: row.logo,
      currency: row.currency,
      fee_percent: shortPercent(row.fee_percent),
      fee_fixed: formatAmount(row.fee_fixed, currency.precision),
      min: formatAmount(row.min_amount, currency.precision),
      max: formatAmount(row.max_amount, currency.precision),
      level,
      locked: userLevel < level,
      fields: fieldsForCurrency(row.fields, row.currency),
      confirmations: Number(row.confirmations),
    },
  };
}

/**
 * The enabled systems of a direction, per enabled currency (the catalogue's order), as the
 * caller at `userLevel` sees them: systems above the caller's level are listed, `locked`.
 */
export async function listPaymentSystems(
  db: Queryable,
  input: { direction: TPaymentDirection; userLevel: number; currency?: string },
): Promise<TCatalogueEntry[]> {
  const rows = await db.query<TSystemRow>(
    `${SELECT} WHERE s.direction = $1 AND s.enabled AND c.enabled AND ($2::text IS NULL OR c.currency = $2)
     ORDER BY s.position, s.id, cur.position, c.currency`,
    [input.direction, input.currency ?? null],
  );
  const byCode = await currencies(db);
  const out: TCatalogueEntry[] = [];
  for (const row of rows) {
    const currency = byCode.get(row.currency);
    if (currency?.enabled) out.push(toEntry(row, currency, input.userLevel));
  }
  return out;
}

/**
 * The entries grouped under their currency (named in the reader's language, with its logo),
 * currencies in the currency table's order.
 */
export async function groupByCurrency(db: Queryable, entries: readonly TCatalogueEntry[], locale: TLocale): Promise<TPaymentSystemGroup[]> {
  const byCode = await currencies(db);
  const groups = new Map<string, TPaymentSystem[]>();
  for (const entry of entries) {
    const list = groups.get(entry.system.currency) ?? [];
    list.push(entry.system);
    groups.set(entry.system.currency, list);
  }
  return [...byCode.values()]
    .filter((currency) => groups.has(currency.code))
    .map((currency) => {
      const { name, logo } = publicCurrency(currency, locale);
      return { currency: currency.code, name, logo, systems: groups.get(currency.code)! };
    });
}

/** One enabled system in one enabled currency, or null. */
export async function findPaymentSystem(
  db: Queryable,
  input: { direction: TPaymentDirection; id: string; currency: string; userLevel: number },
): Promise<TCatalogueEntry | null> {
  if (!PAYMENT_SYSTEM_ID_PATTERN.test(input.id)) return null;
  const [row] = await db.query<TSystemRow>(`${SELECT} WHERE s.direction = $1 AND s.id = $2 AND c.currency = $3 AND s.enabled AND c.enabled`, [
    input.direction,
    input.id,
    input.currency,
  ]);
  const currency = row ? (await currencies(db)).get(row.currency) : undefined;
  return row && currency?.enabled ? toEntry(row, currency, input.userLevel) : null;
}

export type TPaymentAssessment = {
  entry: TCatalogueEntry;
  amount: bigint;
  fee: bigint;
  /** What is left after the fee: credited, paid out or exchanged. */
  receive: bigint;
  /** The form's values, normalised by the shared schema. */
  form: TPaymentFormValues;
};

/**
 * The one check of a payment's input, for every direction (deposit, purchase, and pay-out's
 * withdraw check): the system exists and is enabled for the currency, the caller's level is
 * enough, the amount is well formed and within the system's minimum and maximum and above its
 * fee, and the form's fields pass the shared schema. Refusals are AppErrors naming the field
 * (`ps`, `currency`, `amount`, or the form field); the fee and the amount received come back.
 */
export async function assessPayment(
  db: Queryable,
  input: { direction: TPaymentDirection; ps: string; currency: string; amount: string; form?: Record<string, unknown>; userLevel: number },
): Promise<TPaymentAssessment> {
  const currency = await enabledCurrency(db, input.currency);
  const entry = await findPaymentSystem(db, { direction: input.direction, id: input.ps, currency: currency.code, userLevel: input.userLevel });
  if (!entry) {
    const elsewhere = await db.query('SELECT 1 FROM payment_systems WHERE direction = $1 AND id = $2 AND enabled', [input.direction, input.ps]);
    throw new AppError('validation', { fields: elsewhere.length ? { currency: 'payments.currency_not_supported' } : { ps: 'payments.unknown_system' } });
  }
  if (entry.system.locked) throw new AppError('payment_level_required', { vars: { level: entry.system.level } });
  const amount = parseUserAmount(input.amount, currency);
  const check = checkPaymentAmount(entry.terms, amount);
  if (!check.ok) {
    const shown = (value: bigint) => formatAmount(value, currency.precision);
    if (check.reason === 'too_small') throw moneyError('amount_too_small', { min: shown(entry.terms.min), currency: currency.code });
    if (check.reason === 'too_large') throw moneyError('amount_too_large', { max: shown(entry.terms.max), currency: currency.code });
    throw moneyError('payment_fee_exceeds_amount', { fee: shown(check.fee), currency: currency.code });
  }
  const parsed = paymentFormSchema(entry.system.fields, currency.code).safeParse(input.form ?? {});
  if (!parsed.success) {
    const fields: Record<string, string> = {};
    for (const issue of parsed.error.issues) {
      const name = String(issue.path[0] ?? '_');
      fields[name] ??= issue.message.includes('.') ? issue.message : 'validation.invalid';
    }
    throw new AppError('validation', { fields });
  }
  return { entry, amount, fee: check.fee, receive: check.receive, form: parsed.data as TPaymentFormValues };
}

// ---- operators ---------------------------------------------------------------------------

/** A system a fresh database starts with (a provider's folder has its own: providers/sandbox/catalogue.ts). */
export type TSeedSystem = {
  direction: TPaymentDirection;
  id: string;
  provider: TPaymentProvider;
  names: { ru: string; en: string };
  logo: string;
  level: 0 | 1;
  fields: TPaymentField[];
  /** currency → [fee percent, fee fixed, min, max] in major units, confirmations for chain. */
  currencies: Record<string, [feePercent: string, feeFixed: string, min: string, max: string, confirmations?: number]>;
};

/**
 * Seeds the catalogue once, on an empty payment_systems table (an operator's edits survive
 * restarts), for the currencies the database has. With `provider`: once that provider has no
 * system, after the others (a provider configured later).
 */
export async function seedPaymentSystems(tx: Queryable, systems: readonly TSeedSystem[], provider?: TPaymentProvider): Promise<boolean> {
  const [existing] = provider
    ? await tx.query('SELECT 1 FROM payment_systems WHERE provider = $1 LIMIT 1', [provider])
    : await tx.query('SELECT 1 FROM payment_systems LIMIT 1');
  if (existing) return false;
  const [after] = await tx.query<{ next: number }>('SELECT coalesce(max(position) + 1, 0)::int AS next FROM payment_systems');
  const precisions = new Map(
    (await tx.query<{ code: string; precision: number }>('SELECT code, precision FROM currencies')).map((row) => [row.code, Number(row.precision)]),
  );
  for (const [position, system] of systems.entries()) {
    await tx.query('INSERT INTO payment_systems (direction, id, provider, names, logo, level, fields, position) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)', [
      system.direction,
      system.id,
      system.provider,
      JSON.stringify(system.names),
      system.logo,
      system.level,
      system.fields,
      after!.next + position,
    ]);
    for (const [code, [feePercent, feeFixed, min, max, confirmations]] of Object.entries(system.currencies)) {
      const precision = precisions.get(code);
      if (precision === undefined) continue;
      await tx.query(
        `INSERT INTO payment_system_currencies (direction, system_id, currency, fee_percent, fee_fixed, min_amount, max_amount, confirmations)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
        [
          system.direction,
          system.id,
          code,
          feePercent,
          parseAmount(feeFixed, precision).toString(),
          parseAmount(min, precision).toString(),
          parseAmount(max, precision).toString(),
          confirmations ?? 0,
        ],
      );
    }
  }
  return true;
}

/** payments:systems: every system and currency, enabled or not, in major units. */
export async function describePaymentSystems(db: Queryable, direction?: string) {
  const rows = await db.query<TSystemRow>(
    `${SELECT_AS_CONFIGURED} WHERE ($1::text IS NULL OR s.direction = $1) ORDER BY s.direction, s.position, s.id, c.currency`,
    [direction ?? null],
  );
  const byCode = await currencies(db);
  return rows.map((row) => {
    const precision = byCode.get(row.currency)?.precision ?? 0;
    return {
      direction: row.direction,
      id: row.id,
      provider: row.provider,
      currency: row.currency,
      enabled: row.system_enabled && row.enabled,
      system_enabled: row.system_enabled,
      currency_enabled: row.enabled,
      level: Number(row.level),
      fee_percent: shortPercent(row.fee_percent),
      fee_fixed: formatAmount(row.fee_fixed, precision),
      min: formatAmount(row.min_amount, precision),
      max: formatAmount(row.max_amount, precision),
      confirmations: Number(row.confirmations),
      fields: row.fields,
    };
  });
}

function operatorDirection(text: string | undefined): TPaymentDirection {
  if (text === 'deposit' || text === 'withdraw' || text === 'purchase') return text;
  throw new Error('direction must be deposit, withdraw or purchase');
}

async function operatorSystem(db: Queryable, direction: TPaymentDirection, id: string | undefined) {
  const [row] = await db.query<{ provider: TPaymentProvider }>('SELECT provider FROM payment_systems WHERE direction = $1 AND id = $2', [direction, id ?? '']);
  if (!row) throw new AppError('payment_system_unknown', { vars: { direction, id: id ?? '' } });
  return row;
}

/**
 * payments:system:enable / disable: the whole system, or only its currency when one is named.
 * Disabled systems leave the lists and refuse new payments; open payments finish as they were.
 */
export async function setPaymentSystemEnabled(db: Queryable, input: { direction?: string; id?: string; currency?: string; enabled: boolean }): Promise<void> {
  const direction = operatorDirection(input.direction);
  await operatorSystem(db, direction, input.id);
  if (input.currency === undefined) {
    await db.query('UPDATE payment_systems SET enabled = $3 WHERE direction = $1 AND id = $2', [direction, input.id, input.enabled]);
    return;
  }
  const currency = await operatorCurrency(db, input.currency);
  const rows = await db.query('UPDATE payment_system_currencies SET enabled = $4 WHERE direction = $1 AND system_id = $2 AND currency = $3 RETURNING 1', [
    direction,
    input.id,
    currency.code,
    input.enabled,
  ]);
  if (!rows.length) throw new AppError('payment_terms_missing', { vars: { direction, id: input.id ?? '', currency: currency.code } });
}

/**
 * payments:system:price: a system's terms in one currency (adding the currency when it has none
 * yet: then min and max are required). Amounts in major units; fee_percent in percent.
 */
export type TPriceInput = {
  direction?: string;
  id?: string;
  currency?: string;
  fee_percent?: string;
  fee_fixed?: string;
  min?: string;
  max?: string;
  confirmations?: string;
  level?: string;
};

export async function pricePaymentSystem(db: Db, input: TPriceInput): Promise<void> {
  await db.transaction((tx) => pricePaymentSystemIn(tx, input));
}

/** pricePaymentSystem in the caller's transaction (a four-eyes approval's). */
export async function pricePaymentSystemIn(tx: Queryable, input: TPriceInput): Promise<void> {
  const direction = operatorDirection(input.direction);
  const system = await operatorSystem(tx, direction, input.id);
  if (!input.currency) throw new Error('currency=<code> is required');
  const currency = await operatorCurrency(tx, input.currency);
  if (findPaymentProvider(system.provider)?.deposits === 'address' && !addressFormatOf(currency.code)) {
    throw new AppError('payment_no_address_format', { vars: { currency: currency.code } });
  }
  const feePercent = input.fee_percent === undefined ? null : parseFraction('fee_percent', input.fee_percent, 100);
  const feeFixed = input.fee_fixed === undefined ? null : parseOperatorAmount('fee_fixed', input.fee_fixed, currency);
  const min = input.min === undefined ? null : parseOperatorAmount('min', input.min, currency);
  const max = input.max === undefined ? null : parseOperatorAmount('max', input.max, currency);
  let confirmations: number | null = null;
  if (input.confirmations !== undefined) {
    confirmations = Number(input.confirmations);
    if (!Number.isInteger(confirmations) || confirmations < 0 || confirmations > 1000) throw new AppError('payment_confirmations_range');
  }
  if (input.level !== undefined) {
    const level = Number(input.level);
    if (input.level.trim() === '' || !VERIFICATION_LEVELS.includes(level as never))
      throw new AppError('validation', { fields: { level: 'validation.invalid' } });
    await tx.query('UPDATE payment_systems SET level = $3 WHERE direction = $1 AND id = $2', [direction, input.id, level]);
  }
  const [existing] = await tx.query<{ min_amount: string; max_amount: string }>(
    `SELECT min_amount::text AS min_amount, max_amount::text AS max_amount FROM payment_system_currencies
     WHERE direction = $1 AND system_id = $2 AND currency = $3 FOR UPDATE`,
    [direction, input.id, currency.code],
  );
  const effectiveMin = min ?? existing?.min_amount;
  const effectiveMax = max ?? existing?.max_amount;
  if (effectiveMin === undefined || effectiveMax === undefined) throw new AppError('payment_limits_required', { vars: { currency: currency.code } });
  if (BigInt(effectiveMin) <= 0n) throw new AppError('payment_min_positive');
  if (BigInt(effectiveMax) < BigInt(effectiveMin)) throw new AppError('payment_max_below_min');
  await tx.query(
    `INSERT INTO payment_system_currencies (direction, system_id, currency, fee_percent, fee_fixed, min_amount, max_amount, confirmations)
     VALUES ($1, $2, $3, coalesce($4::numeric, 0), coalesce($5::numeric, 0), $6, $7, coalesce($8::int, 0))
     ON CONFLICT (direction, system_id, currency) DO UPDATE SET fee_percent = coalesce($4::numeric, payment_system_currencies.fee_percent),
       fee_fixed = coalesce($5::numeric, payment_system_currencies.fee_fixed), min_amount = $6, max_amount = $7,
       confirmations = coalesce($8::int, payment_system_currencies.confirmations)`,
    [direction, input.id, currency.code, feePercent, feeFixed, effectiveMin, effectiveMax, confirmations],
  );
}
