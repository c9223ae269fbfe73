import { CARD_KINDS, CARD_REQUIRED_LEVEL, formatAmount, parseAmount, type TCardCatalogue, type TCardKind, type TCardProduct } from '@obmen/shared';
import type { Db, Queryable } from '../../db/index.ts';
import { AppError } from '../../errors.ts';
import { currencies, type TCurrency } from '../currencies/service.ts';
import { userLevel } from '../limits/service.ts';

/** A product row as stored (amounts in minor units). */
export type TProductRow = {
  id: string;
  kind: TCardKind;
  names: { ru: string; en: string };
  descriptions: { ru?: string; en?: string };
  currencies: string[];
  fee_currency: string;
  issue_fee: string;
  monthly_fee: string;
  limits: Record<string, { day: string; month: string }>;
  delivery_days: number | null;
  image: string;
  issuer: string;
  enabled: boolean;
  position: number;
};

const PRODUCT_COLUMNS = `id, kind, names, descriptions, currencies, fee_currency, issue_fee::text AS issue_fee, monthly_fee::text AS monthly_fee,
  limits, delivery_days, image, issuer, enabled, position`;

export async function findProduct(db: Queryable, id: string): Promise<TProductRow | undefined> {
  const [row] = await db.query<TProductRow>(`SELECT ${PRODUCT_COLUMNS} FROM card_products WHERE id = $1`, [id]);
  return row;
}

export async function listProducts(db: Queryable, options: { enabledOnly: boolean }): Promise<TProductRow[]> {
  return db.query<TProductRow>(`SELECT ${PRODUCT_COLUMNS} FROM card_products WHERE enabled OR NOT $1 ORDER BY position, id`, [options.enabledOnly]);
}

const precisionOf = (byCode: Map<string, TCurrency>, code: string) => byCode.get(code)?.precision ?? 0;

/** A product as the API shows it: amounts in major units, only the currencies that are enabled. */
export function publicProduct(row: TProductRow, byCode: Map<string, TCurrency>): TCardProduct {
  const feePrecision = precisionOf(byCode, row.fee_currency);
  const cardCurrencies = row.currencies.filter((code) => byCode.get(code)?.enabled);
  return {
    id: row.id,
    kind: row.kind,
    name: row.names,
    description: { ru: row.descriptions.ru ?? '', en: row.descriptions.en ?? '' },
    currencies: cardCurrencies,
    fee_currency: row.fee_currency,
    issue_fee: formatAmount(row.issue_fee, feePrecision),
    monthly_fee: formatAmount(row.monthly_fee, feePrecision),
    limits: cardCurrencies
      .filter((code) => row.limits[code])
      .map((code) => ({
        currency: code,
        day: formatAmount(row.limits[code]!.day, precisionOf(byCode, code)),
        month: formatAmount(row.limits[code]!.month, precisionOf(byCode, code)),
      })),
    delivery_days: row.delivery_days,
    image: row.image,
  };
}

/** GET /api/card: the enabled products, and whether the caller may order one. */
export async function cardCatalogue(db: Queryable, userId: string): Promise<TCardCatalogue> {
  const byCode = await currencies(db);
  const products = (await listProducts(db, { enabledOnly: true }))
    .filter((row) => byCode.get(row.fee_currency)?.enabled)
    .map((row) => publicProduct(row, byCode))
    .filter((product) => product.currencies.length > 0);
  const level = await userLevel(db, userId);
  return { status: 'ok', products, requirements: { verification_level: CARD_REQUIRED_LEVEL, user_level: level, met: level >= CARD_REQUIRED_LEVEL } };
}

// ---- operator (cli/cards.ts) ----------------------------------------------------------------

export type TProductInput = {
  id: string;
  kind: string;
  name_ru: string;
  name_en: string;
  description_ru?: string;
  description_en?: string;
  currencies: string;
  fee_currency: string;
  issue_fee?: string;
  monthly_fee?: string;
  /** USD:5000/20000,EUR:4500/18000 (major units per day / per month). */
  limits?: string;
  delivery_days?: string;
  image?: string;
  position?: string;
};

