import { randomInt } from 'node:crypto';
import {
  AUTH_LINK_PATHS,
  CONFIRM_LINK_TTL_S,
  RESET_LINK_TTL_S,
  SIGN_IN_LINK_TTL_S,
  anonymousUser,
  clientKey,
  makeAccountId,
  maskEmailAndDomain,
  translate,
  type TAuthMessage,
  type TAuthState,
  type TNotification,
  type TChangePasswordBody,
  type TEmailBody,
  type TI18nKey,
  type TLinkPreview,
  type TLinkSpendBody,
  type TLocale,
  type TLoginByPasswordBody,
  type TRegisterBody,
  type TResetPasswordBody,
  type TPasswordSignInResponse,
  type TSecondFactorLoginBody,
  type TSignInChallengeBody,
  type TPasskeyOptionsResponse,
  type TPasskeySignInBody,
  type TSignInReport,
} from '@obmen/shared';
import type { TConfig } from '../../config.ts';
import type { Db, Queryable } from '../../db/index.ts';
import { AppError } from '../../errors.ts';
import { queueMail } from '../../mail/outbox.ts';
import { consumeRateLimit } from '../../rate-limit.ts';
import { getSiteSettings } from '../site/service.ts';
import { listOpenNotifications } from '../notifications/service.ts';
import { hashPassword, needsRehash, verifyPassword } from './passwords.ts';
import { refuseCommonPassword } from './common-passwords.ts';
import { createSession, revokeAllSessions, revokeSession } from './sessions.ts';
import { PASSWORD_FAILURES_FREE, claimPasswordTry, clearPasswordFailures, noticePasswordFailures } from './password-failures.ts';
import { USER_COLUMNS, toPublicUser, type TAuthUser } from '../user/public.ts';
import { hashToken, isTokenShaped, newToken } from '../../lib/tokens.ts';
import { markSecurityChanged, secondFactorKinds } from '../security/second-factor.ts';
import { passkeyAssertionOptions, verifyPasskeyAssertion, type TRelyingParty } from '../security/passkeys.ts';
import {
  checkSignInChallenge,
  openSignInChallenge,
  recordSignIn,
  signInChallengeOwner,
  spendSignInChallenge,
  type TSignInMethod,
} from '../security/service.ts';
import { bindReferee } from '../referral/service.ts';
import { noticeSignIn } from './new-device.ts';

/** What every account call needs from the app. */
export type TAuthDeps = { db: Db; config: Pick<TConfig, 'PUBLIC_URL'>; mailer: { kick: () => void } };

/** Who is asking: the real client address (see server.ts trustProxy), language, session. */
export type TClient = {
  ip: string;
  userAgent?: string;
  locale: TLocale;
  user: TAuthUser | null;
  sessionId: string | null;
  /** The invite code the BFF remembered for this browser (REFERRAL_HEADER), for a sign-up. */
  refCode?: string | null;
  /** This browser's link binding (LINK_BINDING_HEADER, from the BFF's cookie), if it has one. */
  linkBinding?: string | null;
};

/**
 * A call that mailed (or, to tell nothing, might have mailed) a link: the route hands `binding`
 * to the BFF in LINK_BINDING_HEADER, which keeps it in this browser's cookie.
 */
export type TLinkRequested<T = TAuthMessage> = { binding: string; answer: T };

/** A sign-in: the route hands `token` to the BFF in SESSION_TOKEN_HEADER, never in the body. */
export type TSignedIn = { token: string; state: TAuthState };
/** A password sign-in: signed in, or (2FA on) the challenge of the code step and no session. */
export type TPasswordSignIn = TSignedIn | { token: null; state: TPasswordSignInResponse };

const authTypeDisabled = () => new AppError('auth_type_disabled');
const invalidCredentials = () => new AppError('invalid_credentials');
const invalidToken = () => new AppError('invalid_token');

/** The browser's binding when it has a sane one (its other open links keep working), else a new one. */
function bindingOf(client: TClient): string {
  return isTokenShaped(client.linkBinding) ? client.linkBinding : newToken();
}

function bindingHashOf(client: TClient): Buffer | null {
  return isTokenShaped(client.linkBinding) ? hashToken(client.linkBinding) : null;
}

