import type {
  TConfigChange,
  TOpsCardCreateBody,
  TOpsCardEnableBody,
  TOpsCardProductRow,
  TConfigSetting,
  TLocale,
  TOpsArticleBody,
  TOpsMenuItemBody,
  TOpsMenuRemoveBody,
  TOpsMoneyRow,
  TOpsPaymentEnableBody,
  TOpsPaymentSystemRow,
  TOpsPermission,
  TOpsRateBody,
  TOpsRateRow,
} from '@obmen/shared';
import { formatAmount } from '@obmen/shared';
import type { Db, Queryable } from '../../db/index.ts';
import { createProduct, enableProduct, findProduct, listProducts, priceProduct, type TProductRow } from '../cards/catalogue.ts';
import { currencies, type TCurrency } from '../currencies/service.ts';
import { notFound } from '../../errors.ts';
import { writeAudit } from '../audit/service.ts';
import { getArticle, getMenus, listArticles, markdownToHtml, removeMenuItem, saveArticle, servedHtml, setMenuItem } from '../content/service.ts';
import { describePaymentSystems, pricePaymentSystemIn, setPaymentSystemEnabled } from '../payments/catalogue.ts';
import { describeRates, setRate } from '../rates/service.ts';
import { noticeRates } from '../events/service.ts';
import { FeedRateSource, type RateSource } from '../rates/source.ts';
import { operatorTerms, setReferralTerms } from '../referral/service.ts';
import { getSiteSettings, setSiteSetting } from '../site/service.ts';
import { listLimits, setLevelLimit } from '../limits/service.ts';
import { setAutoApproval, setLargeAmount, withdrawalAmounts } from '../payments/withdrawals.ts';
import { setTransferSettings, transferTerms } from '../transfer/service.ts';
import type { TOpsActor } from './customers.ts';
import { operatorActor } from './service.ts';

/*
 * Configuration from /ops/config. Each setting is changed by the service its `ops` command calls;
 * what a setting was and became goes to the audit trail in the transaction of the change.
 */

type TValueOf<S extends TConfigSetting> = Extract<TConfigChange, { setting: S }>['value'];
type TSetting<S extends TConfigSetting> = {
  permission: TOpsPermission;
  /** What the setting is now (the part the value names), as the audit trail's `before`. */
  read: (db: Queryable, value: TValueOf<S>) => Promise<object | null>;
  /** The command's service; answers the setting as it became. */
  apply: (tx: Queryable, value: TValueOf<S>) => Promise<object | null>;
};

/** A system's rows as `payments:systems` lists them: one currency's when named. */
async function systemRows(db: Queryable, direction: string, id: string, currency?: string) {
  const rows = (await describePaymentSystems(db, direction)) as unknown as Array<TOpsPaymentSystemRow & { fields?: unknown }>;
  return rows.filter((row) => row.id === id && (currency === undefined || row.currency === currency.toUpperCase())).map(({ fields: _, ...row }) => row);
}

const systemTerms = async (db: Queryable, value: TValueOf<'payments.price'>) => (await systemRows(db, value.direction, value.id, value.currency))[0] ?? null;

const rank = (row: TProductRow, code: string) => (row.currencies.includes(code) ? row.currencies.indexOf(code) : row.currencies.length);

/** A card product as `cards:products` lists it, in major units (precision 0 for a currency no longer known). */
function cardProductRow(row: TProductRow, byCode: Map<string, TCurrency>): TOpsCardProductRow {
  const major = (minor: string, code: string) => formatAmount(minor, byCode.get(code)?.precision ?? 0);
  return {
    id: row.id,
    kind: row.kind,
    name: row.names,
    currencies: row.currencies,
    fee_currency: row.fee_currency,
    issue_fee: major(row.issue_fee, row.fee_currency),
    monthly_fee: major(row.monthly_fee, row.fee_currency),
    // In the card's currency order (a jsonb object keeps its keys in its own order).
    limits: Object.entries(row.limits)
      .sort(([a], [b]) => rank(row, a) - rank(row, b))
      .map(([code, limit]) => ({ currency: code, day: major(limit.day, code), month: major(limit.month, code) })),
    delivery_days: row.delivery_days,
    enabled: row.enabled,
  };
}

