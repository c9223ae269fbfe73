import { CARD_STATUSES } from '@obmen/shared';
import { loadConfig, type TConfig } from '../config.ts';
import type { Db } from '../db/index.ts';
import { openDocumentCipher } from '../domains/verification/cipher.ts';
import { createProduct, enableProduct, listProducts, priceProduct, type TProductInput } from '../domains/cards/catalogue.ts';
import { listCallbacks, receiveIssuerCallback, replayCallback } from '../domains/cards/callbacks.ts';
import { loadCardIssuers } from '../providers/index.ts';
import { advanceSandboxIssuer, type sandboxIssuer, sandboxProgress } from '../providers/sandbox/issuer.ts';
import { limitOf, options, type TCommand } from './command.ts';

const PRODUCT_FIELDS = [
  'id',
  'kind',
  'name_ru',
  'name_en',
  'description_ru',
  'description_en',
  'currencies',
  'fee_currency',
  'issue_fee',
  'monthly_fee',
  'limits',
  'delivery_days',
  'image',
  'position',
];
const CREATE_USAGE = `usage: cards:product:create id=<slug> kind=virtual|physical name_ru=… name_en=… currencies=USD,EUR fee_currency=USD
  [issue_fee=5] [monthly_fee=1] [limits=USD:5000/20000,EUR:4500/18000] [delivery_days=10 (physical)] [image=/image/cards/….svg]
  [description_ru=…] [description_en=…] [position=0]   (amounts in major units; the product starts disabled)`;
const PRICE_USAGE = 'usage: cards:product:price id=<slug> [issue_fee=…] [monthly_fee=…] [fee_currency=… (with both fees)] [limits=CUR:day/month,…]';
const ORDERS_USAGE = `usage: cards:orders [status=${CARD_STATUSES.join('|')}] [account=<8-digit account id>] [limit=1..1000]`;
const ADVANCE_USAGE = 'usage: cards:issuer:advance [at=<ISO time, default now>]   (runs the sandbox issuer steps due by then)';

const ORDER_COLUMNS = `c.public_id::text AS id, u.account_id, c.product_id AS product, c.kind, c.currency, c.name_on_card, c.status, c.reason,
  c.fee_currency, c.issue_fee::text AS issue_fee, c.monthly_fee::text AS monthly_fee, c.issuer, c.issuer_ref,
  CASE WHEN c.last4 IS NULL THEN NULL ELSE c.bin || '…' || c.last4 END AS card, c.created_at, c.updated_at`;

/**
 * Cards for operators: the catalogue (cards:products, cards:product:create|price|enable|disable),
 * orders (cards:orders, cards:order:show), the sandbox issuer (cards:issuer, cards:issuer:advance) and
 * the callbacks' inbox (cards:callbacks, cards:callback:replay). Nothing here shows a card number beyond its BIN and last four.
 */
export function makeCardCommands(getConfig: () => TConfig): Record<string, TCommand> {
  return {
    'cards:products': (db) => listProducts(db, { enabledOnly: false }),
    'cards:product:create': async (db, args) => {
      const input = options(args, PRODUCT_FIELDS, CREATE_USAGE);
      for (const required of ['id', 'kind', 'name_ru', 'name_en', 'currencies', 'fee_currency']) {
        if (!input[required]) throw new Error(`${required} is required\n${CREATE_USAGE}`);
      }
      return createProduct(db, input as TProductInput);
    },
    'cards:product:price': async (db, args) => {
      const { id, ...rest } = options(args, ['id', 'issue_fee', 'monthly_fee', 'fee_currency', 'limits'], PRICE_USAGE);
      if (!id) throw new Error(PRICE_USAGE);
      return priceProduct(db, id, rest);
    },
    'cards:product:enable': async (db, args) => {
      const { id } = options(args, ['id'], 'usage: cards:product:enable id=<slug>');
      if (!id) throw new Error('usage: cards:product:enable id=<slug>');
      return enableProduct(db, id, true);
    },
    'cards:product:disable': async (db, args) => {
      const { id } = options(args, ['id'], 'usage: cards:product:disable id=<slug>');
      if (!id) throw new Error('usage: cards:product:disable id=<slug>');
      return enableProduct(db, id, false);
    },
    'cards:orders': async (db, args) => {
      const { status, account, limit } = options(args, ['status', 'account', 'limit'], ORDERS_USAGE);
      if (status !== undefined && !(CARD_STATUSES as readonly string[]).includes(status)) throw new Error(ORDERS_USAGE);
      if (account !== undefined && !/^\d{8}$/.test(account)) throw new Error(ORDERS_USAGE);
      return db.query(
        `SELECT ${ORDER_COLUMNS} FROM cards c JOIN users u ON u.id = c.user_id
         WHERE ($1::text IS NULL OR c.status = $1) AND ($2::int IS NULL OR u.account_id = $2) ORDER BY c.id DESC LIMIT $3`,
        [status ?? null, account === undefined ? null : Number(account), limitOf(limit, ORDERS_USAGE)],
      );
    },
    'cards:order:show': async (db, args) => {
      const [id] = args;
      if (!id || !/^[0-9a-f-]{36}$/i.test(id)) throw new Error('usage: cards:order:show <card id>');
      const [order] = await db.query(`SELECT ${ORDER_COLUMNS}, c.address FROM cards c JOIN users u ON u.id = c.user_id WHERE c.public_id::text = $1`, [
        id.toLowerCase(),
      ]);
      if (!order) throw new Error(`no card order ${id}`);
      const activity = await db.query(
        `SELECT a.kind, a.amount::text AS amount, a.currency, a.ledger_transaction_id::text AS transaction, a.actor, a.created_at
         FROM card_activity a JOIN cards c ON c.id = a.card_id WHERE c.public_id::text = $1 ORDER BY a.id`,
        [id.toLowerCase()],
      );
      return { order, activity };
    },
    'cards:issuer': async (db, args) => {
      const { limit } = options(args, ['limit'], 'usage: cards:issuer [limit=1..1000]');
      return sandboxProgress(db, limitOf(limit, 'usage: cards:issuer [limit=1..1000]'));
    },
    'cards:issuer:advance': async (db: Db, args) => {
      const { at } = options(args, ['at'], ADVANCE_USAGE);
      const when = at ? new Date(at) : new Date();
      if (Number.isNaN(when.getTime())) throw new Error(ADVANCE_USAGE);
      const config = getConfig();
      const sandbox = loadCardIssuers(
        config,
        openDocumentCipher(config, (msg) => console.error(msg)),
      ).get('sandbox') as ReturnType<typeof sandboxIssuer>;
      const delivered = await advanceSandboxIssuer(
        db,
        sandbox,
        (rawBody, signature) => receiveIssuerCallback(db, sandbox, { rawBody, signature, now: when }),
        when,
      );
      return { delivered, at: when.toISOString() };
    },
    'cards:callbacks': async (db, args) => {
      const { limit } = options(args, ['limit'], 'usage: cards:callbacks [limit=1..1000]');
      return listCallbacks(db, limitOf(limit, 'usage: cards:callbacks [limit=1..1000]'));
    },
    'cards:callback:replay': async (db, [id, ...rest]) => {
      if (!id || rest.length) throw new Error('usage: cards:callback:replay <callback id>');
      const config = getConfig();
      const issuers = loadCardIssuers(
        config,
        openDocumentCipher(config, (msg) => console.error(msg)),
      );
      return replayCallback(db, issuers, id, new Date());
    },
  };
}

export const CARD_COMMANDS = makeCardCommands(loadConfig);
