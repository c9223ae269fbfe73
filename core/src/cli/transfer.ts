import { setTransferSettings } from '../domains/transfer/service.ts';
import { options, type TCommand } from './command.ts';

const TRANSFER_SET_USAGE = `usage: transfer:set <CURRENCY> [min=<amount>] [max=<amount>|none] [fee_percent=<fraction>] [fee_fixed=<amount>] [enabled=true|false]`;

/** Transfer operator commands. */
export const TRANSFER_COMMANDS: Record<string, TCommand> = {
  'transfer:set': async (db, [currency, ...rest]) => {
    if (!currency) throw new Error(TRANSFER_SET_USAGE);
    return setTransferSettings(db, currency, options(rest, ['min', 'max', 'fee_percent', 'fee_fixed', 'enabled'], TRANSFER_SET_USAGE));
  },
};