/** One product's row; another id answers like a missing one. */
async function cardProduct(db: Queryable, id: string): Promise<TOpsCardProductRow> {
  const row = await findProduct(db, id);
  if (!row) throw notFound();
  return cardProductRow(row, await currencies(db));
}

/** A currency's withdrawal amount as its command answers it (`min_amount`/`max_amount`); an unknown currency has none. */
async function withdrawalAmount(db: Queryable, code: string, which: 'large' | 'auto', key: string) {
  const amounts = (await withdrawalAmounts(db, code.toUpperCase())).get(code.toUpperCase());
  return amounts ? { currency: code.toUpperCase(), [key]: amounts[which] } : null;
}

/** The sensitive settings: proposed as `config.change`, applied on a second operator's approval. */
const SETTINGS: { [S in TConfigSetting]: TSetting<S> } = {
  'site.auth_type': {
    permission: 'config.site',
    read: async (db) => ({ auth_type: (await getSiteSettings(db)).auth_type }),
    apply: async (tx, value) => {
      await setSiteSetting(tx, 'auth_type', value);
      return { auth_type: value };
    },
  },
  'site.site_blocked': {
    permission: 'config.site',
    read: async (db) => ({ site_blocked: (await getSiteSettings(db)).site_blocked }),
    apply: async (tx, value) => {
      await setSiteSetting(tx, 'site_blocked', value);
      return { site_blocked: value };
    },
  },
  'referral.terms': { permission: 'config.money', read: (db) => operatorTerms(db), apply: setReferralTerms },
  'payments.price': {
    permission: 'config.money',
    read: systemTerms,
    apply: async (tx, value) => {
      await pricePaymentSystemIn(tx, value);
      return systemTerms(tx, value);
    },
  },
  'cards.price': {
    permission: 'config.money',
    read: (db, value) => cardProduct(db, value.id),
    apply: async (tx, { id, ...prices }) => {
      await cardProduct(tx, id);
      await priceProduct(tx, id, prices);
      return cardProduct(tx, id);
    },
  },
  'limits.level': {
    permission: 'config.money',
    read: async (db, value) => (await listLimits(db, value))[0] ?? null,
    apply: setLevelLimit,
  },
  'transfer.terms': {
    permission: 'config.money',
    read: async (db, value) => (await transferTerms(db, value.currency.toUpperCase()))[0] ?? null,
    apply: (tx, { currency, ...terms }) => setTransferSettings(tx, currency, terms),
  },
  'withdraw.large': {
    permission: 'config.money',
    read: async (db, value) => withdrawalAmount(db, value.currency, 'large', 'min_amount'),
    apply: (tx, value) => setLargeAmount(tx, value.currency, value.amount),
  },
  'withdraw.auto': {
    permission: 'config.money',
    read: async (db, value) => withdrawalAmount(db, value.currency, 'auto', 'max_amount'),
    apply: (tx, value) => setAutoApproval(tx, value.currency, value.amount),
  },
};

const settingOf = <S extends TConfigSetting>(setting: S) => SETTINGS[setting] as unknown as TSetting<S>;

export const configPermission = (change: TConfigChange): TOpsPermission => SETTINGS[change.setting].permission;
/** One open request per setting; per system and currency for a payment system's terms, per product for a card's, per currency for transfer and withdrawal amounts. */
export const configSubject = (change: TConfigChange) =>
  change.setting === 'payments.price'
    ? `config:payments.price:${change.value.direction}:${change.value.id}:${change.value.currency.toUpperCase()}`
    : change.setting === 'cards.price'
      ? `config:cards.price:${change.value.id}`
      : change.setting === 'limits.level'
        ? `config:limits.level:${change.value.level}:${change.value.operation}`
        : change.setting === 'transfer.terms' || change.setting === 'withdraw.large' || change.setting === 'withdraw.auto'
          ? `config:${change.setting}:${change.value.currency.toUpperCase()}`
          : `config:${change.setting}`;

/** Thrown to roll a trial back: the change is proven to apply without being kept. */
class Trial extends Error {}

/**
 * At proposal: the change is tried in a transaction that is rolled back, so a value its service
 * refuses is refused now, with that service's own error, rather than at approval.
 */
export async function tryConfigChange(db: Db, change: TConfigChange): Promise<void> {
  try {
    await db.transaction(async (tx) => {
      await settingOf(change.setting).apply(tx, change.value as never);
      throw new Trial();
    });
  } catch (err) {
    if (!(err instanceof Trial)) throw err;
  }
}

