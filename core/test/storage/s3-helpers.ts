import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import S3rver from 's3rver';

/** An S3-compatible server on a free loopback port, with one bucket, gone after the suite. */
export async function startS3(): Promise<{ url: string; bucket: string; close: () => Promise<void> }> {
  const directory = await mkdtemp(path.join(tmpdir(), 'obmen-s3-'));
  const server = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory, configureBuckets: [{ name: 'obmen-test', configs: [] }] });
  const { address, port } = await server.run();
  return {
    url: `http://${address}:${port}`,
    bucket: 'obmen-test',
    async close() {
      await server.close();
      await rm(directory, { recursive: true, force: true });
    },
  };
}
