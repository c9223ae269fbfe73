import { formatAmount, parseDecimal, pow10, type TExchangePair } from '@obmen/shared';
import type { Db, Queryable } from '../../db/index.ts';
import { AppError } from '../../errors.ts';
import { currencies, operatorCurrency, parseFraction, parseOperatorAmount, type TCurrency } from '../currencies/service.ts';
import { costFraction, quoteFromPay, significant, type TPairTerms } from './quote.ts';
import type { RateSource } from './source.ts';
import { recordRates } from './history.ts';

/** A pair as GET /api/exchange/list shows it: the user rate (after the spread) and limits in src. */
export function publicPair(terms: TPairTerms, byCode: Map<string, TCurrency>): TExchangePair | null {
  const src = byCode.get(terms.src);
  const dst = byCode.get(terms.dst);
  if (!src || !dst) return null;
  const mid = parseDecimal(terms.rate);
  const spread = parseDecimal(terms.spread);
  const num = mid.num * (pow10(spread.scale) - spread.num);
  const scale = mid.scale + spread.scale;
  if (num <= 0n) return null;
  return {
    src: terms.src,
    dst: terms.dst,
    src_logo: src.logo,
    dst_logo: dst.logo,
    rate: significant(num, pow10(scale), 12),
    rate_inverse: significant(pow10(scale), num, 10),
    fee_percent: terms.feePercent,
    fee_fixed: formatAmount(terms.feeFixed, src.precision),
    cost_percent: costFraction(terms),
    min: formatAmount(terms.min, src.precision),
    max: terms.max === null ? null : formatAmount(terms.max, src.precision),
  };
}

/**
 * `search` of /exchanges: "BTC/" every pair selling BTC, "/USDT" every pair buying USDT,
 * "BTC/USDT" that pair, "BTC" every pair with BTC on either side; empty: all.
 */
export function matchesSearch(pair: { src: string; dst: string }, search: string | undefined): boolean {
  if (!search) return true;
  const text = search.trim().toUpperCase();
  if (!text.includes('/')) return pair.src === text || pair.dst === text;
  const [src = '', dst = ''] = text.split('/', 2).map((part) => part.trim());
  return (!src || pair.src === src) && (!dst || pair.dst === dst);
}

/**
 * The public list made from a source's list of pairs, for as long as the source hands back that
 * same list (TableRateSource keeps it until the rates version moves) with the same currencies:
 * making it costs about 0.75 ms of exact rate arithmetic for the 132 seeded pairs.
 */
const publicLists = new WeakMap<readonly TPairTerms[], { byCode: Map<string, TCurrency>; list: readonly TExchangePair[] }>();

export async function listPairs(db: Queryable, source: RateSource, search?: string): Promise<readonly TExchangePair[]> {
  const [pairs, byCode] = await Promise.all([source.pairs(), currencies(db)]);
  let kept = publicLists.get(pairs);
  if (kept?.byCode !== byCode) {
    const list = pairs
      .map((pair) => publicPair(pair, byCode))
      .filter((pair): pair is TExchangePair => pair !== null)
      .sort((a, b) => byCode.get(a.src)!.position - byCode.get(b.src)!.position || byCode.get(a.dst)!.position - byCode.get(b.dst)!.position);
    kept = { byCode, list: Object.freeze(list) };
    publicLists.set(pairs, kept);
  }
  return search ? kept.list.filter((pair) => matchesSearch(pair, search)) : kept.list;
}

// ---- operator: rates:set ---------------------------------------------------------------------

export type TRateInput = {
  src: string;
  dst: string;
  rate?: string;
  spread?: string;
  fee_percent?: string;
  /** Major units of src. */
  fee_fixed?: string;
  min?: string;
  /** Major units of src; "none" for no maximum. */
  max?: string;
  enabled?: string;
};

