import { availableParallelism } from 'node:os';
import { z } from 'zod';
import { JOB_NAMES, type TJobName } from './jobs/names.ts';
import { parseCidrList } from './lib/cidr.ts';
import { isValidMnemonic, PUBLIC_MNEMONICS } from './providers/evm/keys.ts';

const ZEvmAddress = z.string().regex(/^0x[0-9a-fA-F]{40}$/, 'is not an address (0x and 40 hex digits)');

const ZConfig = z
  .object({
    NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
    HOST: z.string().default('127.0.0.1'),
    PORT: z.coerce.number().int().min(0).max(65535).default(4000),
    LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
    /** Unset: embedded PGlite in DATA_DIR. Set: PostgreSQL (production). */
    DATABASE_URL: z.url({ protocol: /^postgres(ql)?$/ }).optional(),
    DATA_DIR: z.string().min(1).default('.data/pglite'),
    /**
     * PostgreSQL connections of this process. Beyond a few per CPU, concurrent money calls only
     * queue on the same row locks and switch contexts: with 2 hot accounts on a 2-CPU machine a
     * pool of 8 moved 15% more transfers than a pool of 16, with a fifth less PostgreSQL CPU each.
     */
    DB_POOL_SIZE: z.coerce
      .number()
      .int()
      .min(1)
      .max(200)
      .default(Math.min(32, 4 * availableParallelism())),
    /**
     * PostgreSQL: the longest wait to open a connection or to get a free one from the pool. Past
     * it the request gets 503 database_unavailable with Retry-After.
     */
    DB_CONNECT_TIMEOUT_MS: z.coerce.number().int().min(100).max(60_000).default(5_000),
    /**
     * PostgreSQL: the longest a statement may run (and a transaction may sit idle) before the
     * server cancels it and rolls its transaction back (503 database_unavailable). Kept below the
     * BFF's UPSTREAM_TIMEOUT_MS (10 s) so that the core answers first; 0 turns it off.
     */
    DB_STATEMENT_TIMEOUT_MS: z.coerce.number().int().min(0).max(600_000).default(8_000),
    /**
     * The start scripts (scripts/start.ts, scripts/dev.ts) run `ops seed` before the core: currencies,
     * settings, menus, articles and logos into an empty database (the core itself never seeds).
     */
    SEED: z
      .enum(['true', 'false'])
      .default('true')
      .transform((value) => value === 'true'),
    /**
     * Which timed jobs this core's scheduler runs (core/src/jobs): `all`, `none`, or names with
     * commas (`purge,webhook-retry`). On a shared PostgreSQL a job runs on one core at a time
     * whatever this says; the test helpers set `none` and drive jobs themselves.
     */
    JOBS: z
      .string()
      .default('all')
      .transform((value, ctx): TJobName[] => {
        const list = value.trim();
        if (list === 'all') return [...JOB_NAMES];
        if (list === 'none') return [];
        const names = list.split(',').map((name) => name.trim());
        const unknown = names.filter((name) => !(JOB_NAMES as readonly string[]).includes(name));
        if (unknown.length) ctx.addIssue({ code: 'custom', message: `unknown job ${unknown.join(', ')}: all, none, or some of ${JOB_NAMES.join(', ')}` });
        return [...new Set(names as TJobName[])];
      }),
    SHUTDOWN_GRACE_MS: z.coerce.number().int().min(0).default(10_000),
    /**
     * Whose X-Forwarded-For to believe (Fastify trustProxy syntax): the BFF, which overwrites
     * that header with its own peer. Default: loopback, the BFF on the same machine.
     */
    TRUST_PROXY: z.string().min(1).default('127.0.0.1,::1'),
    /**
     * Multiplies every rate limit's maximum (core/src/rate-limit.ts). For test servers whose
     * clients all come from one address (the e2e suite); production keeps 1.
     */
    RATE_LIMIT_FACTOR: z.coerce.number().int().min(1).max(100).default(1),
    /**
     * scrypt's log2(N) for new password hashes. 17 (OWASP) everywhere; a test run may lower it,
     * because one hash per sign-up and per fresh database dominated the suite's time.
     */
    PASSWORD_SCRYPT_LN: z.coerce.number().int().min(10).max(20).default(17),
    /** The site's address, for links in mails. */
    PUBLIC_URL: z
      .url({ protocol: /^https?$/ })
      .default('http://localhost:3000')
      .transform((value) => value.replace(/\/+$/, '')),
    /** smtp(s)://user:pass@host:port: mails go out by SMTP. Unset: they stay in the outbox (dev mailbox). */
    SMTP_URL: z.url({ protocol: /^smtps?$/ }).optional(),
    MAIL_FROM: z.string().min(3).default('Obmen <no-reply@obmen.local>'),
    /**
     * Unset: exchange rates come from the `rates` table (set by an operator, `rates:set`). Set: mid
     * rates from this CoinGecko-compatible price feed (…/simple/price); spread, fee, limits stay the table's.
     */
    RATES_FEED_URL: z.url({ protocol: /^https?$/ }).optional(),
    /**
     * The back office (/api/ops) answers only clients of these networks (CIDR, comma-separated;
     * the address as the trusted proxy gives it); everyone else gets 404. Unset: any address.
     */
    OPS_ALLOWED_IPS: z
      .string()
      .optional()
      .refine((value) => value === undefined || parseCidrList(value) !== null, { message: 'a comma-separated list of CIDR networks, e.g. 10.0.0.0/8,::1/128' }),
    /** The support desk's first-response target: a conversation waiting longer is overdue (queues, /metrics). */
    SUPPORT_FIRST_RESPONSE_MS: z.coerce
      .number()
      .int()
      .min(60_000)
      .default(15 * 60_000),
    /** Identity review's target: a submitted verification waiting longer is overdue (queues, /metrics). */
    KYC_REVIEW_TARGET_MS: z.coerce
      .number()
      .int()
      .min(60_000)
      .default(24 * 60 * 60_000),
    /** The withdrawals desk's target: a request waiting for an operator longer is overdue (queues, /metrics). */
    WITHDRAWAL_REVIEW_TARGET_MS: z.coerce
      .number()
      .int()
      .min(60_000)
      .default(4 * 60 * 60_000),
    /** Realtime events go between the cores through this NATS server (nats://host:4222); unset: PostgreSQL LISTEN/NOTIFY. */
    NATS_URL: z.url({ protocol: /^(nats|tls)$/ }).optional(),
    /** How often the realtime stream re-checks its sessions (logout closes sockets within this) and catches up. */
    EVENTS_CHECK_MS: z.coerce.number().int().min(50).max(60_000).default(2_000),
    /** Private files (identity documents, chat attachments) on local disk, when S3_URL is unset. */
    FILES_DIR: z.string().min(1).default('.data/files'),
    /** An S3-compatible endpoint (https://s3.eu-central-1.amazonaws.com, http://minio:9000): files go there. */
    S3_URL: z.url({ protocol: /^https?$/ }).optional(),
    S3_BUCKET: z.string().min(3).default('obmen-private'),
    S3_REGION: z.string().min(1).default('us-east-1'),
    S3_ACCESS_KEY_ID: z.string().min(1).optional(),
    S3_SECRET_ACCESS_KEY: z.string().min(1).optional(),
    /**
     * 32 bytes, base64: encrypts document numbers at rest (AES-256-GCM). Unset: a key is generated
     * once into DOCUMENT_KEY_FILE (a warning in production: several cores must share one key, and
     * it belongs in a secret store, not beside the data).
     */
    DOCUMENT_KEY: z
      .string()
      .refine((value) => Buffer.from(value, 'base64').length === 32, 'must be 32 bytes in base64')
      .optional(),
    DOCUMENT_KEY_FILE: z.string().min(1).default('.data/document.key'),
    /**
     * Processed webhook and issuer-callback deliveries are kept this many days, then purged
     * (the purge job). The exactly-once keys of their events stay; unprocessed deliveries stay.
     */
    WEBHOOK_RETENTION_DAYS: z.coerce.number().int().min(1).max(3650).default(90),
    /**
     * The secret the sandbox-card provider signs its webhooks with (at least 32 characters).
     * Unset: a fixed development secret outside production; in production its webhooks are refused.
     */
    WEBHOOK_SECRET_SANDBOX_CARD: z.string().min(32).optional(),
    /** The same for sandbox-bank (bank transfers marked received by an operator). */
    WEBHOOK_SECRET_SANDBOX_BANK: z.string().min(32).optional(),
    /** The same for sandbox-chain (simulated chain transactions and their confirmations). */
    WEBHOOK_SECRET_SANDBOX_CHAIN: z.string().min(32).optional(),
    /**
     * The secret the built-in sandbox card issuer signs its callbacks with (at least 32
     * characters). Unset: a fixed development secret outside production; in production its
     * callbacks are refused.
     */
    CARD_ISSUER_SECRET_SANDBOX: z.string().min(32).optional(),
    /**
     * Staging only: lets a production core run with sandbox providers enabled (a secret above
     * set), whose test cards and simulated chains credit balances with money nobody paid. Logged
     * as an error at every start. Without it, production refuses such a configuration.
     */
    SANDBOX_PROVIDERS_IN_PRODUCTION: z
      .enum(['true', 'false'])
      .default('false')
      .transform((value) => value === 'true'),
    /**
     * An Ethereum JSON-RPC endpoint (the development chain the start scripts run, a testnet or a
     * mainnet node): set, the `evm` provider runs (ETH, USDT and USDC deposits to addresses of
     * our own, seen by the evm-watcher job). Unset: no EVM chain here.
     */
    EVM_RPC_URL: z.url({ protocol: /^https?$/ }).optional(),
    /** The chain the node must be on (checked at every watcher run): 31337 the development chain, 1 mainnet, 11155111 Sepolia. */
    EVM_CHAIN_ID: z.coerce.number().int().min(1).default(31337),
    /** The tokens' contracts; unset on the development chain: the addresses its start deploys them at. */
    EVM_TOKEN_USDT: ZEvmAddress.optional(),
    EVM_TOKEN_USDC: ZEvmAddress.optional(),
    /**
     * The exchange's key material (never logged): a BIP-39 mnemonic, or a file holding it
     * (EVM_MNEMONIC_FILE, readable by the core only). Deposit addresses come from the extended
     * public key of m/44'/60'/0'/0, which EVM_XPUB may give instead (a core that only hands out
     * addresses and watches needs no private key). Unset outside production: a development
     * mnemonic, which production refuses.
     */
    EVM_MNEMONIC: z.string().refine(isValidMnemonic, 'is not a BIP-39 mnemonic').optional(),
    EVM_MNEMONIC_FILE: z.string().min(1).optional(),
    EVM_XPUB: z
      .string()
      .regex(/^xpub[1-9A-HJ-NP-Za-km-z]{100,112}$/, 'is not an extended public key')
      .optional(),
    /** The first block the watcher reads on a database that has seen none (unset: 0 on the development chain, else the node's head). */
    EVM_START_BLOCK: z.coerce.number().int().min(0).optional(),
    /** The most blocks one watcher run reads (a core far behind catches up over several runs). */
    EVM_BLOCKS_PER_RUN: z.coerce.number().int().min(1).max(10_000).default(200),
    /** How often the watcher asks the node for new blocks. */
    EVM_POLL_MS: z.coerce.number().int().min(100).max(600_000).default(3_000),
  })
  .superRefine((config, ctx) => {
    if (config.PASSWORD_SCRYPT_LN < 17 && config.NODE_ENV !== 'test') {
      ctx.addIssue({ code: 'custom', path: ['PASSWORD_SCRYPT_LN'], message: 'below 17 only with NODE_ENV=test' });
    }
    if (config.NODE_ENV === 'production' && !config.SANDBOX_PROVIDERS_IN_PRODUCTION) {
      for (const name of SANDBOX_SECRETS) {
        if (config[name] === undefined) continue;
        ctx.addIssue({
          code: 'custom',
          path: [name],
          message:
            'enables a sandbox provider (its test payments credit real balances): not in production, unless SANDBOX_PROVIDERS_IN_PRODUCTION=true on a staging server',
        });
      }
    }
    if (config.NODE_ENV === 'production' && config.EVM_RPC_URL) {
      const mnemonic = config.EVM_MNEMONIC?.trim();
      if (mnemonic && PUBLIC_MNEMONICS.includes(mnemonic))
        ctx.addIssue({ code: 'custom', path: ['EVM_MNEMONIC'], message: 'is a development mnemonic everybody knows: not in production' });
      if (!config.EVM_MNEMONIC && !config.EVM_MNEMONIC_FILE && !config.EVM_XPUB)
        ctx.addIssue({ code: 'custom', path: ['EVM_MNEMONIC'], message: 'EVM_RPC_URL in production needs EVM_MNEMONIC, EVM_MNEMONIC_FILE or EVM_XPUB' });
      if (!config.EVM_TOKEN_USDT || !config.EVM_TOKEN_USDC)
        ctx.addIssue({ code: 'custom', path: ['EVM_TOKEN_USDT'], message: 'EVM_RPC_URL in production needs EVM_TOKEN_USDT and EVM_TOKEN_USDC' });
    }
    if (config.S3_URL && (!config.S3_ACCESS_KEY_ID || !config.S3_SECRET_ACCESS_KEY)) {
      ctx.addIssue({ code: 'custom', path: ['S3_ACCESS_KEY_ID'], message: 'S3_URL needs S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY' });
    }
  });
