import { maskEmail, type TMailingBody, type TMailPreferences, type TMailTopic } from '@obmen/shared';
import type { Db } from '../../db/index.ts';
import { AppError } from '../../errors.ts';
import { getMailPreferences, mayMail, readUnsubscribeToken, setMailPreferences, unsubscribe } from '../../mail/preferences.ts';

/** GET /api/config/mailing */
export function mailingPreferences(db: Db, userId: string): Promise<TMailPreferences> {
  return getMailPreferences(db, userId);
}

/** POST /api/config/mailing: the switches sent change, the others stay. */
export function changeMailingPreferences(db: Db, userId: string, body: TMailingBody): Promise<TMailPreferences> {
  const change: Partial<TMailPreferences> = {};
  for (const key of ['news', 'referral', 'chat_digest'] as const) if (body[key] !== undefined) change[key] = body[key];
  return setMailPreferences(db, userId, change);
}

export type TUnsubscribeView = { topic: TMailTopic; address: string; unsubscribed: boolean };

async function target(db: Db, token: string) {
  const found = await readUnsubscribeToken(db, token);
  if (!found) throw new AppError('unsubscribe_link_invalid');
  return found;
}

/** GET /api/mail/unsubscribe?t=: what the link names; changes nothing (mail scanners open links). */
export async function describeUnsubscribe(db: Db, token: string): Promise<TUnsubscribeView> {
  const found = await target(db, token);
  return { topic: found.topic, address: maskEmail(found.address), unsubscribed: !(await mayMail(db, found.address, found.topic)) };
}

/** POST /api/mail/unsubscribe?t= (the page's button, or a mail client's RFC 8058 one-click POST). */
export async function confirmUnsubscribe(db: Db, token: string): Promise<TUnsubscribeView> {
  const found = await target(db, token);
  await unsubscribe(db, found);
  return { topic: found.topic, address: maskEmail(found.address), unsubscribed: true };
}
