import { Pool } from 'undici';
import { REQUEST_ID_HEADER, isSaneRequestId, type TPageLog } from '@obmen/shared';
import type { TCoreLocals, TPageConfig } from './core.ts';
import { siteLog } from './server-log.ts';

/**
 * `pnpm dev` only. The Astro dev server renders pages in its own process behind the BFF's dev
 * proxy (bff/src/plugins/site-dev.ts), so none of the BFF's locals reach them: this gives that
 * process one small pool of its own to the core, from the environment scripts/dev.ts sets, and
 * the client address and scheme the BFF forwards (the dev server listens on loopback, reached
 * through the BFF only). In production and tests the BFF passes all of this through locals.
 */
let devCore: Pool | undefined;

export function fillDevServerLocals(locals: TCoreLocals & { fv: string; https: boolean; log: TPageLog }, request: Request): void {
  const config: TPageConfig = { NODE_ENV: 'development', UPSTREAM_TIMEOUT_MS: Number(process.env.UPSTREAM_TIMEOUT_MS ?? 10_000) };
  devCore ??= new Pool(process.env.UPSTREAM_URL ?? 'http://127.0.0.1:4000', { connections: 8, keepAliveTimeout: 60_000 });
  locals.fv = 'dev';
  locals.config = config;
  locals.core = devCore;
  locals.clientIp = request.headers.get('x-forwarded-for') ?? '127.0.0.1';
  locals.https = request.headers.get('x-forwarded-proto') === 'https';
  // The BFF's dev proxy sends its request id (bff/src/plugins/site-dev.ts).
  const requestId = request.headers.get(REQUEST_ID_HEADER);
  if (isSaneRequestId(requestId)) locals.requestId = requestId;
  locals.log = siteLog.child({ reqId: locals.requestId });
}
