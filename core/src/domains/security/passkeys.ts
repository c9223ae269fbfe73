import {
  generateAuthenticationOptions,
  generateRegistrationOptions,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
  type AuthenticationResponseJSON,
  type RegistrationResponseJSON,
} from '@simplewebauthn/server';
import { COSEALG, isoBase64URL, isoUint8Array } from '@simplewebauthn/server/helpers';
import { PASSKEY_CHALLENGE_TTL_S, PASSKEYS_MAX, ZPasskeyAssertion, ZPasskeyAttestation, type TPasskeyInfo, type TPasskeyOptionsResponse } from '@obmen/shared';
import type { Queryable } from '../../db/index.ts';
import { AppError, notFoundOf } from '../../errors.ts';

/*
 * Passkeys (WebAuthn) through @simplewebauthn/server: enrolment, sign-in with a passkey alone
 * (a discoverable credential: no e-mail first) and an assertion as the second factor. Each
 * ceremony starts from a challenge stored here, spent once within PASSKEY_CHALLENGE_TTL_S, for
 * its purpose and user; the relying party is PUBLIC_URL's host and origin, kept with the
 * challenge. Like second-factor.ts this imports no other domain.
 */

export type TRelyingParty = { id: string; origin: string; name: string };
/**
 * The signature algorithms offered and accepted, named rather than the library's default: that
 * default probes the runtime for ML-DSA, which prints an "experimental" warning on every call.
 */
const ALGORITHMS = [COSEALG.EdDSA, COSEALG.ES256, COSEALG.RS256];
type TPurpose = 'register' | 'sign_in' | 'second_factor';
/** The library's options JSON as the shared answer declares it (passed through as they are). */
type TOptions = TPasskeyOptionsResponse['options'];

/**
 * The relying party of a deployment: PUBLIC_URL's host (no port) and its origin. WebAuthn has no
 * relying party on an IP address (browsers refuse it), so a loopback PUBLIC_URL (development,
 * the e2e server) gets localhost's: the same machine, opened as http://localhost:<port>.
 */
export function relyingPartyOf(publicUrl: string): TRelyingParty {
  const url = new URL(publicUrl);
  if (url.hostname === '127.0.0.1' || url.hostname === '[::1]') url.hostname = 'localhost';
  return { id: url.hostname, origin: url.origin, name: 'Obmen' };
}

async function storeChallenge(db: Queryable, rp: TRelyingParty, purpose: TPurpose, userId: string | null, challenge: string, now: Date): Promise<void> {
  await db.query('INSERT INTO webauthn_challenges (challenge, purpose, user_id, rp_id, origin, expires_at) VALUES ($1, $2, $3, $4, $5, $6)', [
    challenge,
    purpose,
    userId,
    rp.id,
    rp.origin,
    new Date(now.getTime() + PASSKEY_CHALLENGE_TTL_S * 1000),
  ]);
}

/**
 * Spends the challenge an answer signed, if it is a live one of this purpose (and user): a
 * second use, a late one, another purpose's or another user's finds nothing.
 */
async function spendChallenge(
  db: Queryable,
  clientDataJSON: string,
  purpose: TPurpose,
  userId: string | null,
  now: Date,
): Promise<TRelyingParty & { challenge: string }> {
  let challenge: unknown;
  try {
    challenge = JSON.parse(isoBase64URL.toUTF8String(clientDataJSON)).challenge;
  } catch {
    throw new AppError('passkey_invalid');
  }
  if (typeof challenge !== 'string') throw new AppError('passkey_invalid');
  const [row] = await db.query<{ rp_id: string; origin: string }>(
    `UPDATE webauthn_challenges SET used_at = $4
     WHERE challenge = $1 AND purpose = $2 AND user_id IS NOT DISTINCT FROM $3 AND used_at IS NULL AND expires_at > $4
     RETURNING rp_id, origin`,
    [challenge, purpose, userId, now],
  );
  if (!row) throw new AppError('passkey_invalid');
  return { id: row.rp_id, origin: row.origin, name: '', challenge };
}

function parseAnswer<T>(schema: { safeParse: (v: unknown) => { success: boolean; data?: unknown } }, text: string): T {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new AppError('passkey_invalid');
  }
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw new AppError('passkey_invalid');
  return parsed.data as T;
}

// ---- enrolment ---------------------------------------------------------------------------------

/** The options of a new passkey: resident (discoverable), verified, not one the user already has. */
export async function passkeyRegistrationOptions(
  db: Queryable,
  rp: TRelyingParty,
  user: { id: string; email: string },
  now: Date,
): Promise<TPasskeyOptionsResponse> {
  const existing = await db.query<{ credential_id: string; transports: string[] }>(
    'SELECT credential_id, transports FROM user_passkeys WHERE user_id = $1 ORDER BY id',
    [user.id],
  );
  if (existing.length >= PASSKEYS_MAX) throw new AppError('passkeys_full', { vars: { count: PASSKEYS_MAX } });
  const options = await generateRegistrationOptions({
    rpName: rp.name,
    rpID: rp.id,
    userName: user.email,
    // The user handle names the account without its e-mail (authenticators may show or sync it).
    userID: isoUint8Array.fromUTF8String(`obmen:${user.id}`),
    attestationType: 'none',
    excludeCredentials: existing.map((row) => ({ id: row.credential_id, transports: row.transports })),
    authenticatorSelection: { residentKey: 'required', userVerification: 'required' },
    timeout: PASSKEY_CHALLENGE_TTL_S * 1000,
    supportedAlgorithmIDs: ALGORITHMS,
  });
  await storeChallenge(db, rp, 'register', user.id, options.challenge, now);
  return { status: 'ok', options: options as unknown as TOptions };
}