type TTokenKind = 'sign_in' | 'reset' | 'confirm_email';
type TTokenRow = {
  id: string;
  user_id: string | null;
  email: string | null;
  locale: TLocale;
  password_hash: string | null;
  ref_code: string | null;
  ref_ip: string | null;
};

async function requireAuthType(db: Queryable, wanted: 'password' | 'email'): Promise<void> {
  const { auth_type } = await getSiteSettings(db);
  if (auth_type !== wanted) throw authTypeDisabled();
}

function emailKey(email: string): string {
  return email.trim().toLowerCase();
}

function link(deps: TAuthDeps, path: string, token = ''): string {
  return `${deps.config.PUBLIC_URL}${path}${token}`;
}

function message(locale: TLocale, key: TI18nKey, vars: Record<string, string | number> = {}): TAuthMessage {
  return { status: 'ok', message: translate(locale, key, vars) };
}

async function findUserByEmail(db: Queryable, email: string): Promise<(TAuthUser & { password_hash: string | null }) | null> {
  const [row] = await db.query<TAuthUser & { password_hash: string | null }>(
    `SELECT ${USER_COLUMNS}, u.password_hash FROM users u WHERE lower(u.email) = lower($1)`,
    [email],
  );
  return row ?? null;
}

async function loadUser(db: Queryable, id: string): Promise<TAuthUser> {
  const [row] = await db.query<TAuthUser>(`SELECT ${USER_COLUMNS} FROM users u WHERE u.id = $1`, [id]);
  if (!row) throw new AppError('internal');
  return row;
}

/**
 * A new user with a fresh random account id (7 random digits + Luhn digit). Two first sign-ins
 * of one email racing each other end in one user: the loser finds the winner's row.
 */
/** What binds a new account to a referrer: the invite code, and the addresses its sign-up came from. */
type TSignUpRef = { code: string | null | undefined; ips: string[] };

/** The sign-up link's code (else the browser's now), its asking address and the following one. */
function refOf(row: TTokenRow, client: TClient): TSignUpRef {
  return { code: row.ref_code ?? client.refCode, ips: [client.ip, ...(row.ref_ip ? [row.ref_ip] : [])] };
}

async function createUser(db: Queryable, input: { email: string; locale: TLocale; passwordHash: string | null; ref?: TSignUpRef }): Promise<string> {
  for (let attempt = 0; attempt < 20; attempt++) {
    const accountId = makeAccountId(randomInt(1_000_000, 10_000_000));
    const [row] = await db.query<{ id: string }>(
      `INSERT INTO users (account_id, email, password_hash, locale, need_set_password, email_confirmed_at)
       VALUES ($1, $2, $3, $4, $5, now()) ON CONFLICT DO NOTHING RETURNING id::text AS id`,
      [accountId, input.email, input.passwordHash, input.locale, input.passwordHash === null],
    );
    if (row) {
      // A new account only: the invite code that brought it binds it to its referrer, once.
      if (input.ref) await bindReferee(db, row.id, input.ref.code, input.ref.ips);
      return row.id;
    }
    const existing = await findUserByEmail(db, input.email);
    if (existing) return existing.id;
  }
  throw new Error('could not allocate an account id');
}

async function issueToken(
  db: Queryable,
  kind: TTokenKind,
  ttlS: number,
  target: { userId?: string; email?: string; locale: TLocale; passwordHash?: string; client?: TClient; binding?: string },
): Promise<string> {
  const token = newToken();
  const refCode = target.client?.refCode ?? null;
  await db.query(
    `INSERT INTO auth_tokens (kind, token_hash, user_id, email, locale, password_hash, ref_code, ref_ip, expires_at, binding_hash)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, now() + $9::int * interval '1 second', $10)`,
    [
      kind,
      hashToken(token),
      target.userId ?? null,
      target.email ?? null,
      target.locale,
      target.passwordHash ?? null,
      refCode,
      refCode ? target.client!.ip : null,
      ttlS,
      target.binding ? hashToken(target.binding) : null,
    ],
  );
  return token;
}

