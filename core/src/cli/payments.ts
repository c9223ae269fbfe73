import { parseArgs } from 'node:util';
import { listWebhooks, replayWebhook } from '../domains/payments/webhooks.ts';
import { matchOnDesk } from '../domains/ops/payments.ts';
import { cliOperator } from './ops-actor.ts';
import { bankReceived, chainMine, chainSend } from '../providers/sandbox/payments.ts';
import { loadPaymentProviders } from '../providers/index.ts';
import { loadConfig } from '../config.ts';
import { describePaymentSystems, pricePaymentSystem, setPaymentSystemEnabled } from '../domains/payments/catalogue.ts';
import { listRefusals } from '../inbox/refusals.ts';
import { limitOf, options, type TCommand } from './command.ts';

const WEBHOOKS_USAGE = 'usage: payments:webhooks [provider=<id>] [result=<result>] [limit=<1..1000>]';
const REFUSED_USAGE = 'usage: webhooks:refused [limit=<1..1000>]   (refused webhook and issuer-callback deliveries: counts and newest samples)';
const SYSTEMS_USAGE = 'usage: payments:systems [deposit|withdraw|purchase]';
const ENABLE_USAGE = 'usage: payments:system:enable|disable <deposit|withdraw|purchase> <id> [currency=<code>]';
const PRICE_USAGE = `usage: payments:system:price <deposit|withdraw|purchase> <id> currency=<code> [fee_percent=<percent>] [fee_fixed=<amount>] [level=0|1]
    [min=<amount>] [max=<amount>] [confirmations=<n>]   (amounts in major units of the currency)
  e.g. payments:system:price withdraw sandbox-card currency=RUB fee_percent=1.2 fee_fixed=50 min=500 max=150000`;

const BANK_USAGE =
  'usage: payments:bank:received <reference> [amount=<amount>] [currency=<code>] [payer=<name>]   (amount: what arrived, by default the expected amount; an unknown reference needs amount and currency)';
const CHAIN_SEND_USAGE = 'usage: payments:chain:send <address> amount=<amount>';
const CHAIN_MINE_USAGE = 'usage: payments:chain:mine [blocks=<1..100>]';
const MATCH_USAGE =
  'usage: payments:bank:match <held payment id> <deposit reference or id> --as <operator e-mail>  (another amount becomes a request: request:approve)';
const REPLAY_USAGE = 'usage: payments:webhook:replay <webhook id>';

/** The providers as this machine's core has them (their webhook secrets come from the same environment). */
const providers = () => loadPaymentProviders(loadConfig());

const enable =
  (enabled: boolean): TCommand =>
  async (db, [direction, id, ...rest]) => {
    if (!direction || !id) throw new Error(ENABLE_USAGE);
    const { currency } = options(rest, ['currency'], ENABLE_USAGE);
    await setPaymentSystemEnabled(db, { direction, id, enabled, ...(currency ? { currency } : {}) });
    return (await describePaymentSystems(db, direction)).filter((row) => row.id === id);
  };

/** Payment operator commands. */
export const PAYMENT_COMMANDS: Record<string, TCommand> = {
  'payments:bank:received': async (db, [reference, ...rest]) => {
    if (!reference) throw new Error(BANK_USAGE);
    const { amount, currency, payer } = options(rest, ['amount', 'currency', 'payer'], BANK_USAGE);
    return bankReceived(db, providers(), {
      reference,
      now: new Date(),
      ...(amount ? { amount } : {}),
      ...(currency ? { currency } : {}),
      ...(payer ? { payer } : {}),
    });
  },
  'payments:chain:send': async (db, [address, ...rest]) => {
    const { amount } = options(rest, ['amount'], CHAIN_SEND_USAGE);
    if (!address || !amount) throw new Error(CHAIN_SEND_USAGE);
    return chainSend(db, providers(), { outputs: [{ address, amount }], now: new Date() });
  },
  'payments:chain:mine': async (db, args) => {
    const { blocks } = options(args, ['blocks'], CHAIN_MINE_USAGE);
    const count = blocks === undefined ? 1 : Number(blocks);
    if (!Number.isInteger(count) || count < 1 || count > 100) throw new Error(CHAIN_MINE_USAGE);
    return chainMine(db, providers(), { blocks: count, now: new Date() });
  },
  'payments:bank:match': async (db, args) => {
    const { values, positionals } = parseArgs({ args, strict: true, allowPositionals: true, options: { as: { type: 'string' } } });
    if (positionals.length !== 2) throw new Error(MATCH_USAGE);
    return matchOnDesk(db, await cliOperator(db, values.as, MATCH_USAGE), positionals[0]!, positionals[1]!);
  },
  'payments:webhook:replay': async (db, [id, ...rest]) => {
    if (!id || rest.length) throw new Error(REPLAY_USAGE);
    return replayWebhook(db, providers(), id, new Date());
  },
  'payments:systems': async (db, [direction, ...rest]) => {
    if (rest.length || (direction !== undefined && !['deposit', 'withdraw', 'purchase'].includes(direction))) throw new Error(SYSTEMS_USAGE);
    return describePaymentSystems(db, direction);
  },
  'payments:system:enable': enable(true),
  'payments:system:disable': enable(false),
  'payments:system:price': async (db, [direction, id, ...rest]) => {
    if (!direction || !id) throw new Error(PRICE_USAGE);
    const input = options(rest, ['currency', 'fee_percent', 'fee_fixed', 'min', 'max', 'confirmations', 'level'], PRICE_USAGE);
    await pricePaymentSystem(db, { direction, id, ...input });
    return (await describePaymentSystems(db, direction)).filter((row) => row.id === id && row.currency === input.currency?.toUpperCase());
  },
  'payments:webhooks': async (db, args) => {
    const { provider, result, limit } = options(args, ['provider', 'result', 'limit'], WEBHOOKS_USAGE);
    return listWebhooks(db, { provider, result, limit: limitOf(limit, WEBHOOKS_USAGE) });
  },
  'webhooks:refused': async (db, args) => {
    const { limit } = options(args, ['limit'], REFUSED_USAGE);
    return listRefusals(db, limitOf(limit, REFUSED_USAGE));
  },
};
