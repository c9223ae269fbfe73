import { displayDateTime, translate, type TLocale } from '@obmen/shared';
import type { Queryable } from '../../db/index.ts';
import { hashToken, newToken } from '../../lib/tokens.ts';
import { queueMail } from '../../mail/outbox.ts';
import { describeDevice } from '../security/device.ts';
import { countryName, countryOf, deviceKey, networkKey } from '../security/places.ts';

/** Where the "this wasn't me" link of a new-sign-in mail lands, and how long it works. */
export const SIGN_IN_REPORT_PATH = '/settings/sign-in-report?t=';
export const SIGN_IN_REPORT_TTL_S = 7 * 24 * 60 * 60;

/**
 * A successful sign-in, in its transaction: its device and network become known to the account;
 * when either was new and the account had signed in before, its owner gets a security mail with
 * the time, the device, the address and its country, and a "this wasn't me" link.
 */
export async function noticeSignIn(
  tx: Queryable,
  /** `at`: the time the mail tells (the database's clock decides the link's life). */
  input: { userId: string; ip: string | undefined; userAgent: string | undefined; at: Date; publicUrl: string },
): Promise<boolean> {
  const [seen] = await tx.query<{ known: number; added: number }>(
    `WITH before AS (SELECT count(*)::int AS n FROM sign_in_places WHERE user_id = $1),
          seen AS (
            INSERT INTO sign_in_places (user_id, kind, key, first_seen_at, last_seen_at) VALUES ($1, 'device', $2, now(), now()), ($1, 'network', $3, now(), now())
            ON CONFLICT (user_id, kind, key) DO UPDATE SET last_seen_at = EXCLUDED.last_seen_at
            RETURNING (xmax = 0) AS added
          )
     SELECT (SELECT n FROM before) AS known, count(*) FILTER (WHERE added)::int AS added FROM seen`,
    [input.userId, deviceKey(input.userAgent), networkKey(input.ip)],
  );
  if (!seen || seen.known === 0 || seen.added === 0) return false;
  const [user] = await tx.query<{ email: string; locale: TLocale }>('SELECT email, locale FROM users WHERE id = $1', [input.userId]);
  const token = newToken();
  await tx.query(`INSERT INTO sign_in_alerts (user_id, report_hash, created_at, report_until) VALUES ($1, $2, now(), now() + $3::int * interval '1 second')`, [
    input.userId,
    hashToken(token),
    SIGN_IN_REPORT_TTL_S,
  ]);
  const { locale } = user!;
  const country = await countryOf(input.ip);
  await queueMail(tx, {
    kind: 'sign_in_new_device',
    to: user!.email,
    locale,
    vars: {
      at: `${displayDateTime(input.at.toISOString(), locale, 'UTC')} UTC`,
      device: describeDevice(input.userAgent) ?? translate(locale, 'security.device_unknown'),
      ip: input.ip ?? '—',
      place:
        country === 'local' ? translate(locale, 'security.place_local') : country ? countryName(country, locale) : translate(locale, 'security.place_unknown'),
      link: `${input.publicUrl}${SIGN_IN_REPORT_PATH}${token}`,
    },
  });
  return true;
}