/** Spends a token: one atomic UPDATE, so two clicks racing each other get one success. */
async function consumeToken(db: Queryable, kind: TTokenKind, token: string): Promise<TTokenRow> {
  if (!isTokenShaped(token)) throw invalidToken();
  const [row] = await db.query<TTokenRow>(
    `UPDATE auth_tokens SET used_at = now()
     WHERE token_hash = $1 AND kind = $2 AND used_at IS NULL AND expires_at > now()
     RETURNING id::text, user_id::text, email, locale, password_hash, ref_code, ref_ip`,
    [hashToken(token), kind],
  );
  if (!row) throw invalidToken();
  return row;
}

/**
 * Spends a sign-in or confirmation link: at once in the browser that asked for it; in another
 * only with `confirm` (the button of the page's confirmation step), else 409
 * `link_confirm_required` and the link stays as it was.
 */
async function consumeBoundToken(db: Queryable, kind: 'sign_in' | 'confirm_email', token: string, client: TClient, body: TLinkSpendBody): Promise<TTokenRow> {
  if (!body.confirm) {
    const preview = await readLink(db, kind, token, client);
    if (!preview.same_browser) throw new AppError('link_confirm_required');
  }
  return consumeToken(db, kind, token);
}

/** The open link's masked address and whether this browser asked for it; a spent or unknown one is invalid. */
async function readLink(db: Queryable, kind: 'sign_in' | 'confirm_email', token: string, client: TClient): Promise<TLinkPreview> {
  if (!isTokenShaped(token)) throw invalidToken();
  const [row] = await db.query<{ email: string; same_browser: boolean }>(
    `SELECT coalesce(t.email, u.email) AS email, coalesce(t.binding_hash = $3, false) AS same_browser
     FROM auth_tokens t LEFT JOIN users u ON u.id = t.user_id
     WHERE t.token_hash = $1 AND t.kind = $2 AND t.used_at IS NULL AND t.expires_at > now()`,
    [hashToken(token), kind, bindingHashOf(client)],
  );
  if (!row) throw invalidToken();
  return { status: 'ok', email: maskEmailAndDomain(row.email), same_browser: row.same_browser };
}

/** After a password is set, no older reset or sign-in link of the user works any more. */
async function spendOpenTokens(db: Queryable, userId: string): Promise<void> {
  await db.query(`UPDATE auth_tokens SET used_at = now() WHERE user_id = $1 AND used_at IS NULL AND kind IN ('reset', 'sign_in')`, [userId]);
}

async function describeState(db: Queryable, user: TAuthUser | null, locale: TLocale): Promise<TAuthState> {
  const site_settings = await getSiteSettings(db);
  return { user: user ? toPublicUser(user) : anonymousUser(locale), locale: user?.locale ?? locale, site_settings };
}

/**
 * The signed-in end of every sign-in path: refused while an operator blocks the account's
 * sign-in; the old session of this browser is dropped (fixation), and the sign-in is logged (`method`; null for a password change, which renews
 * the session of someone already signed in).
 */
async function startSession(db: Queryable, client: TClient, userId: string, method: TSignInMethod | null, publicUrl: string): Promise<TSignedIn> {
  const [blocked] = await db.query<{ closed: boolean }>(
    'SELECT closed_at IS NOT NULL AS closed FROM users WHERE id = $1 AND (sign_in_blocked_at IS NOT NULL OR closed_at IS NOT NULL)',
    [userId],
  );
  if (blocked) throw new AppError(blocked.closed ? 'account_closed' : 'sign_in_blocked');
  if (client.sessionId) await revokeSession(db, client.sessionId);
  if (method) {
    await recordSignIn(db, userId, client, method, { success: true });
    await noticeSignIn(db, { userId, ip: client.ip, userAgent: client.userAgent, at: new Date(), publicUrl });
  }
  const token = await createSession(db, userId, { ip: client.ip, ...(client.userAgent ? { userAgent: client.userAgent } : {}) });
  const user = await loadUser(db, userId);
  return { token, state: { status: 'ok', ...(await describeState(db, user, client.locale)), locale: user.locale } };
}

/**
 * Every sign-in path but a password change ends here: with 2FA on (TOTP or a passkey), no session
 * yet but the challenge of the second step (POST /api/auth/login_second_factor: a typed code with
 * TOTP on, or an assertion of one of the user's passkeys); otherwise signed in.
 */
