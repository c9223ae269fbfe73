import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { text } from 'node:stream/consumers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startS3 } from './s3-helpers.ts';
import { newFileKey, type TFileStorage } from '../../src/storage/index.ts';
import { openLocalStorage } from '../../src/storage/local.ts';
import { openS3Storage } from '../../src/storage/s3.ts';

const kinds = ['local', 's3'] as const;

describe.each(kinds)('file storage: %s', (kind) => {
  let storage: TFileStorage;
  let cleanup: () => Promise<void>;
  let root = '';

  beforeAll(async () => {
    if (kind === 'local') {
      root = await mkdtemp(path.join(tmpdir(), 'obmen-files-'));
      storage = openLocalStorage(root);
      cleanup = () => rm(root, { recursive: true, force: true });
    } else {
      const s3 = await startS3();
      storage = openS3Storage({ endpoint: s3.url, bucket: s3.bucket, region: 'us-east-1', accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' });
      cleanup = s3.close;
    }
  });
  afterAll(() => cleanup());

  it('stores a stream under a server-chosen key, reads it back, removes it', async () => {
    const key = newFileKey('test', 'pdf');
    expect(key).toMatch(/^test\/\d{4}-\d{2}\/[0-9a-f-]{36}\.pdf$/);
    const body = 'x'.repeat(100_000);
    await storage.put(key, Readable.from([Buffer.from(body.slice(0, 50_000)), Buffer.from(body.slice(50_000))]), body.length, 'application/pdf');
    const object = await storage.get(key);
    expect(object?.size).toBe(body.length);
    expect(await text(object!.body)).toBe(body);
    await storage.remove(key);
    expect(await storage.get(key)).toBeNull();
    await storage.remove(key);
  });

  it('answers null for a key that was never stored', async () => {
    expect(await storage.get(newFileKey('test', 'jpg'))).toBeNull();
  });

  it('refuses keys it did not make (no path tricks reach the disk or the bucket)', async () => {
    for (const key of ['../etc/passwd', 'test/../../x.jpg', '/abs/x.jpg', 'test/name with space.jpg', 'test/2026-11/evil.jpg']) {
      await expect(storage.put(key, Buffer.from('x'), 1, 'image/jpeg')).rejects.toThrow(/bad storage key/);
      await expect(storage.get(key)).rejects.toThrow(/bad storage key/);
    }
  });

  if (kind === 'local') {
    it('leaves no partial file behind when the stream fails', async () => {
      const key = newFileKey('broken', 'jpg');
      const failing = new Readable({
        read() {
          this.destroy(new Error('client went away'));
        },
      });
      await expect(storage.put(key, failing, 10, 'image/jpeg')).rejects.toThrow('client went away');
      expect(await storage.get(key)).toBeNull();
      const dir = path.join(root, ...key.split('/').slice(0, -1));
      expect(await readdir(dir)).toEqual([]);
    });
  }
});
