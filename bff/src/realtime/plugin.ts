import fp from 'fastify-plugin';
import websocket from '@fastify/websocket';
import type { WebSocket } from '@fastify/websocket';
import { createHash } from 'node:crypto';
import { OPS_COOKIE, REALTIME_PATH, SESSION_COOKIE, SOCKET_CLOSE, TOKEN_PATTERN, clientKey, type TSocketMessage } from '@obmen/shared';
import { sendError } from '../errors.ts';
import { writeFrame } from './frame.ts';
import { createLink } from './link.ts';

declare module 'fastify' {
  interface FastifyRequest {
    realtime?: TAttach | undefined;
  }
  interface FastifyInstance {
    realtime: {
      sockets: () => number;
      /** What the caps track: open sockets, sessions and client addresses holding any (all 0 when idle). */
      tracked: () => { sockets: number; sessions: number; addresses: number };
      link: ReturnType<typeof createLink>;
    };
  }
}

/** `release` gives back the client address's slot: once, whether the socket closed or never opened. */
type TAttach = { sub: number; session: string; release: () => void; attach: (socket: WebSocket) => void };
type TPeer = WebSocket & { alive?: boolean };

export type TRealtimeOptions = {
  upstreamUrl: string;
  publicUrl?: string;
  /** A ping this often; a socket that has not answered the previous one is dropped. */
  heartbeatMs: number;
  /** A socket with more than this unsent is a slow reader: it is dropped, not buffered. */
  maxBufferedBytes: number;
  /** Sockets per session: a newer one closes the oldest with SOCKET_CLOSE.replaced. */
  maxPerSession: number;
  /** Sockets per client address (open or opening): 429 before the upgrade beyond. */
  maxPerAddress: number;
};

/**
 * The browser's realtime socket: GET /ws?since=<last seq>&bsince=<last broadcast seq> upgraded by
 * @fastify/websocket. Refusals are plain HTTP answers before the upgrade, in the project's
 * error shape: Origin missing or not ours 403; no or malformed remember_token cookie 401; a
 * session the core does not know (expired, revoked) 401; `since` beyond the user's newest
 * event 409; the core unreachable 503; a client address holding maxPerAddress sockets 429. The
 * session comes from the cookie only, never the URL. Then the BFF relays what the core's stream
 * sends for this subscription (link.ts). `?ops=1` is the back office's desk: the ops_token cookie
 * instead (a customer's session opens nothing there), and the core sends the desk's state, never
 * a customer's events. A session keeps at most maxPerSession sockets: a newer
 * one closes its oldest (SOCKET_CLOSE.replaced), so one session cannot hold the BFF's
 * descriptors and memory (each socket costs ~10-20 KB and a descriptor).
 */
