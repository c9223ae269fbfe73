import type { IncomingHttpHeaders, IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { Transform, type Readable } from 'node:stream';
import type { Dispatcher, Pool } from 'undici';
import {
  API_BODY_LIMIT_BYTES,
  IDEMPOTENCY_HEADER,
  LOCALE_COOKIE,
  THEME_COOKIE,
  THEME_HEADER,
  themeAttribute,
  REFERRAL_COOKIE,
  REFERRAL_HEADER,
  REQUEST_ID_HEADER,
  ROUTE_NOT_FOUND_HEADER,
  UPLOAD_BODY_MAX_BYTES,
  isI18nKey,
  isLocale,
  readReferralCode,
  wholeMegabytes,
  type TI18nKey,
} from '@obmen/shared';
import { compressRawAnswer, compressWhole, varyOnEncoding } from './compression.ts';
import { frontendVersionMember, injectFrontendVersion } from './envelope.ts';
import { writeError, type TErrorCode, type TFailureStatus } from './errors.ts';
import { RETRY_AFTER_S } from './plugins/load-shedding.ts';
import { securityHeaders } from './plugins/security-headers.ts';
import { applySessionHeaders, forwardSession } from './session.ts';

/*
 * The /api proxy: a call to the core, its answer back to the browser. One implementation on the
 * raw request and response, used by both ways in (plugins/api-proxy.ts): the front door, before
 * Fastify (the plain requests: no routing, no request/reply objects, no hooks), and a Fastify
 * route that hands its raw request and response here (inject, requests behind a trusted proxy,
 * whatever the front door leaves to Fastify's hooks).
 * In order: shed when the core is saturated (503 `overloaded`), a body over its limit (413),
 * the headers to the core (session cookie → Authorization, locale, invite code, request id,
 * client address; what a client may not send dropped), the deadline (504), the core's answer:
 * session headers → cookies, a route miss counted (429 past NOT_FOUND_PER_MINUTE), JSON with
 * `fv` added and compressed whole, anything else streamed as it comes, every answer with the
 * security headers; failures as the declared 413/502/503/504 (BFF_FAILURES).
 */

/** One proxied request: the raw pair and what the way in already knows of it. */
export type TProxyCall = {
  req: IncomingMessage;
  res: ServerResponse;
  url: string;
  headers: IncomingHttpHeaders;
  cookies: Readonly<Record<string, string | undefined>>;
  /** The request's id (x-request-id to the core; the answer carries it already). */
  id: string;
  /** The client's address (x-forwarded-for to the core). */
  ip: string;
  https: boolean;
  warn: (obj: object, msg: string) => void;
};

export type TProxyOptions = {
  /** The BFF's one pool to the core (plugins/upstream.ts). */
  core: Pool;
  upstreamUrl: string;
  frontendVersion: string;
  timeoutMs: number;
  uploadTimeoutMs: number;
  /** The core is saturated (SHED_UPSTREAM_PENDING): shed at once. */
  saturated: () => boolean;
  /** NOT_FOUND_PER_MINUTE's window (plugins/own-errors.ts): seconds to wait, or 0. */
  notFoundWindow: { hit: (ip: string) => number };
};

/**
 * Not passed on from what the browser sent: headers only the BFF may set towards the core,
 * proxy headers the core must never believe from a client (X-Forwarded-*, Forwarded,
 * X-Original-URL, X-Rewrite-URL), and hop-by-hop ones, which are about the browser's connection
 * (undici refuses them). `expect`: Node has answered 100-continue to the client already and the
 * body is streamed on; undici refuses to send that header (it made every such request a 502).
 */
const DROPPED_REQUEST_HEADERS = new Set([
  'authorization',
  'cookie',
  'x-obmen-locale',
  'x-obmen-theme',
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
  'host',
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'upgrade',
  'te',
  'http2-settings',
]);

/** Hop-by-hop headers of the core's answer: about the BFF's connection to it, not the browser's. */
const DROPPED_ANSWER_HEADERS = ['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade'];

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
const OVERLOADED: TFailure = { status: 503, code: 'overloaded', key: 'error.overloaded' };

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
function sendFailure(call: TProxyCall, failure: TFailure): void {
  if (call.res.headersSent || call.res.destroyed) return;
  const unknownOutcome = failure.status >= 502 && failure.code !== 'overloaded' && call.headers[IDEMPOTENCY_HEADER] !== undefined;
  const retryKey = `${failure.key}_retry_same_key`;
  const headers: OutgoingHttpHeaders = { ...securityHeaders(call.https, undefined) };
  // The rest of a refused body is not worth reading: close the connection after the answer.
  if (failure.status === 413) headers.connection = 'close';
  if (failure.code === 'overloaded') headers['retry-after'] = String(RETRY_AFTER_S);
  writeError(call, call.res, failure.status, failure.code, unknownOutcome && isI18nKey(retryKey) ? retryKey : failure.key, failure.vars, headers);
}

function codedError(code: string, message: string): Error {
  return Object.assign(new Error(message), { code });
}

function isUpload(contentType: string | undefined): boolean {
  return contentType !== undefined && contentType.toLowerCase().startsWith('multipart/form-data');
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

function hasBody(headers: IncomingHttpHeaders): boolean {
  const length = headers['content-length'];
  return (length !== undefined && length !== '0') || headers['transfer-encoding'] !== undefined;
}

/** What the core gets: the client's headers but the dropped ones, and what the BFF vouches for. */
function upstreamHeaders(call: TProxyCall, host: string): IncomingHttpHeaders {
  const from = call.headers;
  const listed = typeof from.connection === 'string' ? from.connection.toLowerCase().split(',') : [];
  const headers: IncomingHttpHeaders = {};
  for (const name in from) if (!DROPPED_REQUEST_HEADERS.has(name)) headers[name] = from[name];
  for (const name of listed) delete headers[name.trim()];
  headers.host = host;
  headers['x-forwarded-for'] = call.ip;
  headers[REQUEST_ID_HEADER] = call.id;
  forwardSession(call, headers);
  const locale = call.cookies[LOCALE_COOKIE];
  if (isLocale(locale)) headers['x-obmen-locale'] = locale;
  // The core's sandbox payment page is drawn in the reader's theme (it reads no cookies).
  const theme = themeAttribute(call.cookies[THEME_COOKIE]);
  if (theme) headers[THEME_HEADER] = theme;
  // The invite code a landing page remembered (site middleware): the core binds a sign-up to it.
  const ref = readReferralCode(call.cookies[REFERRAL_COOKIE]);
  if (ref) headers[REFERRAL_HEADER] = ref;
  return headers;
}

/** A path with a `..` segment (encoded or not), or one that does not decode, is not sent on. */
function isSafePath(url: string): boolean {
  if (!url.includes('.') && !url.includes('%')) return true;
  try {
    const decoded = decodeURIComponent(url.split('?', 1)[0]!);
    return !decoded.includes('/..') && !decoded.includes('../');
  } catch {
    return false;
  }
}

type TAnswerWays = {
  /** A whole JSON answer: `fv` added, compressed, sent. */
  answer: (call: TProxyCall, status: number, headers: IncomingHttpHeaders, json: Buffer) => void;
  /** The core's answer headers as the browser gets them. */
  answerHeaders: (call: TProxyCall, from: IncomingHttpHeaders) => IncomingHttpHeaders;
  /** A route miss of this client counted: seconds to wait, or 0. */
  routeMiss: (ip: string) => number;
};

/**
 * One call to the core through undici's dispatch handler, straight from its parser: no response
 * stream, promise or abort signal per call (their objects were a large part of the BFF's
 * garbage per proxied request). A JSON answer is gathered whole; anything else goes out as it
 * comes, paused while the browser's socket is full. `abort` before the call has a connection
 * (queued in the pool) keeps it from ever being sent.
 */
class UpstreamCall implements Dispatcher.DispatchHandler {
  deadline: NodeJS.Timeout | null = null;
  #controller: Dispatcher.DispatchController | null = null;
  #reason: Error | null = null;
  #json: Buffer[] | null = null;
  #status = 0;
  #headers: IncomingHttpHeaders = {};
  #skip = false;
  readonly #call: TProxyCall;
  readonly #ways: TAnswerWays;

  constructor(call: TProxyCall, ways: TAnswerWays) {
    this.#call = call;
    this.#ways = ways;
  }

  endDeadline(): void {
    if (this.deadline === null) return;
    clearTimeout(this.deadline);
    this.deadline = null;
  }

  abort(reason: Error): void {
    if (this.#controller) this.#controller.abort(reason);
    else this.#reason = reason;
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.#controller = controller;
    if (this.#reason) controller.abort(this.#reason);
  }

  onResponseStart(controller: Dispatcher.DispatchController, statusCode: number, rawHeaders: IncomingHttpHeaders): void {
    const { res, req } = this.#call;
    // The deadline answered already (504), or the browser left: nothing more to say.
    if (res.headersSent || res.destroyed) {
      this.#skip = true;
      return;
    }
    const headers = this.#ways.answerHeaders(this.#call, rawHeaders);
    if (headers[ROUTE_NOT_FOUND_HEADER] !== undefined) {
      delete headers[ROUTE_NOT_FOUND_HEADER];
      // A made-up /api path counts like a missing page: a scan past the limit gets 429.
      const retryAfterS = this.#ways.routeMiss(this.#call.ip);
      if (retryAfterS > 0) {
        this.endDeadline();
        this.#skip = true;
        writeError(this.#call, res, 429, 'rate_limited', 'error.rate_limited', undefined, {
          ...securityHeaders(this.#call.https, undefined),
          'retry-after': String(retryAfterS),
        });
        return;
      }
    }
    if (headers['content-type']?.startsWith('application/json')) {
      delete headers['content-length'];
      this.#status = statusCode;
      this.#headers = headers;
      this.#json = [];
      return;
    }
    // A streamed answer (a CSV export, a file) has begun: its body is bounded by undici's bodyTimeout.
    this.endDeadline();
    compressRawAnswer(req, res);
    res.writeHead(statusCode, headers);
    res.on('drain', () => controller.resume());
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.#skip) return;
    if (this.#json) this.#json.push(chunk);
    else if (!this.#call.res.write(chunk)) controller.pause();
  }

  onResponseEnd(): void {
    this.endDeadline();
    const json = this.#json;
    if (this.#skip) return;
    if (!json) return void this.#call.res.end();
    if (this.#call.res.headersSent || this.#call.res.destroyed) return;
    this.#ways.answer(this.#call, this.#status, this.#headers, json.length === 1 ? json[0]! : Buffer.concat(json));
  }

  onResponseError(_controller: Dispatcher.DispatchController, err: Error): void {
    this.endDeadline();
    const { res } = this.#call;
    // A streamed answer cut short: the browser sees the connection end, not a complete body.
    if (res.headersSent) {
      if (!this.#skip) res.destroy(err);
      return;
    }
    if (res.destroyed) return;
    const error = err as Error & TUpstreamError;
    const failure = classifyUpstreamError(error);
    if (failure.status !== 413) this.#call.warn({ code: error.code, cause: error.cause?.code }, this.#json ? 'upstream body failed' : 'upstream failed');
    sendFailure(this.#call, failure);
  }
}

export function createProxy(options: TProxyOptions): (call: TProxyCall) => void {
  const { core } = options;
  const fvMember = frontendVersionMember(options.frontendVersion);
  const host = new URL(options.upstreamUrl).host;

  /** The core's answer headers as the browser gets them. */
  function answerHeaders(call: TProxyCall, from: IncomingHttpHeaders): IncomingHttpHeaders {
    for (const name of DROPPED_ANSWER_HEADERS) delete from[name];
    applySessionHeaders(from, call);
    return Object.assign(from, securityHeaders(call.https, from['content-security-policy']));
  }

  function sendJson(call: TProxyCall, status: number, headers: IncomingHttpHeaders, json: Buffer): void {
    const { res } = call;
    // No body to carry (HEAD, 204, 304): the core's headers as they are.
    if (call.req.method === 'HEAD' || status === 204 || status === 304) {
      res.writeHead(status, headers);
      res.end();
      return;
    }
    let body = injectFrontendVersion(json, fvMember);
    const zipped = compressWhole(call.headers['accept-encoding'], body);
    if (zipped) {
      headers.vary = varyOnEncoding(headers.vary);
      headers['content-encoding'] = zipped.encoding;
      body = zipped.body;
    }
    headers['content-length'] = String(body.length);
    res.writeHead(status, headers);
    res.end(body);
  }

  const ways: TAnswerWays = { answer: sendJson, answerHeaders, routeMiss: (ip) => options.notFoundWindow.hit(ip) };

  return function proxy(call) {
    const { req, res } = call;
    if (options.saturated()) return sendFailure(call, OVERLOADED);
    if (!isSafePath(call.url)) {
      writeError(call, res, 400, 'bad_request', 'error.bad_request', undefined, securityHeaders(call.https, undefined));
      return;
    }
    const contentType = call.headers['content-type'];
    const upload = isUpload(contentType);
    const limit = upload ? UPLOAD_BODY_MAX_BYTES : API_BODY_LIMIT_BYTES;
    const tooLarge = upload ? UPLOAD_TOO_LARGE : BODY_TOO_LARGE;
    if (Number(call.headers['content-length'] ?? 0) > limit) return sendFailure(call, classifyUpstreamError({ code: tooLarge }));

    /*
     * UPSTREAM_TIMEOUT_MS bounds the whole wait from the request's arrival (the body is streamed),
     * the time queued for one of the pool's connections included (undici's own timeouts start on
     * the socket): when it passes the client gets 504 at once, and the abort keeps a request still
     * queued from ever reaching the core. Uploads get UPLOAD_UPSTREAM_TIMEOUT_MS instead: their
     * body streams through the same wait. A streamed answer, once begun, is bounded by undici's
     * bodyTimeout.
     */
    const timeoutMs = upload ? options.uploadTimeoutMs : options.timeoutMs;
    const upstream = new UpstreamCall(call, ways);
    upstream.deadline = setTimeout(() => {
      upstream.deadline = null;
      if (!res.headersSent) {
        call.warn({ timeoutMs }, 'upstream deadline passed');
        sendFailure(call, classifyUpstreamError({ code: DEADLINE_PASSED }));
      }
      upstream.abort(codedError(DEADLINE_PASSED, 'upstream deadline passed'));
    }, timeoutMs);
    // The browser gone before its answer: the call to the core is not worth finishing.
    res.once('close', () => {
      if (res.writableFinished) return;
      upstream.endDeadline();
      upstream.abort(codedError('BFF_CLIENT_GONE', 'client closed the connection'));
    });
    core.dispatch(
      {
        path: call.url,
        method: req.method as Dispatcher.HttpMethod,
        headers: upstreamHeaders(call, host),
        body: hasBody(call.headers) ? limitBody(req, limit, tooLarge) : null,
        // undici's own socket timeouts (the pool's are UPSTREAM_TIMEOUT_MS) stretched for an upload.
        ...(upload ? { headersTimeout: timeoutMs, bodyTimeout: timeoutMs } : {}),
      },
      upstream,
    );
  };
}