async function finishSignIn(db: Queryable, client: TClient, userId: string, method: TSignInMethod, publicUrl: string): Promise<TPasswordSignIn> {
  const { totp, passkey } = await secondFactorKinds(db, userId);
  if (totp || passkey) {
    const second_factor = await openSignInChallenge(db, userId, totp);
    const state = await describeState(db, null, client.locale);
    const message = translate(client.locale, totp ? 'security.code_step' : 'security.passkey_step');
    return { token: null, state: { status: 'ok', ...state, message, second_factor } };
  }
  return startSession(db, client, userId, method, publicUrl);
}

// ---- calls ---------------------------------------------------------------------------------

/**
 * GET /api/auth/check; also carries the viewer's open notifications in the `notifications`
 * envelope key, only when there are any (spec §7: the client applies it only if not empty).
 */
export async function checkAuth(deps: TAuthDeps, client: TClient): Promise<TAuthState & { notifications?: TNotification[] }> {
  const [state, notifications] = await Promise.all([
    describeState(deps.db, client.user, client.locale),
    listOpenNotifications(deps.db, client.user?.id ?? null, client.locale),
  ]);
  return notifications.length ? { ...state, notifications } : state;
}

/**
 * POST /api/auth/register. Answers the same whether the email is new or taken (no user
 * enumeration): a new address gets a link that creates the account when followed; the owner
 * of a taken address gets a "you already have an account" mail. Nobody is signed in here.
 * The password is hashed in both cases, so the answer time tells nothing either.
 */
export async function registerAccount(deps: TAuthDeps, client: TClient, body: TRegisterBody): Promise<TLinkRequested> {
  await requireAuthType(deps.db, 'password');
  // Made for a known address too: the answer's headers must not tell the two apart.
  const binding = bindingOf(client);
  await consumeRateLimit(deps.db, 'signup_ip', clientKey(client.ip));
  await consumeRateLimit(deps.db, 'signup_email', emailKey(body.email));
  await refuseCommonPassword(body.password);
  const passwordHash = await hashPassword(body.password);
  await deps.db.transaction(async (tx) => {
    const existing = await findUserByEmail(tx, body.email);
    if (existing) {
      await queueMail(tx, {
        kind: 'signup_existing',
        to: existing.email,
        locale: existing.locale,
        vars: { account_id: existing.account_id, login_link: link(deps, '/login'), reset_link: link(deps, '/forgot-password') },
      });
      return;
    }
    const token = await issueToken(tx, 'confirm_email', CONFIRM_LINK_TTL_S, {
      email: body.email,
      locale: client.locale,
      passwordHash,
      client,
      binding,
    });
    await queueMail(tx, {
      kind: 'signup_confirm',
      to: body.email,
      locale: client.locale,
      vars: { link: link(deps, AUTH_LINK_PATHS.confirm, token), hours: CONFIRM_LINK_TTL_S / 3600 },
    });
  });
  deps.mailer.kick();
  return { binding, answer: message(client.locale, 'auth.register_sent') };
}

/** POST /api/auth/login_by_password */
export async function signInByPassword(deps: TAuthDeps, client: TClient, body: TLoginByPasswordBody): Promise<TPasswordSignIn> {
  await requireAuthType(deps.db, 'password');
  await consumeRateLimit(deps.db, 'login_ip', clientKey(client.ip));
  const pair = { ipKey: clientKey(client.ip), emailKey: emailKey(body.email) };
  const failures = await claimPasswordTry(deps.db, pair);
  const user = await findUserByEmail(deps.db, body.email);
  // Unknown email or no password yet: a dummy hash is verified, same time, same answer.
  const ok = await verifyPassword(body.password, user?.password_hash ?? null);
  if (user && !ok) {
    await recordSignIn(deps.db, user.id, client, 'password', { success: false, failure: 'password' });
    if (failures === PASSWORD_FAILURES_FREE && (await noticePasswordFailures(deps.db, user, client.ip, link(deps, '/forgot-password')))) deps.mailer.kick();
  }
  if (!user || !ok) throw invalidCredentials();
  await clearPasswordFailures(deps.db, pair);
  const rehash = user.password_hash && needsRehash(user.password_hash) ? await hashPassword(body.password) : null;
  return deps.db.transaction(async (tx) => {
    if (rehash) await tx.query('UPDATE users SET password_hash = $2, updated_at = now() WHERE id = $1', [user.id, rehash]);
    return finishSignIn(tx, client, user.id, 'password', deps.config.PUBLIC_URL);
  });
}

