import fp from 'fastify-plugin';
import websocket from '@fastify/websocket';
import { z } from 'zod';
import { REALTIME_LINK_PATH, encodeLinkMessage, type TLinkMessage } from '@obmen/shared';
import type { TConfig } from '../../config.ts';
import { natsBus, postgresBus, type TEventBus } from './bus.ts';
import { createHub, feedThrottle, ratesThrottle, type TDeskSource, type THub } from './hub.ts';
import { setFeed, setRatesNotice } from '../events/service.ts';

declare module 'fastify' {
  interface FastifyInstance {
    events: { hub: THub; bus: TEventBus };
  }
}

/** One feed item per core this often at most (the popup shows each for 12 s). */
const FEED_EVERY_MS = 4_000;
/** One rates notice per core this often at most (a feed fetch moves every pair at once). */
const RATES_EVERY_MS = 1_000;
/** A BFF link that lets this much pile up unread is cut (its browsers reconnect and replay). */
const LINK_MAX_BUFFERED = 64 * 1024 * 1024;

const ZLinkRequest = z.discriminatedUnion('op', [
  z.object({
    op: z.literal('sub'),
    sub: z.number().int().min(0),
    token: z.string().max(100),
    since: z.number().int().min(0).nullable(),
    bsince: z.number().int().min(0).nullable().default(null),
    ops: z.boolean().default(false),
  }),
  z.object({ op: z.literal('unsub'), sub: z.number().int().min(0) }),
]);

/**
 * The realtime stream of this core (issue 15): the events bus (LISTEN/NOTIFY or NATS), the hub
 * of the BFFs' subscriptions, and the BFF's websocket at /api/internal/events (hidden from the
 * document; the BFF never proxies /api/internal/*).
 */
export default fp<{ config: TConfig; desk?: TDeskSource }>(
  async (app, { config, desk }) => {
    const hub = createHub(app.db, app.log, desk);
    const handlers = { onMessage: hub.onMessage, onGap: () => void hub.catchUp().catch(() => {}) };
    const bus = config.NATS_URL ? await natsBus(config.NATS_URL, handlers, app.log) : await postgresBus(app.db, handlers, app.log);
    app.db.onAnnounce = bus.announce;
    setFeed(app.db, feedThrottle(bus.feed, FEED_EVERY_MS));
    setRatesNotice(app.db, ratesThrottle(bus.rates, RATES_EVERY_MS));
    app.decorate('events', { hub, bus });

    app.addHook('onClose', async () => {
      app.db.onAnnounce = null;
      await bus.close();
    });

    await app.register(websocket, { options: { maxPayload: 64 * 1024 } });
    app.get(
      REALTIME_LINK_PATH,
      {
        websocket: true,
        schema: { hide: true, tags: ['Service'], summary: 'Realtime events for the BFF (websocket)' },
      },
      (socket) => {
        const link = hub.open((message: TLinkMessage, body?: string) => {
          if (socket.readyState !== socket.OPEN) return;
          if (socket.bufferedAmount > LINK_MAX_BUFFERED) return socket.terminate();
          socket.send(encodeLinkMessage(message, body));
        });
        socket.on('message', (data: Buffer) => {
          let parsed: z.infer<typeof ZLinkRequest>;
          try {
            parsed = ZLinkRequest.parse(JSON.parse(String(data)));
          } catch {
            return socket.close(1008, 'bad request');
          }
          if (parsed.op === 'unsub') return hub.unsubscribe(link, parsed.sub);
          const subscribed = parsed.ops
            ? hub.subscribeDesk(link, parsed.sub, parsed.token)
            : hub.subscribe(link, parsed.sub, parsed.token, parsed.since, parsed.bsince);
          subscribed.catch((err: unknown) => {
            app.log.warn({ err }, 'events: subscribe failed');
            link.send({ op: 'refused', sub: parsed.sub, code: 'unavailable' });
          });
        });
        socket.on('close', () => hub.close(link));
      },
    );
  },
  { name: 'events', dependencies: ['db'] },
);
