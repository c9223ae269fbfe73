import { DeleteObjectCommand, GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import type { Readable } from 'node:stream';
import { assertKey, type TFileStorage } from './index.ts';

export type TS3Options = { endpoint: string; bucket: string; region: string; accessKeyId: string; secretAccessKey: string };

/**
 * Any S3-compatible service (AWS, MinIO, Ceph, R2…). Path-style addressing, since most
 * self-hosted services have no per-bucket DNS names. Objects are private: no ACL is set and
 * nothing hands out presigned URLs; the core reads them and the BFF serves them.
 */
export function openS3Storage(options: TS3Options): TFileStorage {
  const client = new S3Client({
    endpoint: options.endpoint,
    region: options.region,
    forcePathStyle: true,
    // Plain signed PUTs: the SDK's default checksum trailers (aws-chunked) are not spoken by
    // every S3-compatible service, and TLS plus the signature already protect the bytes.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    credentials: { accessKeyId: options.accessKeyId, secretAccessKey: options.secretAccessKey },
  });
  const Bucket = options.bucket;
  return {
    kind: 's3',
    async put(key, body, size, contentType) {
      // A known length lets the body stream straight through (no buffering, no multipart upload).
      await client.send(new PutObjectCommand({ Bucket, Key: assertKey(key), Body: body, ContentLength: size, ContentType: contentType }));
    },
    async get(key) {
      try {
        const out = await client.send(new GetObjectCommand({ Bucket, Key: assertKey(key) }));
        return { body: out.Body as Readable, size: Number(out.ContentLength ?? 0) };
      } catch (err) {
        const name = (err as { name?: string }).name;
        if (name === 'NoSuchKey' || name === 'NotFound') return null;
        throw err;
      }
    },
    async remove(key) {
      await client.send(new DeleteObjectCommand({ Bucket, Key: assertKey(key) }));
    },
  };
}