/** At approval, in its transaction: the before and after the audit row keeps. */
export async function applyConfigChange(tx: Queryable, change: TConfigChange): Promise<{ before: object | null; after: object | null }> {
  const setting = settingOf(change.setting);
  const before = await setting.read(tx, change.value as never);
  return { before, after: await setting.apply(tx, change.value as never) };
}

// ---- rates -----------------------------------------------------------------------------------

const pairOf = async (db: Queryable, src: string, dst: string) =>
  (await describeRates(db, `${src}/${dst}`)).find((row) => row.src === src && row.dst === dst) ?? null;

/** The pairs as `rates:list` shows them, and what quotes read their mid rates from. */
export async function ratesConfig(db: Queryable, source: RateSource) {
  const prices = source instanceof FeedRateSource ? source.prices : null;
  return {
    pairs: (await describeRates(db)) as unknown as TOpsRateRow[],
    feed: { source: source.name, fetched_at: prices ? new Date(prices.at).toISOString() : null },
  };
}

/** `rates:set` from the screen: the pair before and after on the audit row, in the change's transaction. */
export async function changeRate(db: Db, actor: TOpsActor, body: TOpsRateBody): Promise<TOpsRateRow> {
  const { src, dst, ...terms } = body;
  const [from, to] = [src.toUpperCase(), dst.toUpperCase()];
  const after = await db.transaction(async (tx) => {
    const before = await pairOf(tx, from, to);
    const changed = await setRate(tx, { src: from, dst: to, ...terms }, actor.now);
    const after = (await pairOf(tx, changed.src, changed.dst)) as unknown as TOpsRateRow;
    await writeAudit(tx, {
      actor: operatorActor(actor.operator),
      action: 'config.rate',
      subject: `rate:${changed.src}/${changed.dst}`,
      requestId: actor.requestId,
      ip: actor.ip,
      before,
      after,
    });
    return after;
  });
  // The pair pages' charts hear of it once it is committed.
  if (terms.rate !== undefined) noticeRates(db);
  return after;
}

// ---- payment systems -------------------------------------------------------------------------

export async function paymentSystems(db: Queryable) {
  return { systems: (await describePaymentSystems(db)).map(({ fields: _, ...row }) => row) };
}

/** `payments:system:enable|disable` from the screen: direct (nobody's money moves), audited with the system's rows before and after. */
export async function enablePaymentSystem(db: Db, actor: TOpsActor, body: TOpsPaymentEnableBody) {
  await db.transaction(async (tx) => {
    const before = await systemRows(tx, body.direction, body.id, body.currency);
    await setPaymentSystemEnabled(tx, body);
    const after = await systemRows(tx, body.direction, body.id, body.currency);
    await writeAudit(tx, {
      actor: operatorActor(actor.operator),
      action: body.enabled ? 'config.payment_enable' : 'config.payment_disable',
      subject: `payment_system:${body.direction}:${body.id}${body.currency ? `:${body.currency.toUpperCase()}` : ''}`,
      requestId: actor.requestId,
      ip: actor.ip,
      before: { rows: before },
      after: { rows: after },
    });
  });
  return paymentSystems(db);
}

// ---- card products ---------------------------------------------------------------------------

export async function cardProducts(db: Queryable) {
  const byCode = await currencies(db);
  return { products: (await listProducts(db, { enabledOnly: false })).map((row) => cardProductRow(row, byCode)) };
}

/** `cards:product:enable|disable` from the screen: direct (nobody's money moves; placed orders keep theirs), audited with the product before and after. */
export async function enableCardProduct(db: Db, actor: TOpsActor, body: TOpsCardEnableBody) {
  await db.transaction(async (tx) => {
    const before = await cardProduct(tx, body.id);
    await enableProduct(tx, body.id, body.enabled);
    await writeAudit(tx, {
      actor: operatorActor(actor.operator),
      action: body.enabled ? 'config.card_enable' : 'config.card_disable',
      subject: `card_product:${body.id}`,
      requestId: actor.requestId,
      ip: actor.ip,
      before,
      after: await cardProduct(tx, body.id),
    });
  });
  return cardProducts(db);
}

