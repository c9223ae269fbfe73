import fp from 'fastify-plugin';
import { createHash } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { FRONT_LOG_BODY_LIMIT, FRONT_LOG_PATH, ZFrontLog, type TFrontLog } from '@obmen/shared';
import { sendError } from '../errors.ts';
import { createRateWindow } from '../rate-window.ts';

/*
 * POST /api/logger/front (spec §8): front-end errors into the BFF's own log. Owned by the BFF
 * and never forwarded to the core, whatever the method. In order:
 *   1. rate limit per client address (onRequest, before the body is read): 429 + Retry-After
 *   2. body cap (route bodyLimit, also from Content-Length before reading): 413
 *   3. JSON or text/plain holding JSON (navigator.sendBeacon), the shared schema: 400
 *   4. control characters escaped (newlines, ANSI escapes, bidi overrides): no log injection
 *   5. the same error (type + message + url) again within the window is only counted; the
 *      count is logged when the window closes (or at the next occurrence after it)
 *   6. one pino line at warn level, always the same shape; the answer is 204
 *
 * The rate-limit and repeat counters live in this process's memory (bounded maps). That is
 * deliberate and fine here: they only protect the log, no user state depends on them, and with
 * N BFF instances a client gets at most N times the limit.
 */

export type TFrontLogLine = {
  /** How many reports this line stands for: 1, or the repeats counted in the window. */
  count: number;
  type: string;
  message: string;
  stack: string;
  url: string;
  user_agent: string;
  client_time: string;
};

type TWarnLogger = { warn: (obj: object, msg: string) => void };

export type TFrontLoggerOptions = {
  perMinute?: number;
  bodyLimit?: number;
  /** Repeats of one error within this window are counted, not logged. */
  repeatWindowMs?: number;
  /** Bounds of the in-memory maps (oldest dropped first). */
  maxClients?: number;
  maxErrors?: number;
  /** Where the lines go: the app's logger unless a test hands its own. */
  logger?: TWarnLogger;
  now?: () => number;
};

const FRONT_ERROR = 'front-end error';
const FRONT_ERROR_REPEATED = 'front-end error repeated';

/** C0, DEL, C1, line/paragraph separators, bidi and direction marks. */
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;
const NAMED: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

/** Visible escapes instead of control characters: one report is one line, with no terminal tricks. */
export function escapeControl(value: string): string {
  return value.replace(UNSAFE, (ch) => NAMED[ch] ?? `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

type TRepeat = { first: number; repeats: number; type: string; message: string; url: string };

export default fp<TFrontLoggerOptions>(
  async (app, options) => {
    const perMinute = options.perMinute ?? 30;
    const bodyLimit = options.bodyLimit ?? FRONT_LOG_BODY_LIMIT;
    const repeatWindowMs = options.repeatWindowMs ?? 60_000;
    const maxClients = options.maxClients ?? 10_000;
    const maxErrors = options.maxErrors ?? 2_000;
    const now = options.now ?? Date.now;
    const log: TWarnLogger = options.logger ?? app.log;

    // ---- rate limit: fixed one-minute windows per client -------------------------------------
    const clients = createRateWindow({ perWindow: perMinute, maxClients, now });

    function overLimit(request: FastifyRequest, reply: FastifyReply): boolean {
      const retryAfterS = clients.hit(request.ip);
      if (retryAfterS === 0) return false;
      reply.header('retry-after', String(retryAfterS));
      return true;
    }

    // ---- repeats ------------------------------------------------------------------------------
    const repeats = new Map<string, TRepeat>();

    function flush(entry: TRepeat): void {
      if (entry.repeats === 0) return;
      const line: TFrontLogLine = {
        count: entry.repeats,
        type: entry.type,
        message: entry.message,
        stack: '',
        url: entry.url,
        user_agent: '',
        client_time: '',
      };
      log.warn({ front: line, window_s: Math.round(repeatWindowMs / 1000) }, FRONT_ERROR_REPEATED);
    }

    function sweep(): void {
      const t = now();
      for (const [key, entry] of repeats) {
        if (t - entry.first < repeatWindowMs) break; // insertion order = window start order
        repeats.delete(key);
        flush(entry);
      }
    }
    const sweeper = setInterval(sweep, Math.max(1_000, Math.min(15_000, repeatWindowMs / 4)));
    sweeper.unref();
    app.addHook('onClose', async () => {
      clearInterval(sweeper);
      for (const entry of repeats.values()) flush(entry);
      repeats.clear();
    });

    function record(report: TFrontLog): void {
      const line: TFrontLogLine = {
        count: 1,
        type: report.type,
        message: escapeControl(report.message),
        stack: escapeControl(report.stack ?? ''),
        url: escapeControl(report.url),
        user_agent: escapeControl(report.user_agent),
        client_time: escapeControl(report.time),
      };
      const key = createHash('sha1').update(`${line.type}\u0000${line.message}\u0000${line.url}`).digest('base64');
      const t = now();
      const seen = repeats.get(key);
      if (seen && t - seen.first < repeatWindowMs) {
        seen.repeats++;
        return;
      }
      if (seen) {
        repeats.delete(key);
        flush(seen);
      } else if (repeats.size >= maxErrors) {
        const oldest = repeats.keys().next().value!;
        flush(repeats.get(oldest)!);
        repeats.delete(oldest);
      }
      repeats.set(key, { first: t, repeats: 0, type: line.type, message: line.message, url: line.url });
      log.warn({ front: line }, FRONT_ERROR);
    }

    // ---- the route ----------------------------------------------------------------------------
    app.route({
      method: 'POST',
      url: FRONT_LOG_PATH,
      bodyLimit,
      onRequest: (request, reply, done) => {
        if (overLimit(request, reply)) {
          sendError(request, reply, 429, 'rate_limited', 'error.rate_limited');
          return;
        }
        done();
      },
      errorHandler: (err: { statusCode?: number }, request, reply) => {
        if (err.statusCode === 413) return sendError(request, reply, 413, 'payload_too_large', 'error.payload_too_large');
        if (err.statusCode === 415) return sendError(request, reply, 415, 'unsupported_media_type', 'error.validation');
        if (err.statusCode && err.statusCode < 500) return sendError(request, reply, 400, 'validation', 'error.validation');
        request.log.error({ err }, 'front logger failed');
        return sendError(request, reply, 500, 'internal', 'error.internal');
      },
      handler: (request, reply) => {
        let body = request.body;
        if (typeof body === 'string') {
          try {
            body = JSON.parse(body);
          } catch {
            return sendError(request, reply, 400, 'validation', 'error.validation');
          }
        }
        const parsed = ZFrontLog.safeParse(body);
        if (!parsed.success) return sendError(request, reply, 400, 'validation', 'error.validation');
        record(parsed.data);
        return reply.code(204).send();
      },
    });

    // Any other method on this path stays here too: nothing of the logger reaches the core.
    app.route({
      method: ['GET', 'HEAD', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'],
      url: FRONT_LOG_PATH,
      handler: (request, reply) => {
        reply.header('allow', 'POST');
        return sendError(request, reply, 405, 'method_not_allowed', 'error.validation');
      },
    });
  },
  { name: 'front-logger', dependencies: ['@fastify/cookie'] },
);
