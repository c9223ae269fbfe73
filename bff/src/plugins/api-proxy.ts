import fp from 'fastify-plugin';
import proxy, { type FastifyHttpProxyOptions } from '@fastify/http-proxy';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { IncomingHttpHeaders } from 'node:http';
import { Transform, type Readable } from 'node:stream';
import type { Dispatcher } from 'undici';
import {
  API_BODY_LIMIT_BYTES,
  IDEMPOTENCY_HEADER,
  LOCALE_COOKIE,
  REFERRAL_COOKIE,
  REFERRAL_HEADER,
  REQUEST_ID_HEADER,
  ROUTE_NOT_FOUND_HEADER,
  UPLOAD_BODY_MAX_BYTES,
  isI18nKey,
  wholeMegabytes,
  isLocale,
  readReferralCode,
  type TI18nKey,
} from '@obmen/shared';
import type { TConfig } from '../config.ts';
import { frontendVersionMember, injectFrontendVersion } from '../envelope.ts';
import { sendError, type TErrorCode, type TFailureStatus } from '../errors.ts';
import { sendTooManyMisses } from './own-errors.ts';
import { sendOverloaded } from './load-shedding.ts';
import { applySessionHeaders, forwardSession } from '../session.ts';

declare module 'fastify' {
  interface FastifyRequest {
    upstreamJson: boolean;
    /** The core answered that no route serves this path: a miss for NOT_FOUND_PER_MINUTE. */
    upstreamRouteMiss: boolean;
    /** The running UPSTREAM_TIMEOUT_MS timer of a proxied request (null once its answer came). */
    upstreamDeadline: NodeJS.Timeout | null;
    /** Aborted when that deadline passes: a call still queued for a connection is never sent. */
    upstreamSignal: AbortSignal | null;
  }
}

/**
 * Dropped from what the browser sent: headers only the BFF may set towards the core, and proxy
 * headers the core must never believe from a client (X-Forwarded-*, Forwarded, X-Original-URL,
 * X-Rewrite-URL). `expect`: Node has answered 100-continue to the client already and the body
 * is streamed on; undici refuses to send that header (it made every such request a 502).
 */
const DROPPED_REQUEST_HEADERS = [
  'authorization',
  'cookie',
  'x-obmen-locale',
  'x-obmen-ref',
  'x-obmen-link-binding',
  'x-obmen-ops-token',
  'x-forwarded-for',
  'x-forwarded-host',
  'x-forwarded-proto',
  'x-forwarded-port',
  'x-forwarded-prefix',
  'forwarded',
  'x-real-ip',
  'x-original-url',
  'x-rewrite-url',
  'expect',
];

const NETWORK_FAILURES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ENOTFOUND', 'EHOSTUNREACH', 'UND_ERR_SOCKET', 'UND_ERR_CLOSED']);
const BODY_TOO_LARGE = 'BFF_BODY_TOO_LARGE';
const UPLOAD_TOO_LARGE = 'BFF_UPLOAD_TOO_LARGE';
const DEADLINE_PASSED = 'BFF_UPSTREAM_DEADLINE';

/** A failure the BFF answers for the core, one of those the clients are told of (BFF_FAILURES). */
type TFailure = { [S in TFailureStatus]: { status: S; code: TErrorCode<S>; key: TI18nKey; vars?: Record<string, number> } }[TFailureStatus];
type TUpstreamError = { statusCode?: number; code?: string; cause?: { code?: string } };

const TOO_LARGE: TFailure = { status: 413, code: 'payload_too_large', key: 'error.payload_too_large' };
/** An upload over every cap: the core's own answer to it (storage/upload.ts), with the size. */
const UPLOAD_TOO_LARGE_FAILURE: TFailure = {
  status: 413,
  code: 'upload_too_large',
  key: 'files.request_too_large',
  vars: { mb: wholeMegabytes(UPLOAD_BODY_MAX_BYTES) },
};