/** `cards:product:create` from the screen: out of the catalogue until put in; the audit row's `after` is the new product. */
export async function createCardProduct(db: Db, actor: TOpsActor, body: TOpsCardCreateBody) {
  await db.transaction(async (tx) => {
    const created = await createProduct(tx, body);
    await writeAudit(tx, {
      actor: operatorActor(actor.operator),
      action: 'config.card_create',
      subject: `card_product:${created.id}`,
      requestId: actor.requestId,
      ip: actor.ip,
      before: null,
      after: await cardProduct(tx, created.id),
    });
  });
  return cardProducts(db);
}

export const limitsConfig = async (db: Queryable) => ({ limits: await listLimits(db) });

/** Per currency, what `transfer:set`, `withdraw:large` and `withdraw:auto` set (each changed through config.change requests). */
export async function moneyConfig(db: Queryable): Promise<{ currencies: TOpsMoneyRow[] }> {
  const [byCode, terms, amounts] = await Promise.all([currencies(db), transferTerms(db), withdrawalAmounts(db)]);
  const transfer = new Map(terms.map(({ currency, ...rest }) => [currency, rest]));
  return {
    currencies: [...byCode.values()].map((currency) => ({
      currency: currency.code,
      enabled: currency.enabled,
      transfer: transfer.get(currency.code) ?? null,
      large: amounts.get(currency.code)?.large ?? null,
      auto: amounts.get(currency.code)?.auto ?? null,
    })),
  };
}

export async function siteConfig(db: Queryable) {
  return { settings: await getSiteSettings(db) };
}

// ---- articles --------------------------------------------------------------------------------

export const articleList = async (db: Queryable) => ({ articles: (await listArticles(db)).map((row) => ({ ...row, bytes: Number(row.bytes) })) });
export const articleOf = async (db: Queryable, name: string, locale: TLocale) => ({ article: await getArticle(db, name, locale) });
/** The live preview: Markdown as `article:set` converts it, then as a page serves it. */
export const previewArticle = (markdown: string) => ({ html: servedHtml(markdownToHtml(markdown)) });

/** `article:set` from the screen: stored sanitised; the audit row keeps the title and body before and after. */
export async function publishArticle(db: Db, actor: TOpsActor, body: TOpsArticleBody) {
  return db.transaction(async (tx) => {
    const [was] = await tx.query<{ title: string; body_html: string }>('SELECT title, body_html FROM articles WHERE name = $1 AND locale = $2 FOR UPDATE', [
      body.name,
      body.locale,
    ]);
    const saved = await saveArticle(tx, { name: body.name, locale: body.locale, title: body.title, body_html: markdownToHtml(body.markdown) });
    await writeAudit(tx, {
      actor: operatorActor(actor.operator),
      action: 'config.article',
      subject: `article:${body.name}:${body.locale}`,
      requestId: actor.requestId,
      ip: actor.ip,
      before: was ?? null,
      after: { title: saved.title, body_html: saved.body_html },
    });
    return { article: saved };
  });
}

// ---- menus -----------------------------------------------------------------------------------

export const menusConfig = async (db: Queryable) => ({ menus: { ru: (await getMenus(db, 'ru')).menus, en: (await getMenus(db, 'en')).menus } });

const menuItem = async (db: Queryable, { locale, menu, url }: TOpsMenuRemoveBody) =>
  (
    await db.query<{ title: string; position: number; icon_url: string | null }>(
      'SELECT title, position, icon_url FROM menu_items WHERE locale = $1 AND menu = $2 AND url = $3 FOR UPDATE',
      [locale, menu, url],
    )
  )[0] ?? null;

/** `menu:set` and `menu:remove` from the screen, the item before and after on the audit row. */
export async function changeMenu(db: Db, actor: TOpsActor, change: { set: TOpsMenuItemBody } | { remove: TOpsMenuRemoveBody }) {
  await db.transaction(async (tx) => {
    const target = 'set' in change ? change.set : change.remove;
    const before = await menuItem(tx, target);
    if ('set' in change) await setMenuItem(tx, change.set);
    else if (!(await removeMenuItem(tx, target.locale, target.menu, target.url))) throw notFound();
    await writeAudit(tx, {
      actor: operatorActor(actor.operator),
      action: 'set' in change ? 'config.menu_set' : 'config.menu_remove',
      subject: `menu:${target.locale}:${target.menu}:${target.url}`,
      requestId: actor.requestId,
      ip: actor.ip,
      before,
      after: await menuItem(tx, target),
    });
  });
  return menusConfig(db);
}