const opsError = (message: string) => new AppError('validation', { fields: { _: message } });

function knownCurrency(byCode: Map<string, TCurrency>, code: string): TCurrency {
  const currency = byCode.get(code.trim().toUpperCase());
  if (!currency) throw new AppError('unknown_currency', { vars: { currency: code } });
  return currency;
}

function operatorAmount(text: string, currency: TCurrency, name: string): bigint {
  try {
    const value = parseAmount(text.trim(), currency.precision);
    if (value < 0n) throw opsError(`${name}: not negative`);
    return value;
  } catch (err) {
    if (err instanceof AppError) throw err;
    throw new AppError('not_an_amount', { vars: { name, currency: currency.code, precision: currency.precision, value: text } });
  }
}

function parseLimits(text: string, byCode: Map<string, TCurrency>): Record<string, { day: string; month: string }> {
  const limits: Record<string, { day: string; month: string }> = {};
  for (const part of text.split(',').filter((p) => p.trim())) {
    const match = /^\s*([A-Za-z0-9]{2,10})\s*:\s*([\d.]+)\s*\/\s*([\d.]+)\s*$/.exec(part);
    if (!match) throw opsError(`limits: "${part}" is not CUR:day/month`);
    const currency = knownCurrency(byCode, match[1]!);
    limits[currency.code] = {
      day: operatorAmount(match[2]!, currency, 'limit').toString(),
      month: operatorAmount(match[3]!, currency, 'limit').toString(),
    };
  }
  return limits;
}

/** cards:product:create — a new product, disabled until `cards:product:enable`. */
export async function createProduct(db: Queryable, input: TProductInput): Promise<TProductRow> {
  const byCode = await currencies(db);
  if (!/^[a-z0-9][a-z0-9-]{1,39}$/.test(input.id)) throw opsError('id: lowercase letters, digits and hyphens');
  if (!(CARD_KINDS as readonly string[]).includes(input.kind)) throw opsError('kind: virtual or physical');
  const cardCurrencies = input.currencies.split(',').map((code) => knownCurrency(byCode, code).code);
  const feeCurrency = knownCurrency(byCode, input.fee_currency);
  const deliveryDays = input.kind === 'physical' ? Number(input.delivery_days ?? 10) : null;
  if (deliveryDays !== null && (!Number.isInteger(deliveryDays) || deliveryDays < 1 || deliveryDays > 90)) throw opsError('delivery_days: 1 to 90');
  const inserted = await db.query(
    `INSERT INTO card_products (id, kind, names, descriptions, currencies, fee_currency, issue_fee, monthly_fee, limits, delivery_days, image, position)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) ON CONFLICT (id) DO NOTHING RETURNING id`,
    [
      input.id,
      input.kind,
      JSON.stringify({ ru: input.name_ru, en: input.name_en }),
      JSON.stringify({ ru: input.description_ru ?? '', en: input.description_en ?? '' }),
      cardCurrencies,
      feeCurrency.code,
      operatorAmount(input.issue_fee ?? '0', feeCurrency, 'issue_fee').toString(),
      operatorAmount(input.monthly_fee ?? '0', feeCurrency, 'monthly_fee').toString(),
      JSON.stringify(parseLimits(input.limits ?? '', byCode)),
      deliveryDays,
      input.image ?? `/image/cards/${input.kind}.svg`,
      Number(input.position ?? 0),
    ],
  );
  if (!inserted.length) throw new AppError('validation', { fields: { id: 'ops.config.cards_id_taken' } });
  return (await findProduct(db, input.id))!;
}

async function existingProduct(db: Queryable, id: string): Promise<TProductRow> {
  const row = await findProduct(db, id);
  if (!row) throw opsError(`no card product "${id}"`);
  return row;
}