function classifyUpstreamError(error: TUpstreamError): TFailure {
  const code = error.cause?.code ?? error.code ?? '';
  if (code === BODY_TOO_LARGE) return TOO_LARGE;
  if (code === UPLOAD_TOO_LARGE) return UPLOAD_TOO_LARGE_FAILURE;
  if (error.statusCode === 504 || code.includes('TIMEOUT') || code === DEADLINE_PASSED)
    return { status: 504, code: 'upstream_timeout', key: 'error.upstream_timeout' } as const;
  if (error.statusCode === 503 || NETWORK_FAILURES.has(code)) return { status: 503, code: 'upstream_unavailable', key: 'error.upstream_unavailable' } as const;
  return { status: 502, code: 'bad_gateway', key: 'error.bad_gateway' } as const;
}

/**
 * A failed proxied request, answered in the shared error shape. A request with an
 * Idempotency-Key (money) whose outcome is unknown (504, or the core gone mid-request) is told
 * to send it again with the same key: the core then replays the first outcome, never a second.
 */
function sendFailure(request: FastifyRequest, reply: FastifyReply, failure: TFailure) {
  const unknownOutcome = failure.status >= 502 && request.headers[IDEMPOTENCY_HEADER] !== undefined;
  // The rest of a refused body is not worth reading: close the connection after the answer.
  if (failure.status === 413) reply.header('connection', 'close');
  const retryKey = `${failure.key}_retry_same_key`;
  return sendError(request, reply, failure.status, failure.code, unknownOutcome && isI18nKey(retryKey) ? retryKey : failure.key, failure.vars);
}

/**
 * The whole body of a JSON answer, by 'data'/'end' listeners: `for await` over the stream cost
 * about 6-9 µs more CPU per proxied request (async iterator, a promise per chunk; pnpm bench).
 * Calls back once: the body, or the error (also when the stream closes before its end).
 */
function readAll(stream: Readable, done: (err: Error | null, body?: Buffer) => void): void {
  const chunks: Buffer[] = [];
  let settled = false;
  const finish = (err: Error | null, body?: Buffer) => {
    if (settled) return;
    settled = true;
    done(err, body);
  };
  stream.on('data', (chunk: Buffer) => chunks.push(chunk));
  stream.once('end', () => finish(null, chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)));
  stream.once('error', (err: Error) => finish(err));
  // 'close' follows 'end' on every answer: build the Error (a stack capture) only when it is needed.
  stream.once('close', () => settled || finish(new Error('upstream body closed before its end')));
}

function codedError(code: string, message: string): Error {
  return Object.assign(new Error(message), { code });
}

function isUpload(contentType: string | string[] | undefined): boolean {
  return typeof contentType === 'string' && contentType.toLowerCase().startsWith('multipart/form-data');
}

/** The core's own limits: uploads (multipart) have theirs, everything else API_BODY_LIMIT_BYTES. */
function bodyLimitOf(contentType: string | string[] | undefined): number {
  return isUpload(contentType) ? UPLOAD_BODY_MAX_BYTES : API_BODY_LIMIT_BYTES;
}

/**
 * The request body on its way to the core, cut at its limit (a chunked body has no length to
 * check first). undici destroys the stream it was given when a request is aborted:
 * this stream, not the client's request, whose socket must live on to carry the 413 or 504.
 */
function limitBody(source: Readable, limit: number, tooLarge: string): Readable {
  let seen = 0;
  const limited = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      seen += chunk.length;
      if (seen > limit) callback(codedError(tooLarge, 'request body over the limit'));
      else callback(null, chunk);
    },
  });
  source.pipe(limited);
  return limited;
}

function endDeadline(request: FastifyRequest): void {
  if (request.upstreamDeadline === null) return;
  clearTimeout(request.upstreamDeadline);
  request.upstreamDeadline = null;
}

