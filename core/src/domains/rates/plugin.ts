import fp from 'fastify-plugin';
import type { TConfig } from '../../config.ts';
import { purgeIdempotencyKeys } from '../idempotency/service.ts';
import { FeedRateSource, TableRateSource, type RateSource } from './source.ts';
import { isDatabaseUnavailable } from '../../db/outage.ts';

declare module 'fastify' {
  interface FastifyInstance {
    /** Where exchange quotes get their rates: the `rates` table, or a price feed when configured. */
    rates: RateSource;
  }
}

const HOUSEKEEPING_MS = 10 * 60 * 1000;

/** The money domain's shared pieces: the rate source, and dropping old quotes and idempotency keys. */
export default fp<{ config: TConfig; rates?: RateSource }>(
  async (app, { config, rates }) => {
    const table = new TableRateSource(app.db);
    const source =
      rates ??
      (config.RATES_FEED_URL
        ? new FeedRateSource({ url: config.RATES_FEED_URL, table, onError: (err) => app.log.warn({ err }, 'rate feed failed') })
        : table);
    app.decorate('rates', source);
    const timer = setInterval(() => {
      Promise.all([purgeIdempotencyKeys(app.db), app.db.query(`DELETE FROM exchange_quotes WHERE expires_at < now() - interval '1 day'`)]).catch((err: unknown) => {
        if (!isDatabaseUnavailable(err)) app.log.warn({ err }, 'money housekeeping failed');
      });
    }, HOUSEKEEPING_MS);
    timer.unref();
    app.addHook('onClose', async () => clearInterval(timer));
  },
  { name: 'money', dependencies: ['db'] },
);