/**
 * POST /api/auth/login_second_factor {challenge, code | passkey}: the second step of a sign-in with
 * 2FA on. A wrong proof costs one of the challenge's 5 tries (and one of the user's attempts);
 * the session is made, and the challenge spent, only with a good one.
 */
export async function signInWithSecondFactor(deps: TAuthDeps, client: TClient, body: TSecondFactorLoginBody, now: Date): Promise<TSignedIn> {
  await consumeRateLimit(deps.db, 'token_ip', clientKey(client.ip));
  const { userId, challengeId } = await checkSignInChallenge(deps.db, body.challenge, body, client, now.getTime());
  return deps.db.transaction(async (tx) => {
    await spendSignInChallenge(tx, challengeId);
    return startSession(tx, client, userId, 'second_factor', deps.config.PUBLIC_URL);
  });
}

/**
 * POST /api/auth/login_second_factor/options {challenge}: a passkey's challenge for the second
 * step, which only the pending sign-in's user's passkeys can answer. Limited per address like the
 * passkey sign-in; a token that is no live challenge is refused the same for every account.
 */
export async function signInSecondFactorOptions(
  deps: TAuthDeps,
  client: TClient,
  body: TSignInChallengeBody,
  rp: TRelyingParty,
  now: Date,
): Promise<TPasskeyOptionsResponse> {
  await consumeRateLimit(deps.db, 'passkey_ip', clientKey(client.ip));
  return passkeyAssertionOptions(deps.db, rp, await signInChallengeOwner(deps.db, body.challenge), now);
}

/** POST /api/auth/passkey/options: a challenge any passkey of this site may answer (no e-mail first). */
export async function passkeySignInOptions(deps: TAuthDeps, client: TClient, rp: TRelyingParty, now: Date): Promise<TPasskeyOptionsResponse> {
  await consumeRateLimit(deps.db, 'passkey_ip', clientKey(client.ip));
  return passkeyAssertionOptions(deps.db, rp, null, now);
}

/**
 * POST /api/auth/passkey: signed in by a passkey alone. A verified passkey is both factors (the
 * device and its lock), so no code step follows. The challenge is spent before the session's
 * transaction: a failed sign-in cannot make it usable again.
 */
export async function signInByPasskey(deps: TAuthDeps, client: TClient, body: TPasskeySignInBody, now: Date): Promise<TSignedIn> {
  await consumeRateLimit(deps.db, 'passkey_ip', clientKey(client.ip));
  const { owner: userId } = await verifyPasskeyAssertion(deps.db, body.credential, null, now);
  return deps.db.transaction((tx) => startSession(tx, client, userId, 'passkey', deps.config.PUBLIC_URL));
}

/**
 * POST /api/auth/login {email}: mails a one-time sign-in link (15 minutes). A new address
 * gets a link too and becomes an account when the link is followed; same answer either way.
 */
export async function requestSignInLink(deps: TAuthDeps, client: TClient, body: TEmailBody): Promise<TLinkRequested> {
  await consumeRateLimit(deps.db, 'link_ip', clientKey(client.ip));
  await consumeRateLimit(deps.db, 'link_email', emailKey(body.email));
  const binding = bindingOf(client);
  await deps.db.transaction(async (tx) => {
    const user = await findUserByEmail(tx, body.email);
    const locale = user?.locale ?? client.locale;
    const token = await issueToken(
      tx,
      'sign_in',
      SIGN_IN_LINK_TTL_S,
      user ? { userId: user.id, locale, binding } : { email: body.email, locale, client, binding },
    );
    await queueMail(tx, {
      kind: 'sign_in',
      to: user?.email ?? body.email,
      locale,
      vars: { link: link(deps, AUTH_LINK_PATHS.sign_in, token), minutes: SIGN_IN_LINK_TTL_S / 60 },
    });
  });
  deps.mailer.kick();
  return { binding, answer: message(client.locale, 'auth.login_link_sent', { minutes: SIGN_IN_LINK_TTL_S / 60 }) };
}

