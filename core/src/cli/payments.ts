import { listWebhooks } from '../domains/payments/webhooks.ts';
import { options, type TCommand } from './command.ts';

const WEBHOOKS_USAGE = 'usage: payments:webhooks [provider=<id>] [result=<result>] [limit=<1..1000>]';

/** Payment operator commands. */
export const PAYMENT_COMMANDS: Record<string, TCommand> = {
  'payments:webhooks': async (db, args) => {
    const { provider, result, limit } = options(args, ['provider', 'result', 'limit'], WEBHOOKS_USAGE);
    const count = limit === undefined ? 50 : Number(limit);
    if (!Number.isInteger(count) || count < 1 || count > 1000) throw new Error(WEBHOOKS_USAGE);
    return listWebhooks(db, { provider, result, limit: count });
  },
};