/** Creates or changes a pair. Only the given fields change; a new pair needs a rate (its history records it at `now`). */
export async function setRate(db: Queryable, input: TRateInput, now: Date): Promise<TPairTerms> {
  const src = await operatorCurrency(db, input.src);
  const dst = await operatorCurrency(db, input.dst);
  if (src.code === dst.code) throw new AppError('same_currency');
  const values: Record<string, string | boolean | null> = {};
  if (input.rate !== undefined) {
    const rate = parseDecimal(input.rate);
    if (rate.num <= 0n) throw new AppError('rate_not_positive');
    values.rate = input.rate.trim();
  }
  if (input.spread !== undefined) values.spread = parseFraction('spread', input.spread);
  if (input.fee_percent !== undefined) values.fee_percent = parseFraction('fee_percent', input.fee_percent);
  if (input.fee_fixed !== undefined) values.fee_fixed = parseOperatorAmount('fee_fixed', input.fee_fixed, src);
  if (input.min !== undefined) values.min_amount = parseOperatorAmount('min', input.min, src);
  if (input.max !== undefined) values.max_amount = input.max === 'none' ? null : parseOperatorAmount('max', input.max, src);
  if (input.enabled !== undefined) values.enabled = input.enabled === 'true';
  const [exists] = await db.query('SELECT 1 FROM rates WHERE src = $1 AND dst = $2', [src.code, dst.code]);
  if (!exists && values.rate === undefined) throw new AppError('rate_required');
  const columns = Object.keys(values);
  const params = [src.code, dst.code, ...Object.values(values)];
  if (exists) {
    if (columns.length) {
      await db.query(
        `UPDATE rates SET ${columns.map((c, i) => `${c} = $${i + 3}`).join(', ')}, source = 'operator', updated_at = now() WHERE src = $1 AND dst = $2`,
        params,
      );
    }
  } else {
    await db.query(
      `INSERT INTO rates (src, dst${columns.map((c) => `, ${c}`).join('')}) VALUES ($1, $2${columns.map((_, i) => `, $${i + 3}`).join('')})`,
      params,
    );
  }
  if (typeof values.rate === 'string') await recordRates(db, [{ src: src.code, dst: dst.code, rate: values.rate }], now);
  const [row] = await db.query<Record<string, string | boolean | null>>(
    `SELECT src, dst, rate::text AS rate, spread::text AS spread, fee_percent::text AS fee_percent, fee_fixed::text AS fee_fixed,
            min_amount::text AS min_amount, max_amount::text AS max_amount, enabled, source FROM rates WHERE src = $1 AND dst = $2`,
    [src.code, dst.code],
  );
  return {
    src: String(row!.src),
    dst: String(row!.dst),
    rate: String(row!.rate),
    spread: String(row!.spread),
    feePercent: String(row!.fee_percent),
    feeFixed: BigInt(String(row!.fee_fixed)),
    min: BigInt(String(row!.min_amount)),
    max: row!.max_amount === null ? null : BigInt(String(row!.max_amount)),
    enabled: Boolean(row!.enabled),
    source: String(row!.source),
  };
}

/** The operator's view: every pair with its terms in major units. */
export async function describeRates(db: Queryable, filter?: string): Promise<Array<Record<string, string | boolean | null>>> {
  const byCode = await currencies(db);
  const rows = await db.query<Record<string, string | boolean | null>>(
    `SELECT src, dst, rate::text AS rate, spread::text AS spread, fee_percent::text AS fee_percent, fee_fixed::text AS fee_fixed,
            min_amount::text AS min_amount, max_amount::text AS max_amount, enabled, source,
            to_char(updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') AS updated_at
     FROM rates ORDER BY src, dst`,
  );
  return rows
    .filter((row) => matchesSearch({ src: String(row.src), dst: String(row.dst) }, filter))
    .map((row) => {
      const precision = byCode.get(String(row.src))?.precision ?? 0;
      return {
        ...row,
        fee_fixed: formatAmount(String(row.fee_fixed), precision),
        min_amount: formatAmount(String(row.min_amount), precision),
        max_amount: row.max_amount === null ? null : formatAmount(String(row.max_amount), precision),
      };
    });
}

