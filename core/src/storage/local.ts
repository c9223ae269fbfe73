import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, rename, rm, stat } from 'node:fs/promises';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { assertKey, type TFileStorage } from './index.ts';

/**
 * Files under `root` (FILES_DIR), one per key. A file appears under its name only once it is
 * complete (written beside it, then renamed), so a reader never sees half an upload.
 * Directories are made on first write: a core that never stores a file leaves no trace.
 */
export function openLocalStorage(root: string): TFileStorage {
  const pathOf = (key: string) => path.join(root, ...assertKey(key).split('/'));
  return {
    kind: 'local',
    async put(key, body, size) {
      const target = pathOf(key);
      await mkdir(path.dirname(target), { recursive: true, mode: 0o700 });
      const partial = `${target}.${randomUUID()}.part`;
      try {
        await pipeline(Buffer.isBuffer(body) ? Readable.from([body]) : body, createWriteStream(partial, { mode: 0o600, flags: 'wx' }));
        const written = (await stat(partial)).size;
        if (written !== size) throw new Error(`storage: wrote ${written} bytes of ${size}`);
        await rename(partial, target);
      } catch (err) {
        await rm(partial, { force: true });
        throw err;
      }
    },
    async get(key) {
      const file = pathOf(key);
      try {
        const { size } = await stat(file);
        return { body: createReadStream(file), size };
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
        throw err;
      }
    },
    async remove(key) {
      await rm(pathOf(key), { force: true });
    },
  };
}
