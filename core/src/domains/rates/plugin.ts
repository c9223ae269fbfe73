import fp from 'fastify-plugin';
import type { TConfig } from '../../config.ts';
import { FeedRateSource, TableRateSource, type RateSource } from './source.ts';

declare module 'fastify' {
  interface FastifyInstance {
    /** Where exchange quotes get their rates: the `rates` table, or a price feed when configured. */
    rates: RateSource;
  }
}

/** The rate source: the `rates` table, or the price feed of RATES_FEED_URL (tests may hand one in). */
export default fp<{ config: TConfig; rates?: RateSource }>(
  async (app, { config, rates }) => {
    const table = new TableRateSource(app.db);
    const source =
      rates ??
      (config.RATES_FEED_URL ? new FeedRateSource({ url: config.RATES_FEED_URL, table, onError: (err) => app.log.warn({ err }, 'rate feed failed') }) : table);
    app.decorate('rates', source);
  },
  { name: 'rates', dependencies: ['db'] },
);
