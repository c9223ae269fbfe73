import { pow10 } from '@obmen/shared';
import { statement, type Queryable } from '../../db/index.ts';
import { keptWhileCounterHolds } from '../../db/kept.ts';
import { AppError } from '../../errors.ts';
import { significant, type TPairTerms } from './quote.ts';

/**
 * Where exchange rates come from. Quotes read a pair's terms from a source; the amounts of a
 * quote are then stored with its token, so an exchange posts exactly what was quoted whatever
 * the source says a second later.
 */
export interface RateSource {
  readonly name: string;
  /** Every enabled pair. */
  pairs(): Promise<TPairTerms[]>;
  /** One pair, or null when there is none or it is disabled. */
  pair(src: string, dst: string): Promise<TPairTerms | null>;
}

type TRateRow = {
  src: string;
  dst: string;
  rate: string;
  spread: string;
  fee_percent: string;
  fee_fixed: string;
  min_amount: string;
  max_amount: string | null;
  enabled: boolean;
  source: string;
};

const RATE_COLUMNS = `r.src, r.dst, r.rate::text AS rate, r.spread::text AS spread, r.fee_percent::text AS fee_percent,
  r.fee_fixed::text AS fee_fixed, r.min_amount::text AS min_amount, r.max_amount::text AS max_amount, r.enabled, r.source`;
/** A pair is usable when it and both of its currencies are enabled. */
export const USABLE = `r.enabled AND EXISTS (SELECT 1 FROM currencies c WHERE c.code = r.src AND c.enabled)
  AND EXISTS (SELECT 1 FROM currencies c WHERE c.code = r.dst AND c.enabled)`;

function toTerms(row: TRateRow): TPairTerms {
  return {
    src: row.src,
    dst: row.dst,
    rate: row.rate,
    spread: row.spread,
    feePercent: row.fee_percent,
    feeFixed: BigInt(row.fee_fixed),
    min: BigInt(row.min_amount),
    max: row.max_amount === null ? null : BigInt(row.max_amount),
    enabled: row.enabled,
    source: row.source,
  };
}

const RATES_VERSION = statement('rates_version', 'SELECT version::text AS version FROM rates_version WHERE id');

/**
 * The default: the `rates` table, which an operator sets (`rates:set`) and the seed fills.
 * The list of pairs is kept until the rates version (migration 007) moves; a pair for a quote
 * is always read afresh.
 */
export class TableRateSource implements RateSource {
  readonly name = 'table';
  readonly db: Queryable;
  constructor(db: Queryable) {
    this.db = db;
  }
  pairs(): Promise<TPairTerms[]> {
    return keptWhileCounterHolds(this.db, RATES_VERSION, 'pairs', async () => {
      const rows = await this.db.query<TRateRow>(`SELECT ${RATE_COLUMNS} FROM rates r WHERE ${USABLE} ORDER BY r.src, r.dst`);
      // Frozen: every caller shares the kept list.
      return Object.freeze(rows.map(toTerms)) as TPairTerms[];
    });
  }
  async pair(src: string, dst: string): Promise<TPairTerms | null> {
    const [row] = await this.db.query<TRateRow>(`SELECT ${RATE_COLUMNS} FROM rates r WHERE r.src = $1 AND r.dst = $2 AND ${USABLE}`, [src, dst]);
    return row ? toTerms(row) : null;
  }
}

// ---- a public price feed ---------------------------------------------------------------------

type TRational = { n: bigint; d: bigint };

