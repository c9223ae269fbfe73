import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { TConfig } from '../../config.ts';

/** AES-256-GCM for document numbers: iv (12) ‖ tag (16) ‖ ciphertext. */
export type TDocumentCipher = {
  encrypt(plain: string): Promise<Buffer>;
  decrypt(sealed: Buffer): Promise<string>;
  /** A keyed hash of a number for finding the same document on another account (never reversible). */
  lookupHash(plain: string): Promise<Buffer>;
};

const IV_BYTES = 12;
const TAG_BYTES = 16;

/**
 * The key is DOCUMENT_KEY; without it, one generated once into DOCUMENT_KEY_FILE (mode 0600),
 * read on first use so a core that never sees a document writes nothing.
 */
export function openDocumentCipher(config: Pick<TConfig, 'DOCUMENT_KEY' | 'DOCUMENT_KEY_FILE' | 'NODE_ENV'>, warn: (msg: string) => void): TDocumentCipher {
  let key: Promise<Buffer> | undefined;
  let lookupKey: Promise<Buffer> | undefined;
  const getKey = () =>
    (key ??= config.DOCUMENT_KEY
      ? Promise.resolve(Buffer.from(config.DOCUMENT_KEY, 'base64'))
      : loadOrCreateKey(config.DOCUMENT_KEY_FILE, config.NODE_ENV === 'production' ? warn : () => {}));
  return {
    async encrypt(plain) {
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv('aes-256-gcm', await getKey(), iv);
      const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
      return Buffer.concat([iv, cipher.getAuthTag(), body]);
    },
    async decrypt(sealed) {
      const decipher = createDecipheriv('aes-256-gcm', await getKey(), sealed.subarray(0, IV_BYTES));
      decipher.setAuthTag(sealed.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
      return Buffer.concat([decipher.update(sealed.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
    },
    async lookupHash(plain) {
      // A key of its own, derived from the document key: the lookup never reuses the cipher's key.
      lookupKey ??= getKey().then((base) => Buffer.from(hkdfSync('sha256', base, Buffer.alloc(0), 'obmen document number lookup', 32)));
      return createHmac('sha256', await lookupKey)
        .update(plain, 'utf8')
        .digest();
    },
  };
}

async function loadOrCreateKey(file: string, warn: (msg: string) => void): Promise<Buffer> {
  try {
    const key = Buffer.from((await readFile(file, 'utf8')).trim(), 'base64');
    if (key.length !== 32) throw new Error(`${file}: not a 32-byte base64 key`);
    return key;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  warn(`DOCUMENT_KEY is not set: generating a document key into ${file}; set DOCUMENT_KEY from a secret store instead`);
  await mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  const key = randomBytes(32);
  try {
    // 'wx': if another process made one first, use theirs.
    await writeFile(file, `${key.toString('base64')}\n`, { mode: 0o600, flag: 'wx' });
    return key;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    return loadOrCreateKey(file, warn);
  }
}
