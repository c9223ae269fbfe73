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
 * its purpose and owner; the relying party is PUBLIC_URL's host and origin, kept with the
 * challenge. Like second-factor.ts this imports no other domain.
 *
 * Two kinds of owner, each with its own tables: customers (`user`, the default) and operators
 * (`operator`, the back office's sign-in). The ceremonies are the same; a credential of one kind
 * is never looked up as the other's.
 */

export type TRelyingParty = { id: string; origin: string; name: string };
/**
 * The signature algorithms offered and accepted, named rather than the library's default: that
 * default probes the runtime for ML-DSA, which prints an "experimental" warning on every call.
 */
const ALGORITHMS = [COSEALG.EdDSA, COSEALG.ES256, COSEALG.RS256];
type TPurpose = 'register' | 'sign_in' | 'second_factor';

export type TPasskeyKind = 'user' | 'operator';
/** Where each kind's passkeys and challenges are kept (fixed names: never from input). */
const TABLES = {
  user: { keys: 'user_passkeys', challenges: 'webauthn_challenges', owner: 'user_id', handle: 'obmen' },
  operator: { keys: 'operator_passkeys', challenges: 'operator_webauthn_challenges', owner: 'operator_id', handle: 'obmen-ops' },
} as const;
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

async function storeChallenge(
  db: Queryable,
  rp: TRelyingParty,
  purpose: TPurpose,
  userId: string | null,
  challenge: string,
  now: Date,
  kind: TPasskeyKind,
): Promise<void> {
  const { challenges, owner } = TABLES[kind];
  await db.query(`INSERT INTO ${challenges} (challenge, purpose, ${owner}, rp_id, origin, expires_at) VALUES ($1, $2, $3, $4, $5, $6)`, [
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
  kind: TPasskeyKind,
): Promise<TRelyingParty & { challenge: string }> {
  const { challenges, owner } = TABLES[kind];
  let challenge: unknown;
  try {
    challenge = JSON.parse(isoBase64URL.toUTF8String(clientDataJSON)).challenge;
  } catch {
    throw new AppError('passkey_invalid');
  }
  if (typeof challenge !== 'string') throw new AppError('passkey_invalid');
  const [row] = await db.query<{ rp_id: string; origin: string }>(
    `UPDATE ${challenges} SET used_at = $4
     WHERE challenge = $1 AND purpose = $2 AND ${owner} IS NOT DISTINCT FROM $3 AND used_at IS NULL AND expires_at > $4
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
  kind: TPasskeyKind = 'user',
): Promise<TPasskeyOptionsResponse> {
  const { keys, owner, handle } = TABLES[kind];
  const existing = await db.query<{ credential_id: string; transports: string[] }>(
    `SELECT credential_id, transports FROM ${keys} WHERE ${owner} = $1 ORDER BY id`,
    [user.id],
  );
  if (existing.length >= PASSKEYS_MAX) throw new AppError('passkeys_full', { vars: { count: PASSKEYS_MAX } });
  const options = await generateRegistrationOptions({
    rpName: rp.name,
    rpID: rp.id,
    userName: user.email,
    // The user handle names the account without its e-mail (authenticators may show or sync it).
    userID: isoUint8Array.fromUTF8String(`${handle}:${user.id}`),
    attestationType: 'none',
    excludeCredentials: existing.map((row) => ({ id: row.credential_id, transports: row.transports })),
    authenticatorSelection: { residentKey: 'required', userVerification: 'required' },
    timeout: PASSKEY_CHALLENGE_TTL_S * 1000,
    supportedAlgorithmIDs: ALGORITHMS,
  });
  await storeChallenge(db, rp, 'register', user.id, options.challenge, now, kind);
  return { status: 'ok', options: options as unknown as TOptions };
}

/** Checks the new credential against its challenge and keeps it under the given name; answers its id. */
export async function addPasskey(db: Queryable, userId: string, name: string, credential: string, now: Date, kind: TPasskeyKind = 'user'): Promise<string> {
  const { keys, owner } = TABLES[kind];
  const response = parseAnswer<RegistrationResponseJSON>(ZPasskeyAttestation, credential);
  const rp = await spendChallenge(db, response.response.clientDataJSON, 'register', userId, now, kind);
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
  const [count] = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${keys} WHERE ${owner} = $1`, [userId]);
  if ((count?.n ?? 0) >= PASSKEYS_MAX) throw new AppError('passkeys_full', { vars: { count: PASSKEYS_MAX } });
  const [added] = await db.query<{ id: string }>(
    `INSERT INTO ${keys} (${owner}, credential_id, public_key, counter, transports, name, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (credential_id) DO NOTHING RETURNING id::text`,
    [userId, made.id, Buffer.from(made.publicKey), made.counter, made.transports ?? [], name, now],
  );
  if (!added) throw new AppError('passkey_invalid');
  return added.id;
}

export async function listPasskeys(db: Queryable, userId: string, kind: TPasskeyKind = 'user'): Promise<TPasskeyInfo[]> {
  const { keys, owner } = TABLES[kind];
  return db.query<TPasskeyInfo>(
    `SELECT id::text, name, iso_time(created_at) AS created_at, iso_time(last_used_at) AS last_used_at FROM ${keys} WHERE ${owner} = $1 ORDER BY id`,
    [userId],
  );
}

/** Removes one of the owner's own passkeys (answers its name); another owner's answers like a missing one. */
export async function deletePasskey(db: Queryable, userId: string, id: string, kind: TPasskeyKind = 'user'): Promise<string> {
  const { keys, owner } = TABLES[kind];
  const [row] = await db.query<{ name: string }>(`DELETE FROM ${keys} WHERE id = $1 AND ${owner} = $2 RETURNING name`, [id, userId]);
  if (!row) throw notFoundOf('passkey');
  return row.name;
}

// ---- assertions ------------------------------------------------------------------------------

/**
 * Options of an assertion: for a sign-in, any discoverable credential of this site (the browser
 * offers them, also as autofill); for the second factor, only the user's own passkeys.
 */
export async function passkeyAssertionOptions(
  db: Queryable,
  rp: TRelyingParty,
  userId: string | null,
  now: Date,
  kind: TPasskeyKind = 'user',
): Promise<TPasskeyOptionsResponse> {
  const { keys, owner } = TABLES[kind];
  const allow = userId
    ? await db.query<{ credential_id: string; transports: string[] }>(`SELECT credential_id, transports FROM ${keys} WHERE ${owner} = $1 ORDER BY id`, [userId])
    : [];
  if (userId && allow.length === 0) throw notFoundOf('passkey');
  const options = await generateAuthenticationOptions({
    rpID: rp.id,
    userVerification: 'required',
    timeout: PASSKEY_CHALLENGE_TTL_S * 1000,
    allowCredentials: allow.map((row) => ({ id: row.credential_id, transports: row.transports })),
  });
  await storeChallenge(db, rp, userId ? 'second_factor' : 'sign_in', userId, options.challenge, now, kind);
  return { status: 'ok', options: options as unknown as TOptions };
}

/**
 * Checks an assertion: its challenge (spent here), the credential (the owner's own when an owner
 * is given), the signature, user verification and the counter (a clone's lower counter is refused
 * by the library). Returns the credential's owner and id; the counter and last use are written.
 * `over`: the challenge it must answer, by default a second-factor one of the owner given (or a
 * sign-in one without an owner); `sign_in` with an owner is the back office's sign-in, where the
 * password named the operator and the passkey must be theirs.
 */
export async function verifyPasskeyAssertion(
  db: Queryable,
  text: string,
  userId: string | null,
  now: Date,
  kind: TPasskeyKind = 'user',
  over: 'second_factor' | 'sign_in' = userId ? 'second_factor' : 'sign_in',
): Promise<{ owner: string; id: string }> {
  const { keys, owner } = TABLES[kind];
  const response = parseAnswer<AuthenticationResponseJSON>(ZPasskeyAssertion, text);
  const rp = await spendChallenge(db, response.response.clientDataJSON, over, over === 'sign_in' ? null : userId, now, kind);
  const [stored] = await db.query<{ id: string; owner: string; public_key: Buffer; counter: string; transports: string[] }>(
    `SELECT id::text, ${owner}::text AS owner, public_key, counter::text, transports FROM ${keys} WHERE credential_id = $1`,
    [response.id],
  );
  if (!stored || (userId !== null && stored.owner !== userId)) throw new AppError('passkey_invalid');
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
  const [moved] = await db.query(`UPDATE ${keys} SET counter = $2, last_used_at = $3 WHERE id = $1 AND counter = $4 RETURNING id`, [
    stored.id,
    verified.authenticationInfo.newCounter,
    now,
    stored.counter,
  ]);
  if (!moved) throw new AppError('passkey_invalid');
  return { owner: stored.owner, id: stored.id };
}

/** Housekeeping: challenges ended a day ago, of both kinds. */
export async function purgePasskeyChallenges(db: Queryable, now: Date): Promise<void> {
  for (const { challenges } of Object.values(TABLES)) await db.query(`DELETE FROM ${challenges} WHERE expires_at < $1::timestamptz - interval '1 day'`, [now]);
}