/** cards:product:price — new fees and limits for new orders (placed orders keep theirs). */
export async function priceProduct(
  db: Queryable,
  id: string,
  input: { issue_fee?: string; monthly_fee?: string; fee_currency?: string; limits?: string },
): Promise<TProductRow> {
  const row = await existingProduct(db, id);
  const byCode = await currencies(db);
  const feeCurrency = knownCurrency(byCode, input.fee_currency ?? row.fee_currency);
  const issueFee = input.issue_fee !== undefined ? operatorAmount(input.issue_fee, feeCurrency, 'issue_fee') : BigInt(row.issue_fee);
  const monthlyFee = input.monthly_fee !== undefined ? operatorAmount(input.monthly_fee, feeCurrency, 'monthly_fee') : BigInt(row.monthly_fee);
  if (input.fee_currency !== undefined && (input.issue_fee === undefined || input.monthly_fee === undefined)) {
    throw opsError('fee_currency: give issue_fee and monthly_fee in it too');
  }
  const limits = input.limits !== undefined ? parseLimits(input.limits, byCode) : row.limits;
  await db.query(`UPDATE card_products SET fee_currency = $2, issue_fee = $3, monthly_fee = $4, limits = $5, updated_at = now() WHERE id = $1`, [
    id,
    feeCurrency.code,
    issueFee.toString(),
    monthlyFee.toString(),
    JSON.stringify(limits),
  ]);
  return existingProduct(db, id);
}

/** cards:product:enable / disable — a disabled product leaves the catalogue; its cards stay. */
export async function enableProduct(db: Queryable, id: string, enabled: boolean): Promise<TProductRow> {
  await existingProduct(db, id);
  await db.query('UPDATE card_products SET enabled = $2, updated_at = now() WHERE id = $1', [id, enabled]);
  return existingProduct(db, id);
}

/** The products a fresh database starts with (seed: on an empty catalogue only). */
export const SEED_PRODUCTS: TProductInput[] = [
  {
    id: 'virtual',
    kind: 'virtual',
    name_ru: 'Виртуальная карта',
    name_en: 'Virtual card',
    description_ru: 'Для покупок в интернете и подписок. Готова через минуту после заказа.',
    description_en: 'For online shopping and subscriptions. Ready a minute after you order it.',
    currencies: 'USD,EUR',
    fee_currency: 'USD',
    issue_fee: '5',
    monthly_fee: '1',
    limits: 'USD:5000/20000,EUR:4500/18000',
    image: '/image/cards/virtual.svg',
    position: '0',
  },
  {
    id: 'physical',
    kind: 'physical',
    name_ru: 'Пластиковая карта',
    name_en: 'Plastic card',
    description_ru: 'Для магазинов и банкоматов по всему миру. Доставка курьером.',
    description_en: 'For shops and cash machines worldwide. Delivered by courier.',
    currencies: 'USD,EUR',
    fee_currency: 'USD',
    issue_fee: '15',
    monthly_fee: '2',
    limits: 'USD:10000/50000,EUR:9000/45000',
    delivery_days: '10',
    image: '/image/cards/physical.svg',
    position: '1',
  },
];

/** Seeds the catalogue once, on a database whose catalogue is empty and whose currencies exist. */
export async function seedCardProducts(db: Db): Promise<boolean> {
  return db.transaction(async (tx) => {
    // Two cores starting together: one seeds, the other then finds the catalogue filled.
    await tx.query('SELECT pg_advisory_xact_lock($1)', [SEED_LOCK]);
    const [any] = await tx.query('SELECT 1 FROM card_products LIMIT 1');
    if (any) return false;
    const [usd] = await tx.query(`SELECT 1 FROM currencies WHERE code IN ('USD', 'EUR') HAVING count(*) = 2`);
    if (!usd) return false;
    for (const product of SEED_PRODUCTS) {
      await createProduct(tx, product);
      await enableProduct(tx, product.id, true);
    }
    return true;
  });
}

const SEED_LOCK = 727_040;