/** A JSON number's own text ("65000.12", "1.5e-5") as an exact rational: never through a float. */
export function jsonNumberToRational(text: string): TRational | null {
  const match = /^(-)?(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/.exec(text.trim());
  if (!match) return null;
  const fraction = match[3] ?? '';
  let n = BigInt(match[2]! + fraction);
  let d = pow10(fraction.length);
  const exponent = Number(match[4] ?? 0);
  if (Math.abs(exponent) > 40) return null;
  if (exponent > 0) n *= pow10(exponent);
  if (exponent < 0) d *= pow10(-exponent);
  if (match[1]) n = -n;
  return { n, d };
}

/** JSON.parse keeping every number's source text (Node 22+: the reviver's context.source). */
function parseJsonExact(body: string): unknown {
  return JSON.parse(body, function (this: unknown, _key: string, value: unknown, context?: { source?: string }) {
    return typeof value === 'number' && context?.source !== undefined ? { $number: context.source } : value;
  } as never);
}

/** Our codes → CoinGecko coin ids; fiat codes are its `vs_currencies`. */
export const FEED_COIN_IDS: Record<string, string> = {
  BTC: 'bitcoin',
  ETH: 'ethereum',
  USDT: 'tether',
  USDC: 'usd-coin',
  TON: 'the-open-network',
  LTC: 'litecoin',
  TRX: 'tron',
};
export const FEED_FIATS = ['USD', 'EUR', 'RUB', 'KZT', 'UAH'];

export type TFeedOptions = {
  /** The API base, e.g. https://api.coingecko.com/api/v3 (CoinGecko's simple/price shape). */
  url: string;
  /** Terms (spread, fee, limits, enabled) still come from the table. */
  table: RateSource;
  /** A price fetched this long ago is fetched again. */
  ttlMs?: number;
  /** When the feed fails, prices up to this old are still used; older ones refuse to quote. */
  maxAgeMs?: number;
  fetch?: typeof fetch;
  timeoutMs?: number;
  onError?: (err: unknown) => void;
  /** After each fresh fetch (not a kept one): the history records the new mid rates. */
  onPrices?: () => void;
};

/**
 * Mid rates from a public price feed in CoinGecko's `simple/price` format:
 *   GET {url}/simple/price?ids=bitcoin,tether,…&vs_currencies=usd,eur,rub,…
 *   → {"bitcoin": {"usd": 65000.12, "eur": …}, "tether": {"usd": 1.0, "rub": 92.5, …}, …}
 * Every currency gets a USD price (a fiat one through tether's price in it); a pair's mid rate
 * is price(src) / price(dst). Spread, fee and limits stay the operator's, from the table.
 */
export class FeedRateSource implements RateSource {
  readonly name = 'feed';
  readonly options: Required<Omit<TFeedOptions, 'onError' | 'onPrices'>> & Pick<TFeedOptions, 'onError' | 'onPrices'>;
  prices: { at: number; usd: Map<string, TRational> } | null = null;
  pending: Promise<Map<string, TRational>> | null = null;

  constructor(options: TFeedOptions) {
    this.options = { ttlMs: 30_000, maxAgeMs: 300_000, fetch: globalThis.fetch, timeoutMs: 5_000, ...options };
  }

  feedUrl(): string {
    const ids = Object.values(FEED_COIN_IDS).join(',');
    const vs = FEED_FIATS.map((code) => code.toLowerCase()).join(',');
    return `${this.options.url.replace(/\/+$/, '')}/simple/price?ids=${ids}&vs_currencies=${vs}`;
  }

  async fetchPrices(): Promise<Map<string, TRational>> {
    const response = await this.options.fetch(this.feedUrl(), { signal: AbortSignal.timeout(this.options.timeoutMs), headers: { accept: 'application/json' } });
    if (!response.ok) throw new Error(`rate feed answered ${response.status}`);
    const data = parseJsonExact(await response.text()) as Record<string, Record<string, { $number: string } | undefined> | undefined>;
    const price = (id: string, vs: string): TRational | null => {
      const raw = data?.[id]?.[vs];
      const value = raw && typeof raw === 'object' && '$number' in raw ? jsonNumberToRational(raw.$number) : null;
      return value && value.n > 0n ? value : null;
    };
    const usd = new Map<string, TRational>([['USD', { n: 1n, d: 1n }]]);
    for (const [code, id] of Object.entries(FEED_COIN_IDS)) {
      const value = price(id, 'usd');
      if (value) usd.set(code, value);
    }
    const tetherUsd = price('tether', 'usd');
    for (const fiat of FEED_FIATS) {
      if (fiat === 'USD') continue;
      const tetherInFiat = price('tether', fiat.toLowerCase());
      // 1 FIAT = tether.usd / tether.fiat USD
      if (tetherUsd && tetherInFiat) usd.set(fiat, { n: tetherUsd.n * tetherInFiat.d, d: tetherUsd.d * tetherInFiat.n });
    }
    return usd;
  }

  async usdPrices(): Promise<Map<string, TRational>> {
    const now = Date.now();
    if (this.prices && now - this.prices.at < this.options.ttlMs) return this.prices.usd;
    const fresh = !this.pending;
    this.pending ??= this.fetchPrices().finally(() => {
      this.pending = null;
    });
    try {
      const usd = await this.pending;
      this.prices = { at: Date.now(), usd };
      if (fresh) this.options.onPrices?.();
      return usd;
    } catch (err) {
      this.options.onError?.(err);
      if (this.prices && now - this.prices.at < this.options.maxAgeMs) return this.prices.usd;
      throw new AppError('rates_unavailable');
    }
  }

  /** price(src) / price(dst), 18 significant digits, rounded down. */
  mid(usd: Map<string, TRational>, src: string, dst: string): string | null {
    const a = usd.get(src);
    const b = usd.get(dst);
    if (!a || !b) return null;
    return significant(a.n * b.d, a.d * b.n, 18);
  }

  async pairs(): Promise<TPairTerms[]> {
    const [terms, usd] = await Promise.all([this.options.table.pairs(), this.usdPrices()]);
    return terms.flatMap((pair) => {
      const rate = this.mid(usd, pair.src, pair.dst);
      return rate ? [{ ...pair, rate, source: 'feed' }] : [];
    });
  }

  async pair(src: string, dst: string): Promise<TPairTerms | null> {
    const [terms, usd] = await Promise.all([this.options.table.pair(src, dst), this.usdPrices()]);
    const rate = terms && this.mid(usd, src, dst);
    return terms && rate ? { ...terms, rate, source: 'feed' } : null;
  }
}