/** rates:sync: writes a source's mid rates (e.g. the feed) into the table; terms stay. */
export async function syncRates(db: Db, source: RateSource, now: Date): Promise<number> {
  const pairs = await source.pairs();
  await db.transaction(async (tx) => {
    for (const pair of pairs) {
      await tx.query(`UPDATE rates SET rate = $3, source = $4, updated_at = now() WHERE src = $1 AND dst = $2`, [pair.src, pair.dst, pair.rate, source.name]);
    }
    await recordRates(tx, pairs, now);
  });
  return pairs.length;
}

// ---- seed -----------------------------------------------------------------------------------

/** Mid prices in USD of the seeded currencies (spring 2026 levels, rounded). */
export const SEED_USD_PRICES: Record<string, string> = {
  RUB: '0.0109',
  USD: '1',
  EUR: '1.08',
  KZT: '0.00211',
  UAH: '0.0243',
  BTC: '65000',
  ETH: '3200',
  USDT: '1',
  USDC: '1',
  TON: '5.5',
  LTC: '75',
  TRX: '0.12',
};
const STABLE = new Set(['USD', 'USDT', 'USDC']);

/** The smallest "round" amount (1, 2 or 5 × 10^k minor units) at or above usd worth of a currency. */
function roundAmountWorth(usd: bigint, priceText: string, precision: number): bigint {
  const price = parseDecimal(priceText);
  // minor = usd / price × 10^precision
  const exact = (usd * pow10(price.scale) * pow10(precision) + price.num - 1n) / price.num;
  let step = 1n;
  while (step * 10n <= exact) step *= 10n;
  for (const factor of [1n, 2n, 5n, 10n]) if (step * factor >= exact) return step * factor;
  return step * 10n;
}

/**
 * Seeds a pair for every two enabled currencies (mid from SEED_USD_PRICES, spread 0.5 %,
 * 0.1 % between USD-pegged ones, fee 0.1 %, limits about 1 to 100 000 USD) and transfer limits,
 * on an empty rates table only: an operator's changes survive restarts.
 */
export async function seedRates(db: Db): Promise<boolean> {
  return db.transaction(async (tx) => {
    const [existing] = await tx.query('SELECT 1 FROM rates LIMIT 1');
    if (existing) return false;
    const rows = await tx.query<{ code: string; precision: number }>('SELECT code, precision FROM currencies ORDER BY position');
    const known = rows.filter((row) => SEED_USD_PRICES[row.code]);
    for (const src of known) {
      for (const dst of known) {
        if (src.code === dst.code) continue;
        const a = parseDecimal(SEED_USD_PRICES[src.code]!);
        const b = parseDecimal(SEED_USD_PRICES[dst.code]!);
        const rate = significant(a.num * pow10(b.scale), pow10(a.scale) * b.num, 12);
        const spread = STABLE.has(src.code) && STABLE.has(dst.code) ? '0.001' : '0.005';
        const min = roundAmountWorth(1n, SEED_USD_PRICES[src.code]!, Number(src.precision));
        const max = roundAmountWorth(100_000n, SEED_USD_PRICES[src.code]!, Number(src.precision));
        await tx.query(
          `INSERT INTO rates (src, dst, rate, spread, fee_percent, min_amount, max_amount, source) VALUES ($1, $2, $3, $4, '0.001', $5, $6, 'seed')`,
          [src.code, dst.code, rate, spread, min.toString(), max.toString()],
        );
      }
      const transferMin = roundAmountWorth(1n, SEED_USD_PRICES[src.code]!, Number(src.precision)) / 10n || 1n;
      await tx.query('INSERT INTO transfer_settings (currency, min_amount) VALUES ($1, $2) ON CONFLICT (currency) DO NOTHING', [
        src.code,
        transferMin.toString(),
      ]);
    }
    return true;
  });
}

/** Checks a would-be quote against a pair (CLI and tests): throws the same refusals as /check. */
export function previewQuote(terms: TPairTerms, byCode: Map<string, TCurrency>, pay: bigint) {
  const src = byCode.get(terms.src);
  const dst = byCode.get(terms.dst);
  if (!src || !dst) throw new AppError('pair_unavailable', { vars: { src: terms.src, dst: terms.dst } });
  return quoteFromPay(terms, { src: src.precision, dst: dst.precision }, pay);
}