/** reply-from hands the dispatcher the headers rewriteRequestHeaders returned: the deadline rides along. */
const DEADLINE_SIGNAL = Symbol('deadline signal');
type TProxiedHeaders = IncomingHttpHeaders & { [DEADLINE_SIGNAL]?: AbortSignal | null };

/** What reply-from takes as a ready client (typed with both call forms; it uses the callback one). */
type TRequestable = Extract<NonNullable<FastifyHttpProxyOptions['undici']>, { request: unknown }>;

export type TApiProxyOptions = { config: TConfig; frontendVersion: string };

/** /api/* → the core, streamed; JSON answers get `fv`; failures become JSON 413/502/503/504. */
export default fp<TApiProxyOptions>(
  async (app, { config, frontendVersion }) => {
    const fvMember = frontendVersionMember(frontendVersion);
    app.decorateRequest('upstreamJson', false);
    app.decorateRequest('upstreamRouteMiss', false);
    app.decorateRequest('upstreamDeadline', null);
    app.decorateRequest('upstreamSignal', null);

    /**
     * UPSTREAM_TIMEOUT_MS bounds the whole wait from the request's arrival (the body is streamed,
     * so the handler starts as the request arrives), the time queued for
     * one of the pool's connections included (undici's own timeouts start on the socket): when
     * it passes the client gets 504 at once, and the abort keeps a request still queued from
     * ever reaching the core. Uploads get UPLOAD_UPSTREAM_TIMEOUT_MS instead: their body
     * streams through the same wait.
     */
    function startDeadline(request: FastifyRequest, reply: FastifyReply, done: () => void): void {
      if (app.upstreamSaturated()) {
        sendOverloaded(request, reply);
        return;
      }
      const controller = new AbortController();
      const timeoutMs = isUpload(request.headers['content-type']) ? config.UPLOAD_UPSTREAM_TIMEOUT_MS : config.UPSTREAM_TIMEOUT_MS;
      request.upstreamSignal = controller.signal;
      request.upstreamDeadline = setTimeout(() => {
        request.upstreamDeadline = null;
        if (!reply.sent) {
          request.log.warn({ timeoutMs }, 'upstream deadline passed');
          void sendFailure(request, reply, classifyUpstreamError({ code: DEADLINE_PASSED }));
        }
        controller.abort(codedError(DEADLINE_PASSED, 'upstream deadline passed'));
      }, timeoutMs);
      done();
    }

    const dispatcher = {
      request(options: Dispatcher.RequestOptions & { headers: TProxiedHeaders }, callback: (err: Error | null, data: Dispatcher.ResponseData) => void) {
        const signal = options.headers[DEADLINE_SIGNAL] ?? null;
        delete options.headers[DEADLINE_SIGNAL];
        const limit = bodyLimitOf(options.headers['content-type']);
        const tooLarge = isUpload(options.headers['content-type']) ? UPLOAD_TOO_LARGE : BODY_TOO_LARGE;
        const length = Number(options.headers['content-length'] ?? 0);
        if (length > limit) {
          process.nextTick(callback, codedError(tooLarge, 'request body over the limit'));
          return;
        }
        const body =
          options.body && typeof (options.body as Readable).pipe === 'function' ? limitBody(options.body as Readable, limit, tooLarge) : options.body;
        // undici's own socket timeouts (the pool's are UPSTREAM_TIMEOUT_MS) stretched for an upload.
        const timeouts = isUpload(options.headers['content-type'])
          ? { headersTimeout: config.UPLOAD_UPSTREAM_TIMEOUT_MS, bodyTimeout: config.UPLOAD_UPSTREAM_TIMEOUT_MS }
          : {};
        app.core.request({ ...options, ...timeouts, body, signal }, callback);
      },
    };

    await app.register(proxy, {
      upstream: config.UPSTREAM_URL,
      prefix: '/api',
      rewritePrefix: '/api',
      // The core answers a GET with 503 on purpose (maintenance): retrying it 10 times helps nobody.
      retryMethods: [],
      disableRequestLogging: true,
      preHandler: startDeadline,
      // The BFF's one pool to the core (plugins/upstream.ts), shared with page renders.
      // reply-from calls request(options, callback) only (its type also wants the promise form).
      undici: dispatcher as unknown as TRequestable,
      replyOptions: {
        // The proxy's types allow an HTTP/2 server; this one is HTTP/1, hence the narrowing casts.
        rewriteRequestHeaders: (raw, rawHeaders) => {
          const request = raw as FastifyRequest;
          const headers = rawHeaders as TProxiedHeaders;
          for (const name of DROPPED_REQUEST_HEADERS) delete headers[name];
          headers['x-forwarded-for'] = request.ip;
          headers[REQUEST_ID_HEADER] = request.id;
          forwardSession(request, headers);
          const locale = request.cookies[LOCALE_COOKIE];
          if (isLocale(locale)) headers['x-obmen-locale'] = locale;
          // The invite code a landing page remembered (site middleware): the core binds a sign-up to it.
          const ref = readReferralCode(request.cookies[REFERRAL_COOKIE]);
          if (ref) headers[REFERRAL_HEADER] = ref;
          headers[DEADLINE_SIGNAL] = request.upstreamSignal;
          return headers;
        },
        rewriteHeaders: (rawHeaders, raw) => {
          const request = raw as FastifyRequest;
          const headers = rawHeaders as IncomingHttpHeaders;
          // Hop-by-hop: the core's "connection: close" (it is shutting down) or keep-alive timeout
          // is about the BFF's connection to it, not the browser's (reply-from copies them as is).
          delete headers.connection;
          delete headers['keep-alive'];
          applySessionHeaders(headers, request);
          if (headers[ROUTE_NOT_FOUND_HEADER] !== undefined) {
            delete headers[ROUTE_NOT_FOUND_HEADER];
            request.upstreamRouteMiss = true;
          }
          if (headers['content-type']?.startsWith('application/json')) {
            request.upstreamJson = true;
            delete headers['content-length'];
          } else {
            // A streamed answer (a CSV export) has begun: its body is bounded by undici's bodyTimeout.
            endDeadline(request);
          }
          return headers;
        },
        onResponse: (raw, rawReply, rawRes) => {
          const request = raw as FastifyRequest;
          const reply = rawReply as FastifyReply;
          const res = rawRes as unknown as { stream: Readable };
          // A made-up /api path counts like a missing page: a scan past the limit gets 429.
          const retryAfterS = request.upstreamRouteMiss ? app.notFoundWindow.hit(request.ip) : 0;
          if (retryAfterS > 0) {
            endDeadline(request);
            res.stream.resume();
            return void sendTooManyMisses(request, reply, retryAfterS);
          }
          if (!request.upstreamJson) return void reply.send(res.stream);
          readAll(res.stream, (err, body) => {
            endDeadline(request);
            // The deadline answered already (504): nothing more to say.
            if (reply.sent) return;
            if (!err) return void reply.send(injectFrontendVersion(body!, fvMember));
            request.log.warn({ err }, 'upstream body failed');
            // Nothing was sent yet (JSON is buffered): the client gets JSON 502/503/504 too.
            if (reply.raw.headersSent) return void reply.raw.destroy(err);
            void sendFailure(request, reply, classifyUpstreamError(err as TUpstreamError));
          });
        },
        onError: (rawReply, { error: rawError }) => {
          const reply = rawReply as FastifyReply;
          const error = rawError as Error & TUpstreamError;
          endDeadline(reply.request);
          const failure = classifyUpstreamError(error);
          if (failure.status !== 413) reply.request.log.warn({ code: error.code, cause: error.cause?.code }, 'upstream failed');
          void sendFailure(reply.request, reply, failure);
        },
      },
    });
  },
  { name: 'api-proxy', dependencies: ['@fastify/cookie', 'upstream', 'scheme', 'own-errors', 'load-shedding'] },
);
