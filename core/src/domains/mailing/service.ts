import { MAIL_TOPICS, maskEmail, type TAntiPhishingBody, type TMailingBody, type TMailPreferences, type TMailTopic } from '@obmen/shared';
import type { Db } from '../../db/index.ts';
import { AppError } from '../../errors.ts';
import { queueMail } from '../../mail/outbox.ts';
import { getMailPreferences, mayMail, readUnsubscribeToken, setMailPreferences, unsubscribe } from '../../mail/preferences.ts';
import { verifySecondFactor } from '../security/second-factor.ts';

/** GET /api/config/mailing: the switches and the anti-phishing code. */
export async function mailingPreferences(db: Db, userId: string): Promise<{ mailing: TMailPreferences; anti_phishing_code: string | null }> {
  const [user] = await db.query<{ code: string | null }>('SELECT anti_phishing_code AS code FROM users WHERE id = $1', [userId]);
  return { mailing: await getMailPreferences(db, userId), anti_phishing_code: user?.code ?? null };
}

/** POST /api/config/mailing: the switches sent change, the others stay. */
export function changeMailingPreferences(db: Db, userId: string, body: TMailingBody): Promise<TMailPreferences> {
  const change: Partial<TMailPreferences> = {};
  for (const key of MAIL_TOPICS) if (body[key] !== undefined) change[key] = body[key];
  return setMailPreferences(db, userId, change);
}

/**
 * POST /api/config/anti_phishing: sets (or, empty, removes) the code mails start with. With 2FA
 * on it takes the second factor first; the change is told by a security mail, which already
 * carries the new code (or none).
 */
export async function setAntiPhishingCode(db: Db, userId: string, body: TAntiPhishingBody, now: Date): Promise<string | null> {
  await verifySecondFactor(db, userId, { code: body.code, passkey: body.passkey }, now.getTime());
  const code = body.anti_phishing_code || null;
  await db.transaction(async (tx) => {
    const [user] = await tx.query<{ email: string; locale: 'ru' | 'en'; account_id: number }>(
      'UPDATE users SET anti_phishing_code = $2 WHERE id = $1 RETURNING email, locale, account_id',
      [userId, code],
    );
    await queueMail(tx, { kind: 'anti_phishing_changed', to: user!.email, locale: user!.locale, vars: { account_id: user!.account_id } });
  });
  return code;
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