/**
 * GET /api/auth/login/{token} and /api/auth/confirm/{token}: the masked address the link signs
 * into and whether this browser asked for it. Spends nothing (mail scanners open links).
 */
export async function previewLink(deps: TAuthDeps, client: TClient, kind: 'sign_in' | 'confirm_email', token: string): Promise<TLinkPreview> {
  await consumeRateLimit(deps.db, 'token_ip', clientKey(client.ip));
  return readLink(deps.db, kind, token, client);
}

/** POST /api/auth/login/{token}: follows a sign-in link; a new address becomes an account here. */
export async function signInByLink(deps: TAuthDeps, client: TClient, token: string, body: TLinkSpendBody): Promise<TPasswordSignIn> {
  await consumeRateLimit(deps.db, 'token_ip', clientKey(client.ip));
  return deps.db.transaction(async (tx) => {
    const row = await consumeBoundToken(tx, 'sign_in', token, client, body);
    const userId = row.user_id ?? (await createUser(tx, { email: row.email!, locale: row.locale, passwordHash: null, ref: refOf(row, client) }));
    // Following a mailed link proves the mailbox.
    await tx.query('UPDATE users SET email_confirmed_at = coalesce(email_confirmed_at, now()) WHERE id = $1', [userId]);
    return finishSignIn(tx, client, userId, 'link', deps.config.PUBLIC_URL);
  });
}

/**
 * POST /api/auth/confirm/{token}: a sign-up link creates the account with the password chosen
 * at sign-up; a confirmation link of an existing account confirms its email. Both sign in.
 */
export async function confirmEmail(deps: TAuthDeps, client: TClient, token: string, body: TLinkSpendBody): Promise<TPasswordSignIn> {
  await consumeRateLimit(deps.db, 'token_ip', clientKey(client.ip));
  return deps.db.transaction(async (tx) => {
    const row = await consumeBoundToken(tx, 'confirm_email', token, client, body);
    let userId = row.user_id;
    if (userId) {
      // Only the address the link was sent to: an email changed since stays unconfirmed.
      const [same] = await tx.query(
        `UPDATE users SET email_confirmed_at = coalesce(email_confirmed_at, now()), updated_at = now()
         WHERE id = $1 AND lower(email) = lower($2) RETURNING id`,
        [userId, row.email],
      );
      if (!same) throw invalidToken();
    } else {
      const existing = await findUserByEmail(tx, row.email!);
      if (existing) {
        userId = existing.id;
        await tx.query(
          `UPDATE users SET email_confirmed_at = coalesce(email_confirmed_at, now()),
             password_hash = coalesce(password_hash, $2), need_set_password = (coalesce(password_hash, $2) IS NULL), updated_at = now()
           WHERE id = $1`,
          [userId, row.password_hash],
        );
      } else {
        userId = await createUser(tx, { email: row.email!, locale: row.locale, passwordHash: row.password_hash, ref: refOf(row, client) });
      }
    }
    return finishSignIn(tx, client, userId, 'link', deps.config.PUBLIC_URL);
  });
}

/**
 * POST /api/auth/reset {email}: a known address gets a reset link (1 hour, single use), an
 * unknown one a "there is no account with this address" mail; the answer is the same.
 */
export async function requestPasswordReset(deps: TAuthDeps, client: TClient, body: TEmailBody): Promise<TAuthMessage> {
  await requireAuthType(deps.db, 'password');
  await consumeRateLimit(deps.db, 'reset_ip', clientKey(client.ip));
  await consumeRateLimit(deps.db, 'reset_email', emailKey(body.email));
  await deps.db.transaction(async (tx) => {
    const user = await findUserByEmail(tx, body.email);
    if (!user) {
      await queueMail(tx, { kind: 'reset_unknown', to: body.email, locale: client.locale, vars: { signup_link: link(deps, '/signup') } });
      return;
    }
    const token = await issueToken(tx, 'reset', RESET_LINK_TTL_S, { userId: user.id, locale: user.locale });
    await queueMail(tx, {
      kind: 'reset',
      to: user.email,
      locale: user.locale,
      vars: { link: link(deps, AUTH_LINK_PATHS.reset, token), minutes: RESET_LINK_TTL_S / 60 },
    });
  });
  deps.mailer.kick();
  return message(client.locale, 'auth.reset_sent');
}