export type TConfig = z.infer<typeof ZConfig>;

/**
 * The secrets that enable a sandbox provider: providers and issuers are code and all registered,
 * but one without its secret has every webhook or callback refused, so it can move nothing.
 * Outside production a development secret stands in for an unset one.
 */
const SANDBOX_SECRETS = [
  'WEBHOOK_SECRET_SANDBOX_CARD',
  'WEBHOOK_SECRET_SANDBOX_BANK',
  'WEBHOOK_SECRET_SANDBOX_CHAIN',
  'CARD_ISSUER_SECRET_SANDBOX',
] as const satisfies ReadonlyArray<keyof TConfig>;

/** Whether sandbox providers may run here: always outside production, in production only by the staging switch. */
export function sandboxesAllowed(config: Pick<TConfig, 'NODE_ENV' | 'SANDBOX_PROVIDERS_IN_PRODUCTION'>): boolean {
  return config.NODE_ENV !== 'production' || config.SANDBOX_PROVIDERS_IN_PRODUCTION;
}

/** Every variable the core reads (.env.example and docs/ops.md list them all; a test checks). */
export const CONFIG_VARIABLES = Object.keys(ZConfig.shape);

/** Validated once at boot; a bad variable stops the process with its name in the message. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): TConfig {
  const result = ZConfig.safeParse(env);
  if (result.success) return result.data;
  const problems = result.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`);
  throw new Error(`Invalid core configuration: ${problems.join('; ')}`);
}
