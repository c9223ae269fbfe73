import { loadConfig } from '../config.ts';
import { describeRates, setRate, syncRates } from '../domains/rates/service.ts';
import { FeedRateSource, TableRateSource } from '../domains/rates/source.ts';
import { options, type TCommand } from './command.ts';

const RATES_SET_USAGE = `usage: rates:set <SRC> <DST> [rate=<dst per 1 src>] [spread=<fraction>] [fee_percent=<fraction>]
    [fee_fixed=<src amount>] [min=<src amount>] [max=<src amount>|none] [enabled=true|false]
  e.g. rates:set BTC USDT rate=65000 spread=0.005 fee_percent=0.001 min=0.0001 max=2`;

/** Exchange rates operator commands. */
export const RATES_COMMANDS: Record<string, TCommand> = {
  'rates:list': (db, [search]) => describeRates(db, search),
  'rates:set': async (db, [src, dst, ...rest]) => {
    if (!src || !dst) throw new Error(RATES_SET_USAGE);
    const input = options(rest, ['rate', 'spread', 'fee_percent', 'fee_fixed', 'min', 'max', 'enabled'], RATES_SET_USAGE);
    await setRate(db, { src, dst, ...input }, new Date());
    return describeRates(db, `${src}/${dst}`);
  },
  'rates:sync': async (db) => {
    const { RATES_FEED_URL } = loadConfig();
    if (!RATES_FEED_URL) throw new Error('rates:sync reads the price feed of RATES_FEED_URL, which is not set');
    const updated = await syncRates(db, new FeedRateSource({ url: RATES_FEED_URL, table: new TableRateSource(db) }), new Date());
    return { updated };
  },
};
