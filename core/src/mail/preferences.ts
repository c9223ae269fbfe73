import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { MAIL_TOPICS, type TMailPreferences, type TMailTopic } from '@obmen/shared';
import type { Queryable } from '../db/index.ts';

/*
 * Mail preferences: an account switches optional mails off in /settings/mail; any
 * optional mail carries a signed one-click unsubscribe link (no sign-in) that sets the same
 * switch, or, for an address without an account (a referral invitation), puts the address on
 * mail_unsubscribed. queueMail() (outbox.ts) asks `mayMail` for every optional mail: the one
 * place where the preference is respected.
 */

export const UNSUBSCRIBE_PATH = '/unsubscribe?t=';
export const ONE_CLICK_PATH = '/api/mail/unsubscribe?t=';

const DEFAULTS = Object.fromEntries(MAIL_TOPICS.map((topic) => [topic, true])) as TMailPreferences;
/** The switches' columns (mail_preferences has one per topic, named as it). */
const COLUMNS = MAIL_TOPICS.join(', ');

/** The key unsubscribe links are signed with: made once, in the database, shared by every core. */
export async function linkKey(db: Queryable): Promise<Buffer> {
  const [row] = await db.query<{ secret: Buffer }>('SELECT secret FROM mail_link_key WHERE id');
  if (row) return Buffer.from(row.secret);
  await db.query('INSERT INTO mail_link_key (secret) VALUES ($1) ON CONFLICT (id) DO NOTHING', [randomBytes(32)]);
  const [made] = await db.query<{ secret: Buffer }>('SELECT secret FROM mail_link_key WHERE id');
  return Buffer.from(made!.secret);
}

const normalise = (address: string) => address.trim().toLowerCase();

function sign(key: Buffer, payload: string): string {
  return createHmac('sha256', key).update(`unsubscribe:${payload}`).digest().subarray(0, 18).toString('base64url');
}

/** `<base64url(topic:address)>.<HMAC>`: names the address and the topic; never expires. */
export async function unsubscribeToken(db: Queryable, address: string, topic: TMailTopic): Promise<string> {
  return unsubscribeTokenWith(await linkKey(db), address, topic);
}

/** The same with the key in hand (a batch of mails reads it once). */
export function unsubscribeTokenWith(key: Buffer, address: string, topic: TMailTopic): string {
  const payload = Buffer.from(`${topic}:${normalise(address)}`, 'utf8').toString('base64url');
  return `${payload}.${sign(key, payload)}`;
}

export type TUnsubscribeTarget = { address: string; topic: TMailTopic };

/** The address and topic of a genuine token, or null (forged, altered, malformed). */
export async function readUnsubscribeToken(db: Queryable, token: string): Promise<TUnsubscribeTarget | null> {
  const match = /^([A-Za-z0-9_-]{4,700})\.([A-Za-z0-9_-]{24})$/.exec(token);
  if (!match) return null;
  const [, payload, signature] = match as unknown as [string, string, string];
  const expected = Buffer.from(sign(await linkKey(db), payload));
  const given = Buffer.from(signature);
  if (expected.length !== given.length || !timingSafeEqual(expected, given)) return null;
  const text = Buffer.from(payload, 'base64url').toString('utf8');
  const colon = text.indexOf(':');
  const topic = text.slice(0, colon);
  if (!(MAIL_TOPICS as readonly string[]).includes(topic)) return null;
  return { topic: topic as TMailTopic, address: text.slice(colon + 1) };
}

export async function getMailPreferences(db: Queryable, userId: string): Promise<TMailPreferences> {
  const [row] = await db.query<TMailPreferences>(`SELECT ${COLUMNS} FROM mail_preferences WHERE user_id = $1`, [userId]);
  return row ?? { ...DEFAULTS };
}

export async function setMailPreferences(db: Queryable, userId: string, change: Partial<TMailPreferences>): Promise<TMailPreferences> {
  const next = { ...(await getMailPreferences(db, userId)), ...change };
  const values = MAIL_TOPICS.map((_, i) => `$${i + 2}`).join(', ');
  const updates = MAIL_TOPICS.map((topic, i) => `${topic} = $${i + 2}`).join(', ');
  await db.query(
    `INSERT INTO mail_preferences (user_id, ${COLUMNS}) VALUES ($1, ${values})
     ON CONFLICT (user_id) DO UPDATE SET ${updates}, updated_at = now()`,
    [userId, ...MAIL_TOPICS.map((topic) => next[topic])],
  );
  return next;
}

/**
 * Whether an optional mail of `topic` may go to `address`: the account's switch when the
 * address has an account, else the unsubscribed-address list.
 */
export async function mayMail(db: Queryable, address: string, topic: TMailTopic): Promise<boolean> {
  const [row] = await db.query<{ allowed: boolean }>(
    `SELECT coalesce(
       (SELECT coalesce((to_jsonb(p) ->> $2)::boolean, true) FROM users u LEFT JOIN mail_preferences p ON p.user_id = u.id WHERE lower(u.email) = $1),
       NOT EXISTS (SELECT 1 FROM mail_unsubscribed WHERE address = $1 AND topic = $2)) AS allowed`,
    [normalise(address), topic],
  );
  return row!.allowed;
}

/** The one-click unsubscribe: sets the account's switch off, or lists an address without one. */
export async function unsubscribe(db: Queryable, target: TUnsubscribeTarget): Promise<void> {
  const address = normalise(target.address);
  const [user] = await db.query<{ id: string }>('SELECT id::text FROM users WHERE lower(email) = $1', [address]);
  if (user) await setMailPreferences(db, user.id, { [target.topic]: false });
  else await db.query('INSERT INTO mail_unsubscribed (address, topic) VALUES ($1, $2) ON CONFLICT DO NOTHING', [address, target.topic]);
}
