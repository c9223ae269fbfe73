import { USER_INFO_FIELDS, VERIFIED_USER_FIELDS, type TUserInfo, type TUserInfoUpdate } from '@obmen/shared';
import type { Queryable } from '../../db/index.ts';
import { AppError, notFound } from '../../errors.ts';

const INFO_COLUMNS = `account_id, email, (email_confirmed_at IS NOT NULL) AS email_confirmed, need_set_password, locale,
  to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') AS created_at,
  first_name, last_name, middle_name, to_char(birth_date, 'YYYY-MM-DD') AS birth_date, phone, country, city, address, verification_level`;

/** GET /api/user/info: the account and personal data of the signed-in user. */
export async function getUserInfo(db: Queryable, userId: string): Promise<TUserInfo> {
  const [row] = await db.query<TUserInfo>(`SELECT ${INFO_COLUMNS} FROM users WHERE id = $1`, [userId]);
  if (!row) throw notFound();
  return row;
}

/**
 * POST /api/user/info: changes the fields that were sent (an empty one clears it). Email and
 * password have their own flows. Once identity is verified, the fields the document proves
 * (names, birth date, country) stay as verified: support changes them, not the form.
 */
export async function updateUserInfo(db: Queryable, userId: string, update: TUserInfoUpdate): Promise<TUserInfo> {
  const current = await getUserInfo(db, userId);
  if (current.verification_level >= 1) {
    const locked: Record<string, string> = {};
    for (const field of VERIFIED_USER_FIELDS) {
      if (update[field] !== undefined && (update[field] ?? null) !== current[field]) locked[field] = 'user.field_verified';
    }
    if (Object.keys(locked).length) throw new AppError('field_verified', { fields: locked });
  }
  const sets: string[] = [];
  const params: unknown[] = [userId];
  for (const field of USER_INFO_FIELDS) {
    const value = update[field];
    if (value === undefined) continue;
    params.push(value);
    sets.push(`${field} = $${params.length}${field === 'birth_date' ? '::date' : ''}`);
  }
  if (sets.length) await db.query(`UPDATE users SET ${sets.join(', ')}, updated_at = now() WHERE id = $1`, params);
  return getUserInfo(db, userId);
}