/** Checks the new credential against its challenge and keeps it under the given name. */
export async function addPasskey(db: Queryable, userId: string, name: string, credential: string, now: Date): Promise<void> {
  const response = parseAnswer<RegistrationResponseJSON>(ZPasskeyAttestation, credential);
  const rp = await spendChallenge(db, response.response.clientDataJSON, 'register', userId, now);
  const verified = await verifyRegistrationResponse({
    response,
    expectedChallenge: rp.challenge,
    expectedOrigin: rp.origin,
    expectedRPID: rp.id,
    requireUserVerification: true,
    supportedAlgorithmIDs: ALGORITHMS,
  }).catch(() => ({ verified: false as const }));
  if (!verified.verified) throw new AppError('passkey_invalid');
  const { credential: made } = verified.registrationInfo;
  const [count] = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM user_passkeys WHERE user_id = $1', [userId]);
  if ((count?.n ?? 0) >= PASSKEYS_MAX) throw new AppError('passkeys_full', { vars: { count: PASSKEYS_MAX } });
  const [added] = await db.query(
    `INSERT INTO user_passkeys (user_id, credential_id, public_key, counter, transports, name, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (credential_id) DO NOTHING RETURNING id`,
    [userId, made.id, Buffer.from(made.publicKey), made.counter, made.transports ?? [], name, now],
  );
  if (!added) throw new AppError('passkey_invalid');
}

export async function listPasskeys(db: Queryable, userId: string): Promise<TPasskeyInfo[]> {
  return db.query<TPasskeyInfo>(
    'SELECT id::text, name, iso_time(created_at) AS created_at, iso_time(last_used_at) AS last_used_at FROM user_passkeys WHERE user_id = $1 ORDER BY id',
    [userId],
  );
}

/** Removes one of the user's own passkeys; another user's answers like a missing one. */
export async function deletePasskey(db: Queryable, userId: string, id: string): Promise<void> {
  const [row] = await db.query('DELETE FROM user_passkeys WHERE id = $1 AND user_id = $2 RETURNING id', [id, userId]);
  if (!row) throw notFoundOf('passkey');
}

// ---- assertions ------------------------------------------------------------------------------

/**
 * Options of an assertion: for a sign-in, any discoverable credential of this site (the browser
 * offers them, also as autofill); for the second factor, only the user's own passkeys.
 */
export async function passkeyAssertionOptions(db: Queryable, rp: TRelyingParty, userId: string | null, now: Date): Promise<TPasskeyOptionsResponse> {
  const allow = userId
    ? await db.query<{ credential_id: string; transports: string[] }>('SELECT credential_id, transports FROM user_passkeys WHERE user_id = $1 ORDER BY id', [
        userId,
      ])
    : [];
  if (userId && allow.length === 0) throw notFoundOf('passkey');
  const options = await generateAuthenticationOptions({
    rpID: rp.id,
    userVerification: 'required',
    timeout: PASSKEY_CHALLENGE_TTL_S * 1000,
    allowCredentials: allow.map((row) => ({ id: row.credential_id, transports: row.transports })),
  });
  await storeChallenge(db, rp, userId ? 'second_factor' : 'sign_in', userId, options.challenge, now);
  return { status: 'ok', options: options as unknown as TOptions };
}

/**
 * Checks an assertion: its challenge (spent here), the credential (the user's own when a user is
 * given), the signature, user verification and the counter (a clone's lower counter is refused
 * by the library). Returns the credential's user; the counter and last use are written.
 */
export async function verifyPasskeyAssertion(db: Queryable, text: string, userId: string | null, now: Date): Promise<string> {
  const response = parseAnswer<AuthenticationResponseJSON>(ZPasskeyAssertion, text);
  const rp = await spendChallenge(db, response.response.clientDataJSON, userId ? 'second_factor' : 'sign_in', userId, now);
  const [stored] = await db.query<{ id: string; user_id: string; public_key: Buffer; counter: string; transports: string[] }>(
    'SELECT id::text, user_id::text, public_key, counter::text, transports FROM user_passkeys WHERE credential_id = $1',
    [response.id],
  );
  if (!stored || (userId !== null && stored.user_id !== userId)) throw new AppError('passkey_invalid');
  const verified = await verifyAuthenticationResponse({
    response,
    expectedChallenge: rp.challenge,
    expectedOrigin: rp.origin,
    expectedRPID: rp.id,
    requireUserVerification: true,
    credential: { id: response.id, publicKey: new Uint8Array(stored.public_key), counter: Number(stored.counter), transports: stored.transports },
  }).catch(() => null);
  if (!verified?.verified) throw new AppError('passkey_invalid');
  // Conditional on the counter read: two answers at once cannot both move it forward.
  const [moved] = await db.query('UPDATE user_passkeys SET counter = $2, last_used_at = $3 WHERE id = $1 AND counter = $4 RETURNING id', [
    stored.id,
    verified.authenticationInfo.newCounter,
    now,
    stored.counter,
  ]);
  if (!moved) throw new AppError('passkey_invalid');
  return stored.user_id;
}

/** Housekeeping: challenges ended a day ago. */
export async function purgePasskeyChallenges(db: Queryable, now: Date): Promise<void> {
  await db.query(`DELETE FROM webauthn_challenges WHERE expires_at < $1::timestamptz - interval '1 day'`, [now]);
}
