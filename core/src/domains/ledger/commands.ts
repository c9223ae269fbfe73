import { translate } from '@obmen/shared';
import { loadConfig } from '../../config.ts';
import { AppError } from '../../errors.ts';
import type { Db } from '../../db/index.ts';
import { describeRates, setRate, syncRates } from '../rates/service.ts';
import { FeedRateSource, TableRateSource } from '../rates/source.ts';
import { setTransferSettings } from '../transfer/service.ts';
import { checkLedger } from './invariants.ts';
import { adjustBalance, reverseTransaction } from './service.ts';

type TCommand = (db: Db, args: string[]) => Promise<unknown>;

/** key=value arguments → an object; anything else is a usage error. */
function options(args: string[], allowed: string[], usage: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const arg of args) {
    const at = arg.indexOf('=');
    const key = at > 0 ? arg.slice(0, at) : '';
    if (!allowed.includes(key)) throw new Error(`unknown option "${arg}"\n${usage}`);
    out[key] = arg.slice(at + 1);
  }
  return out;
}

const RATES_SET_USAGE = `usage: rates:set <SRC> <DST> [rate=<dst per 1 src>] [spread=<fraction>] [fee_percent=<fraction>]
    [fee_fixed=<src amount>] [min=<src amount>] [max=<src amount>|none] [enabled=true|false]
  e.g. rates:set BTC USDT rate=65000 spread=0.005 fee_percent=0.001 min=0.0001 max=2`;
const TRANSFER_SET_USAGE = `usage: transfer:set <CURRENCY> [min=<amount>] [max=<amount>|none] [fee_percent=<fraction>] [fee_fixed=<amount>] [enabled=true|false]`;
const BALANCE_USAGE = (verb: string) => `usage: balance:${verb} <account_id> <CURRENCY> <amount> <reason…>  e.g. balance:${verb} 12345678 USDT 100 "support ticket 42"`;

function adjust(direction: 'credit' | 'debit'): TCommand {
  return async (db, [account, currency, amount, ...reason]) => {
    if (!account || !/^\d{8}$/.test(account) || !currency || !amount || !reason.join(' ').trim()) throw new Error(BALANCE_USAGE(direction));
    return adjustBalance(db, { accountId: Number(account), currency, amount, direction, reason: reason.join(' '), actor: 'operator' });
  };
}

/** An AppError reads as its English message (with the offending fields) on the operator's terminal. */
function readable(command: TCommand): TCommand {
  return async (db, args) => {
    try {
      return await command(db, args);
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      const fields = Object.entries(err.fields ?? {}).map(([field, key]) => `${field}: ${translate('en', key)}`);
      throw new Error([`${err.code}: ${translate('en', err.messageKey, err.vars)}`, ...fields].join('\n'));
    }
  };
}

/** Money operator commands (core/src/cli.ts). */
export const MONEY_COMMANDS: Record<string, TCommand> = {
  'rates:list': (db, [search]) => describeRates(db, search),
  'rates:set': async (db, [src, dst, ...rest]) => {
    if (!src || !dst) throw new Error(RATES_SET_USAGE);
    const input = options(rest, ['rate', 'spread', 'fee_percent', 'fee_fixed', 'min', 'max', 'enabled'], RATES_SET_USAGE);
    await setRate(db, { src, dst, ...input });
    return describeRates(db, `${src}/${dst}`);
  },
  'rates:sync': async (db) => {
    const { RATES_FEED_URL } = loadConfig();
    if (!RATES_FEED_URL) throw new Error('rates:sync reads the price feed of RATES_FEED_URL, which is not set');
    const updated = await syncRates(db, new FeedRateSource({ url: RATES_FEED_URL, table: new TableRateSource(db) }));
    return { updated };
  },
  'transfer:set': async (db, [currency, ...rest]) => {
    if (!currency) throw new Error(TRANSFER_SET_USAGE);
    return setTransferSettings(db, currency, options(rest, ['min', 'max', 'fee_percent', 'fee_fixed', 'enabled'], TRANSFER_SET_USAGE));
  },
  'balance:credit': readable(adjust('credit')),
  'balance:debit': readable(adjust('debit')),
  'ledger:reverse': readable(async (db, [transaction, ...reason]) => {
    if (!transaction || !reason.join(' ').trim()) throw new Error('usage: ledger:reverse <ledger transaction id> <reason…>');
    return reverseTransaction(db, transaction, reason.join(' '));
  }),
  'ledger:check': async (db) => {
    const report = await checkLedger(db);
    if (!report.ok) process.exitCode = 1;
    return report;
  },
};
