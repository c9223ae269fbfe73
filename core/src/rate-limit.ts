import { API_KEY_REQUESTS_PER_MINUTE } from '@obmen/shared';
import type { Queryable } from './db/index.ts';
import { AppError } from './errors.ts';

export type TRateRule = { max: number; windowS: number };

/**
 * The limits of the account endpoints. Per IP they are loose enough for a carrier NAT or an
 * office behind one address; per account/email they are what one person needs, tops.
 *
 * - password sign-in: 30 per IP per 15 min; wrong passwords are counted per (address, account)
 *   and slow that pair down (domains/auth/password-failures.ts), never the account everywhere.
 * - sign-up, passwordless link, reset: each mails someone, so per address 3 (5 for links)
 *   per hour stops mail-bombing a victim and protects our sender reputation; per IP 10-20 per
 *   hour / 15 min stops walking through address lists.
 * - spending a mailed token: 30 per IP per 15 min (tokens are 256-bit: this only stops noise).
 * - change password: 10 per account per 15 min (a stolen session guessing the current one).
 * - confirmation mail: 3 per account per hour.
 * - transfer check: it reveals a masked name per account number, so 60 per user per 10 min
 *   (plenty for typing and correcting a form) stops walking the account-number space.
 * - deposit creation: each one is a row (and later a provider call), so 30 per user per hour.
 * - card reveal: each checks a password (scrypt) or a code, so 10 per user per 15 min.
 * - chat messages: 30 per user per minute (a person types slower; a flood stops at the 31st);
 *   a new private conversation (unknown accounts included) 30 per user per hour, which bounds
 *   walking account ids through the chat.
 * - uploads (identity documents, chat messages with files): each file is decoded and re-encoded
 *   or rebuilt, so 20 uploads (of up to 6 files) per user per 10 min: a document takes two or
 *   three, a chat a photo now and then.
 * - referral invitations by mail: each address counts; 30 addresses per user per day keeps a
 *   user's invitations personal and our sender reputation intact.
 * - second-factor codes: 10 per user per 15 min (a 6-digit code has a million values: this
 *   keeps guessing at ~1 000 a day), wherever a code is asked (sign-in, 2FA off, withdrawals).
 * - e-mail change: each mails two addresses, so 5 per account per hour (and the new address
 *   counts against the passwordless-link limit of that address).
 * - refused webhook or issuer-callback deliveries (forged, stale): 30 per sender address per
 *   10 min, then 429. A provider with a wrong secret or clock is well within it (it retries with
 *   backoff); a flood stops costing more than this counter. Valid deliveries never count.
 *
 * - a bot's key: API_KEY_REQUESTS_PER_MINUTE (600) signed requests per key per minute, ten a
 *   second: room for a trading loop, not for hammering the ledger.
 *
 * A fixed window per key, in the database (every core instance shares it; nothing per user in
 * process memory). A window lets a burst of up to 2×max across its edge: acceptable here.
 */
export const RATE_LIMITS = {
  login_ip: { max: 30, windowS: 15 * 60 },
  signup_ip: { max: 10, windowS: 60 * 60 },
  signup_email: { max: 3, windowS: 60 * 60 },
  link_ip: { max: 20, windowS: 15 * 60 },
  link_email: { max: 5, windowS: 60 * 60 },
  reset_ip: { max: 10, windowS: 60 * 60 },
  reset_email: { max: 3, windowS: 60 * 60 },
  token_ip: { max: 30, windowS: 15 * 60 },
  change_user: { max: 10, windowS: 15 * 60 },
  confirm_user: { max: 3, windowS: 60 * 60 },
  transfer_check_user: { max: 60, windowS: 10 * 60 },
  deposit_create_user: { max: 30, windowS: 60 * 60 },
  data_export_user: { max: 3, windowS: 24 * 60 * 60 },
  // the withdraw form checks as the user types (debounced)
  withdraw_check_user: { max: 120, windowS: 10 * 60 },
  // the deposit and purchase forms check (and quote) as the user types, debounced
  payment_check_user: { max: 120, windowS: 10 * 60 },
  card_reveal_user: { max: 10, windowS: 15 * 60 },
  chat_message_user: { max: 30, windowS: 60 },
  chat_open_user: { max: 30, windowS: 60 * 60 },
  upload_user: { max: 20, windowS: 10 * 60 },
  referral_mailing_user: { max: 30, windowS: 24 * 60 * 60 },
  second_factor_user: { max: 10, windowS: 15 * 60 },
  // passkey sign-in: each options call stores a challenge for nobody yet
  passkey_ip: { max: 30, windowS: 15 * 60 },
  email_change_user: { max: 5, windowS: 60 * 60 },
  webhook_refused_ip: { max: 30, windowS: 10 * 60 },
  api_key: { max: API_KEY_REQUESTS_PER_MINUTE, windowS: 60 },
} as const satisfies Record<string, TRateRule>;
export type TRateName = keyof typeof RATE_LIMITS;

/** RATE_LIMIT_FACTOR: set once at boot by the app (config is validated there). */
let factor = 1;
export function setRateLimitFactor(value: number): void {
  factor = value;
}

/**
 * Counts one hit on `key` and throws 429 (with Retry-After) when the window is full. One
 * atomic upsert: concurrent requests on any instance can't both take the last slot.
 */
export async function consumeRateLimit(db: Queryable, name: TRateName, subject: string): Promise<void> {
  const rule: TRateRule = RATE_LIMITS[name];
  const [row] = await db.query<{ hits: number; retry_after: number }>(
    `INSERT INTO rate_limits AS r (key, window_start, window_seconds, hits) VALUES ($1, now(), $2, 1)
     ON CONFLICT (key) DO UPDATE SET
       hits = CASE WHEN r.window_start + r.window_seconds * interval '1 second' <= now() THEN 1 ELSE r.hits + 1 END,
       window_start = CASE WHEN r.window_start + r.window_seconds * interval '1 second' <= now() THEN now() ELSE r.window_start END,
       window_seconds = $2
     RETURNING hits, ceil(extract(epoch FROM (window_start + window_seconds * interval '1 second' - now())))::int AS retry_after`,
    [`${name}:${subject}`, rule.windowS],
  );
  if (!row || row.hits <= rule.max * factor) return;
  throw rateLimitedFor(row.retry_after);
}

/** 429 with Retry-After: "try again in N min". */
export function rateLimitedFor(retryAfterS: number): AppError {
  const seconds = Math.max(1, retryAfterS);
  return new AppError('rate_limited', {
    key: 'error.rate_limited_retry',
    vars: { minutes: Math.ceil(seconds / 60) },
    headers: { 'retry-after': String(seconds) },
  });
}

/** Drops windows that ended: the table holds only live counters. */
export async function purgeRateLimits(db: Queryable): Promise<void> {
  await db.query(`DELETE FROM rate_limits WHERE window_start + window_seconds * interval '1 second' < now()`);
}