/** GET /api/auth/reset/{token}: is the link still good? Spends nothing. */
export async function checkResetToken(deps: TAuthDeps, client: TClient, token: string): Promise<{ status: 'ok' }> {
  await consumeRateLimit(deps.db, 'token_ip', clientKey(client.ip));
  if (!isTokenShaped(token)) throw invalidToken();
  const [row] = await deps.db.query(`SELECT 1 FROM auth_tokens WHERE token_hash = $1 AND kind = 'reset' AND used_at IS NULL AND expires_at > now()`, [
    hashToken(token),
  ]);
  if (!row) throw invalidToken();
  return { status: 'ok' };
}

/**
 * POST /api/auth/reset/{token} {password}: sets the password, signs every device out, spends
 * the user's other open links, and signs this browser in with a new session.
 */
export async function resetPassword(deps: TAuthDeps, client: TClient, token: string, body: TResetPasswordBody): Promise<TPasswordSignIn> {
  await requireAuthType(deps.db, 'password');
  await consumeRateLimit(deps.db, 'token_ip', clientKey(client.ip));
  if (!isTokenShaped(token)) throw invalidToken();
  await refuseCommonPassword(body.password);
  const passwordHash = await hashPassword(body.password);
  const signedIn = await deps.db.transaction(async (tx) => {
    const row = await consumeToken(tx, 'reset', token);
    const userId = row.user_id!;
    await tx.query(
      `UPDATE users SET password_hash = $2, need_set_password = false, email_confirmed_at = coalesce(email_confirmed_at, now()), updated_at = now()
       WHERE id = $1`,
      [userId, passwordHash],
    );
    await revokeAllSessions(tx, userId);
    await spendOpenTokens(tx, userId);
    await markSecurityChanged(tx, userId);
    const result = await finishSignIn(tx, { ...client, sessionId: null }, userId, 'link', deps.config.PUBLIC_URL);
    await queuePasswordChanged(deps, tx, userId);
    return result;
  });
  deps.mailer.kick();
  if (signedIn.token === null) return signedIn;
  return { ...signedIn, state: { ...signedIn.state, message: translate(client.locale, 'auth.password_changed') } };
}

async function queuePasswordChanged(deps: TAuthDeps, db: Queryable, userId: string): Promise<void> {
  const user = await loadUser(db, userId);
  await queueMail(db, {
    kind: 'password_changed',
    to: user.email,
    locale: user.locale,
    vars: { account_id: user.account_id, reset_link: link(deps, '/forgot-password') },
  });
}

/**
 * POST /api/auth/change {current_password?, password}: the current password is required once
 * one exists. Every session of the user ends; this browser gets a new one.
 */
export async function changePassword(deps: TAuthDeps, client: TClient, body: TChangePasswordBody): Promise<TSignedIn> {
  const user = client.user;
  if (!user) throw new AppError('unauthorized');
  await requireAuthType(deps.db, 'password');
  await consumeRateLimit(deps.db, 'change_user', user.id);
  await refuseCommonPassword(body.password);
  const [stored] = await deps.db.query<{ password_hash: string | null }>('SELECT password_hash FROM users WHERE id = $1', [user.id]);
  const hadPassword = Boolean(stored?.password_hash);
  if (hadPassword) {
    if (!body.current_password) {
      throw new AppError('validation', { fields: { current_password: 'validation.required' } });
    }
    if (!(await verifyPassword(body.current_password, stored!.password_hash))) {
      throw new AppError('invalid_password');
    }
  }
  const passwordHash = await hashPassword(body.password);
  const signedIn = await deps.db.transaction(async (tx) => {
    await tx.query('UPDATE users SET password_hash = $2, need_set_password = false, updated_at = now() WHERE id = $1', [user.id, passwordHash]);
    await revokeAllSessions(tx, user.id);
    await spendOpenTokens(tx, user.id);
    // Setting the first password (an account made by link) changes nothing that protected it.
    if (hadPassword) await markSecurityChanged(tx, user.id);
    const result = await startSession(tx, { ...client, sessionId: null }, user.id, null, deps.config.PUBLIC_URL);
    if (hadPassword) await queuePasswordChanged(deps, tx, user.id);
    return result;
  });
  deps.mailer.kick();
  return { ...signedIn, state: { ...signedIn.state, message: translate(client.locale, hadPassword ? 'auth.password_changed' : 'auth.password_set') } };
}

