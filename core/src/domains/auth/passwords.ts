import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import { normalizePassword } from '@obmen/shared';

/**
 * scrypt at the OWASP Password Storage Cheat Sheet parameters: N = 2^17, r = 8, p = 1
 * (128 MiB and ~0.4 s of one core per hash here). scrypt rather than argon2id because it is in
 * node:crypto: no native add-on to build in the Docker image. 16-byte random salt, 32-byte key.
 *
 * Stored as a self-describing PHC-style string, so parameters can rise later and old hashes
 * still verify (and are re-hashed at the next sign-in, see `needsRehash`):
 *   $scrypt$ln=17,r=8,p=1$<salt base64>$<key base64>
 */
export const SCRYPT_PARAMS = { ln: 17, r: 8, p: 1 } as const;
type TScryptParams = { ln: number; r: number; p: number };
/**
 * The cost new hashes get: SCRYPT_PARAMS, unless the config lowers N for a test run
 * (PASSWORD_SCRYPT_LN, refused outside NODE_ENV=test). Process-wide like the config it comes from.
 */
let currentParams: TScryptParams = SCRYPT_PARAMS;
const SALT_BYTES = 16;
const KEY_BYTES = 32;
/** Cap on the cost a stored string may ask for: a tampered row must not allocate gigabytes. */
const MAX_LN = 20;

function scryptAsync(password: string, salt: Buffer, params: TScryptParams): Promise<Buffer> {
  const N = 2 ** params.ln;
  // scrypt needs 128·N·r bytes; Node's default cap (32 MiB) is below OWASP's 128 MiB.
  const options: ScryptOptions = { N, r: params.r, p: params.p, maxmem: 128 * N * params.r * params.p + 16 * 1024 * 1024 };
  return new Promise((resolve, reject) => {
    scrypt(normalizePassword(password), salt, KEY_BYTES, options, (err, key) => (err ? reject(err) : resolve(key)));
  });
}

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(SALT_BYTES);
  const key = await scryptAsync(password, salt, currentParams);
  const { ln, r, p } = currentParams;
  return `$scrypt$ln=${ln},r=${r},p=${p}$${salt.toString('base64')}$${key.toString('base64')}`;
}

type TParsedHash = { ln: number; r: number; p: number; salt: Buffer; key: Buffer };

export function parseHash(stored: string): TParsedHash | null {
  const match = /^\$scrypt\$ln=(\d+),r=(\d+),p=(\d+)\$([A-Za-z0-9+/]+=*)\$([A-Za-z0-9+/]+=*)$/.exec(stored);
  if (!match) return null;
  const [, ln, r, p, salt, key] = match as unknown as [string, string, string, string, string, string];
  const parsed = { ln: Number(ln), r: Number(r), p: Number(p), salt: Buffer.from(salt, 'base64'), key: Buffer.from(key, 'base64') };
  if (parsed.ln < 10 || parsed.ln > MAX_LN || parsed.r < 1 || parsed.r > 32 || parsed.p < 1 || parsed.p > 16 || parsed.key.length < 16) return null;
  return parsed;
}

/** A real hash of a random password: unknown emails cost the same time as known ones. */
let dummyHash: Promise<string> | undefined;
function getDummyHash(): Promise<string> {
  dummyHash ??= hashPassword(randomBytes(32).toString('base64'));
  return dummyHash;
}

/**
 * Verifies in constant time. `stored` null (no such user, or no password set) still spends a
 * full hash on a dummy, so the answer time does not tell whether the account exists.
 */
export async function verifyPassword(password: string, stored: string | null): Promise<boolean> {
  const parsed = parseHash(stored ?? (await getDummyHash()));
  if (!parsed) {
    await scryptAsync(password, randomBytes(SALT_BYTES), currentParams);
    return false;
  }
  const key = await scryptAsync(password, parsed.salt, parsed);
  const equal = key.length === parsed.key.length && timingSafeEqual(key, parsed.key);
  return equal && stored !== null;
}

/** True when the stored hash uses weaker parameters than today's. */
export function needsRehash(stored: string): boolean {
  const parsed = parseHash(stored);
  return !parsed || parsed.ln < currentParams.ln || parsed.r < currentParams.r || parsed.p < currentParams.p;
}

/** Sets the cost of new hashes (config PASSWORD_SCRYPT_LN) before the app hashes anything. */
export function setPasswordHashCost(ln: number): void {
  if (ln === currentParams.ln) return;
  currentParams = { ...SCRYPT_PARAMS, ln };
  dummyHash = undefined;
}

/** Warm the dummy hash at boot so the first unknown-email sign-in is not slower. */
export function prepareDummyHash(): Promise<unknown> {
  return getDummyHash();
}
