import { parseAmount } from '@obmen/shared';
import { sandboxesAllowed, type TConfig } from '../config.ts';
import type { Db, Queryable } from '../db/index.ts';
import { createDemoUser } from '../domains/auth/service.ts';
import { SEED_ARTICLES } from './articles.ts';
import { seedRates } from '../domains/rates/service.ts';
import { seedCardProducts } from '../domains/cards/catalogue.ts';
import { postTransaction, systemAccount, userAccount } from '../domains/ledger/posting.ts';
import { seedPaymentSystems } from '../domains/payments/catalogue.ts';
import { SANDBOX_PAYMENT_SYSTEMS } from '../providers/sandbox/catalogue.ts';
import { evmPaymentSystems } from '../providers/evm/catalogue.ts';
import { DEV_CHAIN_ID } from '../providers/evm/chain.ts';
import { seedWithdrawAutoApproval, seedWithdrawLargeAmounts } from '../domains/payments/withdrawals.ts';
import { seedDemoOperator } from '../domains/ops/service.ts';

/**
 * The confirmed demo account of development and test databases (never production: seedDatabase
 * passes demoAccount false there). `ops seed` prints its sign-in in development.
 */
export const DEMO_ACCOUNT = { email: 'demo@obmen.local', password: 'obmen-demo-2026', locale: 'ru' } as const;

export async function findDemoAccountId(db: Queryable): Promise<number | null> {
  const [row] = await db.query<{ account_id: number }>('SELECT account_id FROM users WHERE lower(email) = lower($1)', [DEMO_ACCOUNT.email]);
  return row?.account_id ?? null;
}

/** Names per locale (migration 009); `name` is the fallback for other locales. */
const CURRENCIES: Array<[code: string, kind: 'fiat' | 'crypto', precision: number, names: { ru: string; en: string }]> = [
  ['RUB', 'fiat', 2, { ru: 'Российский рубль', en: 'Russian rouble' }],
  ['USD', 'fiat', 2, { ru: 'Доллар США', en: 'US dollar' }],
  ['EUR', 'fiat', 2, { ru: 'Евро', en: 'Euro' }],
  ['KZT', 'fiat', 2, { ru: 'Казахстанский тенге', en: 'Kazakhstani tenge' }],
  ['UAH', 'fiat', 2, { ru: 'Украинская гривна', en: 'Ukrainian hryvnia' }],
  ['BTC', 'crypto', 8, { ru: 'Биткоин', en: 'Bitcoin' }],
  ['ETH', 'crypto', 18, { ru: 'Эфириум', en: 'Ethereum' }],
  ['USDT', 'crypto', 6, { ru: 'Tether', en: 'Tether' }],
  ['USDC', 'crypto', 6, { ru: 'USD Coin', en: 'USD Coin' }],
  ['TON', 'crypto', 9, { ru: 'Тонкоин', en: 'Toncoin' }],
  ['LTC', 'crypto', 8, { ru: 'Лайткоин', en: 'Litecoin' }],
  ['TRX', 'crypto', 6, { ru: 'TRON', en: 'TRON' }],
];

type TSeedMenu = Record<'header_menu' | 'footer_menu' | 'main_menu', Array<[url: string, title: string]>>;
const MENUS: Record<'ru' | 'en', TSeedMenu> = {
  ru: {
    header_menu: [
      ['exchanges', 'Обмен'],
      ['article/fees', 'Комиссии'],
      ['article/faq', 'Вопросы'],
      ['article/contacts', 'Контакты'],
    ],
    footer_menu: [
      ['terms', 'Соглашение'],
      ['privacy', 'Конфиденциальность'],
      ['aml-kyc', 'AML/KYC'],
      ['fees', 'Комиссии'],
      ['faq', 'Вопросы'],
      ['contacts', 'Контакты'],
    ],
    main_menu: [
      ['exchanges', 'Обмен'],
      ['deposit', 'Пополнить'],
      ['purchase', 'Купить'],
      ['withdraw', 'Вывести'],
      ['transfer', 'Перевести'],
      ['history', 'История'],
      ['cards', 'Карты'],
      ['referral', 'Рефералы'],
      ['settings', 'Настройки'],
      ['logout', 'Выйти'],
    ],
  },
  en: {
    header_menu: [
      ['exchanges', 'Exchange'],
      ['article/fees', 'Fees'],
      ['article/faq', 'FAQ'],
      ['article/contacts', 'Contacts'],
    ],
    footer_menu: [
      ['terms', 'Terms'],
      ['privacy', 'Privacy'],
      ['aml-kyc', 'AML/KYC'],
      ['fees', 'Fees'],
      ['faq', 'FAQ'],
      ['contacts', 'Contacts'],
    ],
    main_menu: [
      ['exchanges', 'Exchange'],
      ['deposit', 'Deposit'],
      ['purchase', 'Buy'],
      ['withdraw', 'Withdraw'],
      ['transfer', 'Transfer'],
      ['history', 'History'],
      ['cards', 'Cards'],
      ['referral', 'Referral'],
      ['settings', 'Settings'],
      ['logout', 'Log out'],
    ],
  },
};

