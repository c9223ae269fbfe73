import { fileURLToPath } from 'node:url';
import { z } from 'zod';

const ZConfig = z
  .object({
    NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
    HOST: z.string().default('127.0.0.1'),
    PORT: z.coerce.number().int().min(0).max(65535).default(3000),
    LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
    /** Per-request access lines; off by default in production benchmarks, on for ops by choice. */
    LOG_REQUESTS: z
      .enum(['true', 'false'])
      .default('true')
      .transform((value) => value === 'true'),
    UPSTREAM_URL: z.url({ protocol: /^https?$/ }).default('http://127.0.0.1:4000'),
    /** No proxied request waits longer than this for the core's answer headers or body. */
    UPSTREAM_TIMEOUT_MS: z.coerce.number().int().min(100).max(120_000).default(10_000),
    /**
     * The same bound for uploads (multipart/form-data bodies: identity documents, chat files),
     * which stream up to 60 MB from a phone and are re-encoded by the core before it answers.
     */
    UPLOAD_UPSTREAM_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(120_000),
    UPSTREAM_CONNECTIONS: z.coerce.number().int().min(1).max(1024).default(64),
    SITE_DIST: z.string().default(fileURLToPath(new URL('../../site/dist/', import.meta.url))),
    /** Development (`pnpm dev`): pages, assets and hot reload come from this Astro dev server instead of SITE_DIST. */
    SITE_DEV_URL: z.url({ protocol: /^http$/ }).optional(),
    SHUTDOWN_GRACE_MS: z.coerce.number().int().min(0).default(10_000),
    /** Behind a load balancer: its address (Fastify trustProxy syntax). Alone: unset, the socket is the client. */
    TRUST_PROXY: z.string().optional(),
    /** The public address when a proxy in front rewrites Host: its origin passes the CSRF check too. */
    PUBLIC_URL: z.url({ protocol: /^https?$/ }).optional(),
    /** Signed-out article pages are served from memory this long (0: no page cache). */
    PAGE_CACHE_TTL_MS: z.coerce.number().int().min(0).max(3_600_000).default(30_000),
    /** How often the page cache asks the core for its content version (one call per BFF instance). */
    PAGE_CACHE_POLL_MS: z.coerce.number().int().min(100).max(60_000).default(1_000),
    PAGE_CACHE_MAX_BYTES: z.coerce
      .number()
      .int()
      .min(0)
      .default(64 * 1024 * 1024),
    /** Front-end logger: reports per client address per minute (429 beyond). */
    FRONT_LOG_PER_MINUTE: z.coerce.number().int().min(1).max(10_000_000).default(30),
    /** Paths that do not exist (404s the BFF answers or renders): per client address per minute (429 beyond). */
    NOT_FOUND_PER_MINUTE: z.coerce.number().int().min(1).max(10_000_000).default(120),
    /** Realtime socket (/ws): a ping this often; a browser that did not answer the last one is dropped. */
    WS_HEARTBEAT_MS: z.coerce.number().int().min(100).max(300_000).default(30_000),
    /** Realtime socket: a browser with more than this unsent is a slow reader and is disconnected. */
    WS_MAX_BUFFERED_BYTES: z.coerce
      .number()
      .int()
      .min(1024)
      .default(1024 * 1024),
    /** Realtime sockets one session may hold at once: a newer one closes the oldest (4409). */
    WS_MAX_PER_SESSION: z.coerce.number().int().min(1).max(10_000).default(10),
    /** Realtime sockets one client address (IPv6 per /64) may hold at once: 429 before the upgrade beyond. */
    WS_MAX_PER_ADDRESS: z.coerce.number().int().min(1).max(1_000_000).default(200),
    /** Overload: above this mean event-loop delay (ms, sampled each second) requests get 503 + Retry-After (0: never). */
    SHED_EVENT_LOOP_DELAY_MS: z.coerce.number().int().min(0).max(60_000).default(1_000),
    /** Overload of the core: with this many calls waiting for a connection to it, requests that need it get 503 + Retry-After (0: never). */
    SHED_UPSTREAM_PENDING: z.coerce.number().int().min(0).max(1_000_000).default(256),
  })
  .refine((config) => !(config.SITE_DEV_URL && config.NODE_ENV === 'production'), {
    path: ['SITE_DEV_URL'],
    message: 'the Astro dev server is for development only (NODE_ENV=production)',
  });
export type TConfig = z.infer<typeof ZConfig>;

/** Every variable the BFF reads (.env.example and docs/ops.md list them all; a test checks). */
export const CONFIG_VARIABLES = Object.keys(ZConfig.shape);

export function loadConfig(env: NodeJS.ProcessEnv = process.env): TConfig {
  const result = ZConfig.safeParse(env);
  if (result.success) return result.data;
  const problems = result.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`);
  throw new Error(`Invalid BFF configuration: ${problems.join('; ')}`);
}
