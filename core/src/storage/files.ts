import { createReadStream } from 'node:fs';
import type { FastifyReply } from 'fastify';
import type { TFileStorage } from './index.ts';
import { newFileKey } from './index.ts';
import type { TCheckedFile } from './inspect.ts';

export type TStoredFile = TCheckedFile & { key: string };

/**
 * Stores checked files under fresh keys. All or nothing: if one fails, the ones already
 * stored are removed before the error goes on.
 */
export async function storeFiles(storage: TFileStorage, prefix: string, files: TCheckedFile[]): Promise<TStoredFile[]> {
  const stored: TStoredFile[] = [];
  try {
    for (const file of files) {
      const key = newFileKey(prefix, file.ext);
      await storage.put(key, createReadStream(file.path), file.size, file.mime);
      stored.push({ ...file, key });
    }
    return stored;
  } catch (err) {
    await removeFiles(
      storage,
      stored.map((file) => file.key),
    );
    throw err;
  }
}

/** Best effort: a key that cannot be removed now is an orphan, never a leak (keys are never shown). */
export async function removeFiles(storage: TFileStorage, keys: string[]): Promise<void> {
  await Promise.all(keys.map((key) => storage.remove(key).catch(() => {})));
}

/**
 * Sends a private file. Re-encoded images may show inline; anything else downloads. Never
 * cached by shared caches or the browser, never sniffed into another type. The name is ours.
 */
export async function sendStoredFile(
  reply: FastifyReply,
  storage: TFileStorage,
  file: { key: string; mime: string; reencoded: boolean; name: string },
): Promise<FastifyReply | null> {
  const object = await storage.get(file.key);
  if (!object) return null;
  return reply
    .header('content-type', file.mime)
    .header('content-length', object.size)
    .header('content-disposition', `${file.reencoded ? 'inline' : 'attachment'}; filename="${file.name}"`)
    .header('x-content-type-options', 'nosniff')
    .header('cache-control', 'private, no-store')
    .header('content-security-policy', "default-src 'none'; sandbox")
    .send(object.body);
}
