import { listWebhooks } from '../domains/payments/webhooks.ts';
import { describePaymentSystems, pricePaymentSystem, setPaymentSystemEnabled } from '../domains/payments/catalogue.ts';
import { options, type TCommand } from './command.ts';

const WEBHOOKS_USAGE = 'usage: payments:webhooks [provider=<id>] [result=<result>] [limit=<1..1000>]';
const SYSTEMS_USAGE = 'usage: payments:systems [deposit|withdraw|purchase]';
const ENABLE_USAGE = 'usage: payments:system:enable|disable <deposit|withdraw|purchase> <id> [currency=<code>]';
const PRICE_USAGE = `usage: payments:system:price <deposit|withdraw|purchase> <id> currency=<code> [fee_percent=<percent>] [fee_fixed=<amount>]
    [min=<amount>] [max=<amount>] [confirmations=<n>]   (amounts in major units of the currency)
  e.g. payments:system:price withdraw sandbox-card currency=RUB fee_percent=1.2 fee_fixed=50 min=500 max=150000`;

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
  'payments:systems': async (db, [direction, ...rest]) => {
    if (rest.length || (direction !== undefined && !['deposit', 'withdraw', 'purchase'].includes(direction))) throw new Error(SYSTEMS_USAGE);
    return describePaymentSystems(db, direction);
  },
  'payments:system:enable': enable(true),
  'payments:system:disable': enable(false),
  'payments:system:price': async (db, [direction, id, ...rest]) => {
    if (!direction || !id) throw new Error(PRICE_USAGE);
    const input = options(rest, ['currency', 'fee_percent', 'fee_fixed', 'min', 'max', 'confirmations'], PRICE_USAGE);
    await pricePaymentSystem(db, { direction, id, ...input });
    return (await describePaymentSystems(db, direction)).filter((row) => row.id === id && row.currency === input.currency?.toUpperCase());
  },
  'payments:webhooks': async (db, args) => {
    const { provider, result, limit } = options(args, ['provider', 'result', 'limit'], WEBHOOKS_USAGE);
    const count = limit === undefined ? 50 : Number(limit);
    if (!Number.isInteger(count) || count < 1 || count > 1000) throw new Error(WEBHOOKS_USAGE);
    return listWebhooks(db, { provider, result, limit: count });
  },
};
