import { MoneyFormatError, parseAmount, parseDecimal, pow10, type TCurrencyInfo, type TLocale } from '@obmen/shared';
import type { Queryable } from '../../db/index.ts';
import { AppError } from '../../errors.ts';
import { moneyError } from '../../money-errors.ts';

/** `name` is the fallback; `names` holds one per locale (migration 009). */
export type TCurrency = TCurrencyInfo & { enabled: boolean; position: number; names: Partial<Record<TLocale, string>> };

/**
 * The currency table changes only by an operator's hand (rarely, and precision never once
 * money exists), but every amount on the wire needs its precision: a short-lived cache per
 * database handle saves a round trip per request. Not per-user state.
 */
const TTL_MS = 5_000;
const cache = new WeakMap<object, { at: number; byCode: Map<string, TCurrency>; pending?: Promise<Map<string, TCurrency>> }>();

async function load(db: Queryable): Promise<Map<string, TCurrency>> {
  const rows = await db.query<TCurrency>('SELECT code, kind, precision, name, names, logo, enabled, position FROM currencies ORDER BY position, code');
  return new Map(rows.map((row) => [row.code, { ...row, precision: Number(row.precision), position: Number(row.position) }]));
}

export async function currencies(db: Queryable): Promise<Map<string, TCurrency>> {
  const hit = cache.get(db);
  if (hit && Date.now() - hit.at < TTL_MS) return hit.byCode;
  if (hit?.pending) return hit.pending;
  const pending = load(db);
  cache.set(db, { at: hit?.at ?? 0, byCode: hit?.byCode ?? new Map(), pending });
  try {
    const byCode = await pending;
    cache.set(db, { at: Date.now(), byCode });
    return byCode;
  } catch (err) {
    cache.delete(db);
    throw err;
  }
}

/** Forget the cache (after an operator changes currencies; tests). */
export function forgetCurrencies(db: Queryable): void {
  cache.delete(db);
}

/** An enabled currency, or a 422 naming the field. */
export async function enabledCurrency(db: Queryable, code: string, field = 'currency'): Promise<TCurrency> {
  const currency = (await currencies(db)).get(code);
  if (!currency || !currency.enabled) throw moneyError('currency_disabled', { currency: code }, field);
  return currency;
}

/** For error messages: the precision of a code, synchronously from the last load. */
export function precisionLookup(byCode: Map<string, TCurrency>): (code: string) => number | undefined {
  return (code) => byCode.get(code)?.precision;
}

/** A currency as the API shows it, named in the reader's language. */
export function publicCurrency(currency: TCurrency, locale: TLocale): TCurrencyInfo {
  return { code: currency.code, kind: currency.kind, precision: currency.precision, name: currency.names[locale] ?? currency.name, logo: currency.logo };
}

/** A currency an operator named (any case), enabled or not. */
export async function operatorCurrency(db: Queryable, code: string): Promise<TCurrency> {
  const currency = (await currencies(db)).get(code.toUpperCase());
  if (!currency) throw new AppError('unknown_currency', { vars: { currency: code } });
  return currency;
}

/**
 * An amount typed by a person, in the currency's precision, strictly above zero. A malformed
 * one is a 400 naming the field; too many decimals says how many are allowed.
 */
export function parseUserAmount(text: string, currency: TCurrency, field = 'amount'): bigint {
  let value: bigint;
  try {
    value = parseAmount(text, currency.precision);
  } catch (err) {
    if (!(err instanceof MoneyFormatError)) throw err;
    if (err.key === 'money.amount_too_precise') {
      throw new AppError('amount_too_precise', { vars: { precision: currency.precision, currency: currency.code }, field });
    }
    throw new AppError('validation', { fields: { [field]: err.key } });
  }
  if (value <= 0n) throw moneyError('amount_not_positive', { currency: currency.code }, field);
  return value;
}

/** An operator's amount option (min=, fee_fixed=…) in major units → minor units as text. */
export function parseOperatorAmount(name: string, text: string, currency: TCurrency): string {
  try {
    return parseAmount(text, currency.precision).toString();
  } catch (err) {
    if (!(err instanceof MoneyFormatError)) throw err;
    throw new AppError('not_an_amount', { vars: { name, currency: currency.code, precision: currency.precision, value: text } });
  }
}

/** An operator's fraction option (spread=, fee_percent=): at least 0 and below `below`. */
export function parseFraction(name: string, text: string, below = 1): string {
  let value;
  try {
    value = parseDecimal(text);
  } catch {
    throw new AppError('not_a_decimal', { vars: { name, value: text } });
  }
  if (value.num < 0n || value.num >= BigInt(below) * pow10(value.scale)) throw new AppError('fraction_out_of_range', { vars: { name, below } });
  return text.trim();
}