export default fp<TRealtimeOptions>(
  async (app, options) => {
    const link = createLink(options.upstreamUrl, app.log);
    const ours = new Set(options.publicUrl ? [new URL(options.publicUrl).origin] : []);
    const sockets = new Set<TPeer>();
    /** Per session (sha256 of its token: no secret kept), its sockets, oldest first. */
    const bySession = new Map<string, TPeer[]>();
    /** Per client address, the sockets it holds or is opening. */
    const byAddress = new Map<string, number>();
    app.decorate('realtime', {
      sockets: () => sockets.size,
      tracked: () => ({ sockets: sockets.size, sessions: bySession.size, addresses: byAddress.size }),
      link,
    });

    /** Takes one of the address's slots, or says it has none left. */
    function holdAddress(address: string): (() => void) | null {
      const held = byAddress.get(address) ?? 0;
      if (held >= options.maxPerAddress) return null;
      byAddress.set(address, held + 1);
      let released = false;
      return () => {
        if (released) return;
        released = true;
        const left = (byAddress.get(address) ?? 1) - 1;
        if (left > 0) byAddress.set(address, left);
        else byAddress.delete(address);
      };
    }

    /** The session's newest socket; beyond the cap its oldest ones are closed (the browser waits to be looked at). */
    function joinSession(session: string, peer: TPeer): void {
      const peers = bySession.get(session) ?? [];
      while (peers.length >= options.maxPerSession) peers.shift()!.close(SOCKET_CLOSE.replaced, 'replaced by a newer socket');
      peers.push(peer);
      bySession.set(session, peers);
    }

    function leaveSession(session: string, peer: TPeer): void {
      const peers = bySession.get(session);
      if (!peers) return;
      const at = peers.indexOf(peer);
      if (at !== -1) peers.splice(at, 1);
      if (peers.length === 0) bySession.delete(session);
    }

    // Heartbeats: a peer that did not answer the last ping is gone.
    const heartbeat = setInterval(() => {
      for (const socket of sockets) {
        if (socket.alive === false) {
          socket.terminate();
          continue;
        }
        socket.alive = false;
        socket.ping();
      }
    }, options.heartbeatMs);
    heartbeat.unref();
    app.addHook('onClose', async () => {
      clearInterval(heartbeat);
      for (const socket of sockets) socket.terminate();
      link.close();
    });

    // No compression: relayed frames are written as made once for all (frame.ts).
    await app.register(websocket, { options: { maxPayload: 1024, perMessageDeflate: false } });

    // The core's stream is for BFFs: never proxied (the /api/* proxy would otherwise forward it).
    app.all('/api/internal/*', async (request, reply) => sendError(request, reply, 404, 'not_found', 'error.not_found'));

    app.get(
      REALTIME_PATH,
      {
        websocket: true,
        preValidation: async (request, reply) => {
          const origin = request.headers.origin;
          if (!origin || !(ours.has(origin) || origin === `${request.https ? 'https' : 'http'}://${request.host}`)) {
            request.log.warn({ origin }, 'realtime: foreign origin refused');
            return sendError(request, reply, 403, 'csrf', 'error.csrf');
          }
          const query = request.query as { since?: unknown; bsince?: unknown; ops?: unknown };
          // The back office's desk: the operator's own cookie, never the customer's session.
          const ops = query.ops === '1';
          const token = request.cookies[ops ? OPS_COOKIE : SESSION_COOKIE];
          if (!token || !TOKEN_PATTERN.test(token)) return sendError(request, reply, 401, 'unauthorized', 'error.unauthorized');
          const since = ops ? null : sequenceOf(query.since);
          const bsince = ops ? null : sequenceOf(query.bsince);
          if (since === undefined || bsince === undefined) return sendError(request, reply, 400, 'bad_request', 'error.bad_request');
          const release = holdAddress(clientKey(request.ip));
          if (!release) {
            request.log.warn('realtime: sockets per address over the cap');
            return sendError(request, reply, 429, 'rate_limited', 'error.rate_limited');
          }
          const result = await subscribe(token, { since, bsince, ops }, release).catch((err: unknown) => {
            release();
            throw err;
          });
          if (!result.ok) {
            release();
            if (result.code === 'unauthorized') return sendError(request, reply, 401, 'unauthorized', 'error.unauthorized');
            if (result.code === 'event_sequence_future') return sendError(request, reply, 409, 'event_sequence_future', 'error.event_sequence_future');
            return sendError(request, reply, 503, 'upstream_unavailable', 'error.upstream_unavailable');
          }
          request.realtime = result.realtime;
        },
      },
      (socket, request) => {
        const realtime = request.realtime;
        request.realtime = undefined;
        if (!realtime) return socket.close(1011);
        const peer = socket as TPeer;
        sockets.add(peer);
        joinSession(realtime.session, peer);
        peer.alive = true;
        socket.on('pong', () => (peer.alive = true));
        // The browser has nothing to say on this socket.
        socket.on('message', () => socket.close(1008, 'no messages expected'));
        const sub = realtime.sub;
        socket.on('close', () => {
          sockets.delete(peer);
          leaveSession(realtime.session, peer);
          realtime.release();
          link.unsubscribe(sub);
        });
        realtime.attach(socket);
      },
    );

    /**
     * Subscribes at the core; what arrives before the upgrade is done waits in `early`. Kept
     * apart from the request: nothing per socket holds on to Fastify's request or reply.
     */
    async function subscribe(token: string, from: { since: number | null; bsince: number | null; ops: boolean }, release: () => void) {
      let socket: WebSocket | null = null;
      const early: Array<Buffer | 'ended' | 'lost'> = [];
      const deliver = (frame: Buffer) => {
        if (!socket) return void early.push(frame);
        if (socket.readyState !== socket.OPEN) return;
        if (socket.bufferedAmount + frame.length > options.maxBufferedBytes) {
          app.log.warn({ buffered: socket.bufferedAmount }, 'realtime: slow reader dropped');
          socket.close(SOCKET_CLOSE.slowReader, 'slow reader');
          return socket.terminate();
        }
        writeFrame(socket, frame);
      };
      const end = (code: number, why: string) => (socket ? socket.close(code, why) : early.push(code === SOCKET_CLOSE.sessionEnded ? 'ended' : 'lost'));
      const result = await link.subscribe(token, from, {
        relay: deliver,
        ended: () => end(SOCKET_CLOSE.sessionEnded, 'session ended'),
        lost: () => end(SOCKET_CLOSE.upstreamLost, 'upstream lost'),
      });
      if (!result.ok) return result;
      // Subscribed but never upgraded (the browser went away meanwhile): let go.
      const abandoned = setTimeout(() => {
        link.unsubscribe(result.sub);
        release();
      }, 10_000);
      abandoned.unref();
      const realtime: TAttach = {
        sub: result.sub,
        session: createHash('sha256').update(token).digest('base64url'),
        release,
        attach(ws) {
          clearTimeout(abandoned);
          socket = ws;
          ws.send(JSON.stringify({ type: 'hello', seq: result.seq, bseq: result.bseq } satisfies TSocketMessage));
          for (const item of early.splice(0)) {
            if (item === 'ended') return ws.close(SOCKET_CLOSE.sessionEnded, 'session ended');
            if (item === 'lost') return ws.close(SOCKET_CLOSE.upstreamLost, 'upstream lost');
            deliver(item);
          }
        },
      };
      return { ok: true as const, realtime };
    }
  },
  { name: 'realtime', dependencies: ['@fastify/cookie'] },
);

/** A `since` / `bsince` query value: absent is null, a malformed one undefined (400). */
function sequenceOf(raw: unknown): number | null | undefined {
  if (raw === undefined) return null;
  return typeof raw === 'string' && /^\d{1,15}$/.test(raw) ? Number(raw) : undefined;
}
