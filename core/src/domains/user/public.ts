import type { TLocale, TUser } from '@obmen/shared';

/** The signed-in user as core code sees it. */
export type TAuthUser = {
  id: string;
  account_id: number;
  email: string;
  locale: TLocale;
  need_set_password: boolean;
  email_confirmed: boolean;
  has_password: boolean;
  /** 2FA (TOTP or a passkey) is on: transfers and withdrawals ask for a code or a passkey. */
  second_factor: boolean;
};

export const USER_COLUMNS = `u.id::text AS id, u.account_id, u.email, u.locale, u.need_set_password,
  (u.email_confirmed_at IS NOT NULL) AS email_confirmed, (u.password_hash IS NOT NULL) AS has_password,
  (EXISTS (SELECT 1 FROM user_totp t WHERE t.user_id = u.id AND t.enabled_at IS NOT NULL)
    OR EXISTS (SELECT 1 FROM user_passkeys k WHERE k.user_id = u.id)) AS second_factor`;

export function toPublicUser(user: TAuthUser): TUser {
  return { is_authenticated: true, account_id: user.account_id, need_set_password: user.need_set_password, locale: user.locale, email: user.email };
}