/** POST /api/auth/logout: ends this session (if any) and answers as anonymous. */
export async function logOut(deps: TAuthDeps, client: TClient): Promise<TAuthState> {
  if (client.sessionId) await revokeSession(deps.db, client.sessionId);
  const state = await describeState(deps.db, null, client.locale);
  return { status: 'ok', ...state };
}

/** GET /api/auth/send_confirmation_instructions: mails a confirmation link (24 hours). */
export async function sendConfirmationInstructions(deps: TAuthDeps, client: TClient): Promise<TLinkRequested<TAuthMessage & { email_confirmed: boolean }>> {
  const user = client.user;
  if (!user) throw new AppError('unauthorized');
  const binding = bindingOf(client);
  if (user.email_confirmed) return { binding, answer: { ...message(client.locale, 'auth.email_already_confirmed'), email_confirmed: true } };
  await consumeRateLimit(deps.db, 'confirm_user', user.id);
  await deps.db.transaction(async (tx) => {
    const token = await issueToken(tx, 'confirm_email', CONFIRM_LINK_TTL_S, { userId: user.id, email: user.email, locale: user.locale, binding });
    await queueMail(tx, {
      kind: 'confirm_email',
      to: user.email,
      locale: user.locale,
      vars: { account_id: user.account_id, link: link(deps, AUTH_LINK_PATHS.confirm, token), hours: CONFIRM_LINK_TTL_S / 3600 },
    });
  });
  deps.mailer.kick();
  return { binding, answer: { ...message(client.locale, 'auth.confirmation_sent', { email: user.email }), email_confirmed: false } };
}

/** Drops spent and expired links a week after their end. */
export async function purgeTokens(db: Queryable): Promise<void> {
  await db.query(`DELETE FROM auth_tokens WHERE expires_at < now() - interval '7 days'`);
}

/** The demo account of development: created confirmed, with a password, on a fresh database. */
export async function createDemoUser(db: Queryable, input: { email: string; password: string; locale: TLocale }): Promise<number> {
  const passwordHash = await hashPassword(input.password);
  const id = await createUser(db, { email: input.email, locale: input.locale, passwordHash });
  const user = await loadUser(db, id);
  return user.account_id;
}

/**
 * POST /api/auth/sign_in/report/{token}: "this wasn't me", from a new-sign-in mail. Every session
 * of the account ends, its open links die, withdrawals wait 24 hours, and (with passwords in use)
 * a password reset link is answered at once: the click proved the mailbox, as the reset mail would.
 */
export async function reportSignIn(deps: TAuthDeps, client: TClient, token: string): Promise<TSignInReport> {
  await consumeRateLimit(deps.db, 'token_ip', clientKey(client.ip));
  if (!isTokenShaped(token)) throw invalidToken();
  const { auth_type } = await getSiteSettings(deps.db);
  const reset = await deps.db.transaction(async (tx) => {
    const [alert] = await tx.query<{ user_id: string; locale: TLocale }>(
      `UPDATE sign_in_alerts a SET reported_at = now() FROM users u
        WHERE a.report_hash = $1 AND a.reported_at IS NULL AND a.report_until > now() AND u.id = a.user_id
        RETURNING a.user_id::text AS user_id, u.locale`,
      [hashToken(token)],
    );
    if (!alert) throw invalidToken();
    await revokeAllSessions(tx, alert.user_id);
    await tx.query('UPDATE auth_tokens SET used_at = now() WHERE user_id = $1 AND used_at IS NULL', [alert.user_id]);
    await markSecurityChanged(tx, alert.user_id);
    return auth_type === 'password' ? issueToken(tx, 'reset', RESET_LINK_TTL_S, { userId: alert.user_id, locale: alert.locale }) : null;
  });
  return {
    status: 'ok',
    message: translate(client.locale, 'security.sign_in_reported'),
    reset_url: reset ? `${AUTH_LINK_PATHS.reset}${reset}` : null,
  };
}