/** Footer logos: partner exchanges, a rate-listing service and banks (files in site/public). */
const FOOTER_IMAGES: Array<[name: string, ext: string, url: string | null]> = [
  ['exchange-north', 'svg', null],
  ['exchange-delta', 'svg', null],
  ['rate-monitor', 'svg', null],
  ['bank-teal', 'svg', null],
  ['bank-aurora', 'svg', null],
];

export type TSeedAnswer = {
  seeded: string[];
  demo_account?: { email: string; password: string; account_id: number };
  demo_operator?: { email: string; password: string; totp_secret: string };
};

/**
 * `ops seed`, which the start scripts run before the core when SEED is on: the catalogue of an
 * empty database (seedDemoData); outside production the demo account; in development also its
 * balances and its sign-in, for the developer's terminal (the core's log never carries it).
 */
export async function seedDatabase(
  db: Db,
  config: Pick<TConfig, 'NODE_ENV' | 'SANDBOX_PROVIDERS_IN_PRODUCTION'> & Partial<Pick<TConfig, 'EVM_RPC_URL' | 'EVM_CHAIN_ID'>>,
): Promise<TSeedAnswer> {
  const seeded = await seedDemoData(db, { demoAccount: config.NODE_ENV !== 'production', sandboxCatalogue: sandboxesAllowed(config) });
  // The EVM chain's deposit system, once a node is configured (also on a database seeded before).
  if (config.EVM_RPC_URL && (await db.transaction((tx) => seedPaymentSystems(tx, evmPaymentSystems(config.EVM_CHAIN_ID ?? DEV_CHAIN_ID), 'evm'))))
    seeded.push('EVM deposit system');
  if (config.NODE_ENV !== 'development') return { seeded };
  if (await seedDemoBalances(db)) seeded.push('demo balances (development only)');
  const accountId = await findDemoAccountId(db);
  // The back office's demo operator, printed like the demo account: /ops opens at once.
  const demoOperator = await seedDemoOperator(db, new Date());
  return {
    seeded,
    demo_operator: demoOperator,
    ...(accountId ? { demo_account: { email: DEMO_ACCOUNT.email, password: DEMO_ACCOUNT.password, account_id: accountId } } : {}),
  };
}

/**
 * Seeds a fresh database once: a database that already has currencies is left alone, so an
 * operator's edits survive restarts. The payment systems and card products seeded all run on
 * sandbox providers, so they are seeded only where sandboxes may run (`sandboxCatalogue`:
 * never production, but for the staging switch); the demo account only outside production.
 * Returns what was written.
 */
export async function seedDemoData(db: Db, options: { demoAccount: boolean; sandboxCatalogue: boolean }): Promise<string[]> {
  const seeded: string[] = [];
  if (await seedPlatform(db)) seeded.push('currencies, site settings, menus, articles');
  // Realistic rates for every pair and transfer limits, on an empty rates table only.
  if (await seedRates(db)) seeded.push('rates and transfer limits');
  await seedReferralTerms(db);
  // Withdrawals up to these amounts need no operator (an empty table only).
  if (await db.transaction((tx) => seedWithdrawAutoApproval(tx))) seeded.push('withdrawal auto-approval limits');
  // From these amounts a withdrawal approved by hand needs a second operator (an empty table only).
  if (await db.transaction((tx) => seedWithdrawLargeAmounts(tx))) seeded.push('withdrawal four-eyes amounts');
  if (options.sandboxCatalogue) {
    // On an empty catalogue only (also on a database seeded before it existed).
    if (await db.transaction((tx) => seedPaymentSystems(tx, SANDBOX_PAYMENT_SYSTEMS))) seeded.push('sandbox payment systems');
    if (await seedCardProducts(db)) seeded.push('card products (sandbox issuer)');
  }
  // Also on a database seeded before accounts existed; dev and test only.
  if (options.demoAccount && !(await findDemoAccountId(db))) {
    // Verified, so the demo shows withdrawals and cards too, which level 0 does not allow.
    await db.transaction(async (tx) => {
      const accountId = await createDemoUser(tx, DEMO_ACCOUNT);
      await tx.query('UPDATE users SET verification_level = 1 WHERE account_id = $1', [accountId]);
    });
    seeded.push('verified demo user');
  }
  return seeded;
}

