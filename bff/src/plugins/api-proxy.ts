import fp from 'fastify-plugin';
import proxy from '@fastify/http-proxy';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { IncomingHttpHeaders } from 'node:http';
import type { Readable } from 'node:stream';
import { LOCALE_COOKIE, REQUEST_ID_HEADER, isLocale } from '@obmen/shared';
import type { TConfig } from '../config.ts';
import { frontendVersionMember, injectFrontendVersion } from '../envelope.ts';
import { sendError } from '../errors.ts';
import { applySessionHeaders, forwardSession } from '../session.ts';

declare module 'fastify' {
  interface FastifyRequest {
    upstreamJson: boolean;
  }
}

/** Headers only the BFF may set towards the core: a browser sending them is ignored. */
const INTERNAL_REQUEST_HEADERS = [REQUEST_ID_HEADER, 'authorization', 'x-obmen-locale', 'x-forwarded-for', 'x-forwarded-host', 'x-real-ip', 'cookie'];

const NETWORK_FAILURES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ENOTFOUND', 'EHOSTUNREACH', 'UND_ERR_SOCKET', 'UND_ERR_CLOSED']);

function classifyUpstreamError(error: { statusCode?: number; code?: string; cause?: { code?: string } }) {
  const code = error.cause?.code ?? error.code ?? '';
  if (error.statusCode === 504 || code.includes('TIMEOUT')) return { status: 504, code: 'upstream_timeout', key: 'error.upstream_timeout' };
  if (error.statusCode === 503 || NETWORK_FAILURES.has(code)) return { status: 503, code: 'upstream_unavailable', key: 'error.upstream_unavailable' };
  return { status: 502, code: 'bad_gateway', key: 'error.bad_gateway' };
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

export type TApiProxyOptions = { config: TConfig; frontendVersion: string };

/** /api/* → the core, streamed; JSON answers get `fv`; failures become JSON 502/503/504. */
export default fp<TApiProxyOptions>(
  async (app, { config, frontendVersion }) => {
    const fvMember = frontendVersionMember(frontendVersion);
    app.decorateRequest('upstreamJson', false);

    await app.register(proxy, {
      upstream: config.UPSTREAM_URL,
      prefix: '/api',
      rewritePrefix: '/api',
      // The core answers a GET with 503 on purpose (maintenance): retrying it 10 times helps nobody.
      retryMethods: [],
      disableRequestLogging: true,
      undici: {
        connections: config.UPSTREAM_CONNECTIONS,
        pipelining: 1,
        keepAliveTimeout: 60_000,
        keepAliveMaxTimeout: 600_000,
        headersTimeout: config.UPSTREAM_TIMEOUT_MS,
        bodyTimeout: config.UPSTREAM_TIMEOUT_MS,
        connect: { timeout: Math.min(config.UPSTREAM_TIMEOUT_MS, 5_000) },
      },
      replyOptions: {
        timeout: config.UPSTREAM_TIMEOUT_MS,
        // The proxy's types allow an HTTP/2 server; this one is HTTP/1, hence the narrowing casts.
        rewriteRequestHeaders: (raw, rawHeaders) => {
          const request = raw as FastifyRequest;
          const headers = rawHeaders as IncomingHttpHeaders;
          for (const name of INTERNAL_REQUEST_HEADERS) delete headers[name];
          headers['x-forwarded-for'] = request.ip;
          headers[REQUEST_ID_HEADER] = request.id;
          forwardSession(request, headers);
          const locale = request.cookies[LOCALE_COOKIE];
          if (isLocale(locale)) headers['x-obmen-locale'] = locale;
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
          if (headers['content-type']?.startsWith('application/json')) {
            request.upstreamJson = true;
            delete headers['content-length'];
          }
          return headers;
        },
        onResponse: (raw, rawReply, rawRes) => {
          const request = raw as FastifyRequest;
          const reply = rawReply as FastifyReply;
          const res = rawRes as unknown as { stream: Readable };
          if (!request.upstreamJson) return void reply.send(res.stream);
          readAll(res.stream, (err, body) => {
            if (!err) return void reply.send(injectFrontendVersion(body!, fvMember));
            request.log.warn({ err }, 'upstream body failed');
            // Nothing was sent yet (JSON is buffered): the client gets JSON 502/503/504 too.
            if (reply.raw.headersSent) return void reply.raw.destroy(err);
            const failure = classifyUpstreamError(err as { code?: string; cause?: { code?: string } });
            void sendError(request, reply, failure.status, failure.code, failure.key);
          });
        },
        onError: (rawReply, { error: rawError }) => {
          const reply = rawReply as FastifyReply;
          const error = rawError as Error & { statusCode?: number; code?: string; cause?: { code?: string } };
          const failure = classifyUpstreamError(error);
          reply.request.log.warn({ code: error.code, cause: error.cause?.code }, 'upstream failed');
          void sendError(reply.request, reply, failure.status, failure.code, failure.key);
        },
      },
    });
  },
  { name: 'api-proxy', dependencies: ['@fastify/cookie'] },
);
