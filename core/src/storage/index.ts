import { randomUUID } from 'node:crypto';
import type { Readable } from 'node:stream';
import type { TConfig } from '../config.ts';
import { openLocalStorage } from './local.ts';
import { openS3Storage } from './s3.ts';

/**
 * Private file storage: identity documents now, chat attachments next. Objects are addressed by
 * keys the server makes (newFileKey); nothing here is ever served without an owner check
 * upstream, and no storage URL ever reaches a browser.
 */
export interface TFileStorage {
  readonly kind: 'local' | 's3';
  /** Stores `size` bytes under `key`, replacing nothing: keys are fresh UUIDs. */
  put(key: string, body: Readable | Buffer, size: number, contentType: string): Promise<void>;
  /** The object's bytes, or null when there is none. */
  get(key: string): Promise<{ body: Readable; size: number } | null>;
  /** Removes the object; removing a missing one is fine. */
  remove(key: string): Promise<void>;
}

/** Folder-like key segments, then a UUID file name: no user input ever reaches a key. */
const KEY = /^[a-z0-9-]+(\/[a-z0-9-]+)*\/[0-9a-f-]{36}\.[a-z0-9]{2,5}$/;

export function assertKey(key: string): string {
  if (!KEY.test(key)) throw new Error(`bad storage key: ${key}`);
  return key;
}

/** A new server-chosen key, e.g. `kyc/2026-11/6f1c….jpg`. */
export function newFileKey(prefix: string, ext: string, now = new Date()): string {
  return assertKey(`${prefix}/${now.toISOString().slice(0, 7)}/${randomUUID()}.${ext}`);
}

/** S3-compatible storage when S3_URL is set; otherwise files under FILES_DIR on local disk. */
export function openStorage(config: TConfig): TFileStorage {
  if (config.S3_URL) {
    return openS3Storage({
      endpoint: config.S3_URL,
      bucket: config.S3_BUCKET,
      region: config.S3_REGION,
      accessKeyId: config.S3_ACCESS_KEY_ID ?? '',
      secretAccessKey: config.S3_SECRET_ACCESS_KEY ?? '',
    });
  }
  return openLocalStorage(config.FILES_DIR);
}