/**
 * The referral programme's default terms (20% of each fee, paid in USDT after 14 days, at least
 * 1 USDT), once: an operator changes them with referral:terms and they stay.
 */
async function seedReferralTerms(db: Db): Promise<void> {
  await db.query(
    `INSERT INTO referral_terms (share, currency, hold_seconds, min_payout)
     SELECT 0.2, code, 14 * 86400, power(10::numeric, precision) FROM currencies WHERE code = 'USDT'
     ON CONFLICT (id) DO NOTHING`,
  );
}

function seedPlatform(db: Db): Promise<boolean> {
  return db.transaction(async (tx) => {
    const [existing] = await tx.query('SELECT 1 FROM currencies LIMIT 1');
    if (existing) return false;
    for (const [index, [code, kind, precision, names]] of CURRENCIES.entries()) {
      await tx.query('INSERT INTO currencies (code, kind, precision, name, names, logo, position) VALUES ($1, $2, $3, $4, $5, $6, $7)', [
        code,
        kind,
        precision,
        names.en,
        JSON.stringify(names),
        `/image/currencies/${code.toLowerCase()}.svg`,
        index,
      ]);
    }
    await tx.query(
      `INSERT INTO site_settings (key, value) VALUES
        ('logo_url', '"/image/logo.svg"'), ('auth_type', '"password"'), ('site_blocked', 'false')
       ON CONFLICT (key) DO NOTHING`,
    );
    for (const [locale, menus] of Object.entries(MENUS)) {
      for (const [menu, items] of Object.entries(menus)) {
        for (const [position, [url, title]] of items.entries()) {
          await tx.query('INSERT INTO menu_items (locale, menu, url, title, position) VALUES ($1, $2, $3, $4, $5)', [locale, menu, url, title, position]);
        }
      }
    }
    for (const article of SEED_ARTICLES) {
      await tx.query('INSERT INTO articles (name, locale, title, body_html) VALUES ($1, $2, $3, $4)', [
        article.name,
        article.locale,
        article.title,
        article.body_html,
      ]);
    }
    for (const [position, [name, ext, url]] of FOOTER_IMAGES.entries()) {
      await tx.query('INSERT INTO footer_images (name, ext, url, position) VALUES ($1, $2, $3, $4)', [name, ext, url, position]);
    }
    return true;
  });
}

/** What the demo account starts with in development: enough to try every money flow. */
export const DEMO_BALANCES: Record<string, string> = { USDT: '1000', BTC: '0.05', ETH: '1.5', RUB: '50000', USD: '500' };
const DEMO_BALANCES_LOCK = 727_005;

/**
 * Development only (seedDatabase): credits the demo account through the ledger, once per database
 * (against the house's adjustment account, actor 'seed'), so exchange, transfer and history
 * can be tried before deposits exist.
 */
export async function seedDemoBalances(db: Db): Promise<boolean> {
  return db.transaction(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock($1)', [DEMO_BALANCES_LOCK]);
    const [user] = await tx.query<{ id: string }>('SELECT id::text AS id FROM users WHERE lower(email) = lower($1)', [DEMO_ACCOUNT.email]);
    if (!user) return false;
    const [done] = await tx.query(
      `SELECT 1 FROM ledger_transactions t JOIN postings p ON p.transaction_id = t.id JOIN ledger_accounts a ON a.id = p.account_id
       WHERE t.actor = 'seed' AND a.user_id = $1 LIMIT 1`,
      [user.id],
    );
    if (done) return false;
    const precisions = new Map(
      (await tx.query<{ code: string; precision: number }>('SELECT code, precision FROM currencies')).map((row) => [row.code, Number(row.precision)]),
    );
    for (const [currency, amount] of Object.entries(DEMO_BALANCES)) {
      const precision = precisions.get(currency);
      if (precision === undefined) continue;
      const credit = parseAmount(amount, precision);
      await postTransaction(tx, {
        kind: 'adjustment',
        postings: [
          { account: userAccount(user.id, currency), amount: credit },
          { account: systemAccount('adjustment', currency), amount: -credit },
        ],
        memo: 'demo balances (development only)',
        actor: 'seed',
      });
    }
    return true;
  });
}
