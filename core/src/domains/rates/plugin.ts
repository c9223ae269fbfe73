import fp from 'fastify-plugin';
import type { TConfig } from '../../config.ts';
import { noticeRates } from '../events/service.ts';
import { recordRates } from './history.ts';
import { FeedRateSource, TableRateSource, type RateSource } from './source.ts';

declare module 'fastify' {
  interface FastifyInstance {
    /** Where exchange quotes get their rates: the `rates` table, or a price feed when configured. */
    rates: RateSource;
  }
}

/**
 * The rate source: the `rates` table, or the price feed of RATES_FEED_URL (tests may hand one in).
 * Each fresh fetch of the feed is a tick of every pair's history (rates/history.ts).
 */
export default fp<{ config: TConfig; rates?: RateSource; now: () => Date }>(
  async (app, { config, rates, now }) => {
    const table = new TableRateSource(app.db);
    const onError = (err: unknown) => app.log.warn({ err }, 'rate feed failed');
    const feed: FeedRateSource | null =
      !rates && config.RATES_FEED_URL
        ? new FeedRateSource({
            url: config.RATES_FEED_URL,
            table,
            onError,
            onPrices: () => {
              void (async () => {
                await recordRates(app.db, await feed!.pairs(), now());
                noticeRates(app.db);
              })().catch(onError);
            },
          })
        : null;
    app.decorate('rates', rates ?? feed ?? table);
  },
  { name: 'rates', dependencies: ['db'] },
);
