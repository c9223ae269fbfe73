import { createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { FastifyRequest } from 'fastify';
import { FILE_MAX_BYTES, FILES_MAX_PER_REQUEST, UPLOAD_BODY_MAX_BYTES, wholeMegabytes } from '@obmen/shared';
import { AppError } from '../errors.ts';

/** One received file part, on local temporary disk, not yet checked. */
export type TReceivedFile = { field: string; path: string; size: number };

export type TReceivedUpload = {
  files: TReceivedFile[];
  /** The text fields of the form (the first value of each name). */
  fields: Record<string, string>;
  /** Aborted when the client's connection closes before the answer: its files' checks stop. */
  signal: AbortSignal;
  /** Removes the temporary files; call it whatever happens. */
  cleanup(): Promise<void>;
};

/** Text fields are short (sides, ids): this bounds a form's non-file bytes. */
const FIELD_MAX_BYTES = 1024;
const FIELDS_MAX = 32;

export const fileTooLarge = (field: string) =>
  new AppError('file_too_large', { fields: { [field]: 'files.too_large' }, headers: { connection: 'close' }, vars: { mb: wholeMegabytes(FILE_MAX_BYTES) } });
export const tooManyFiles = () => new AppError('too_many_files', { headers: { connection: 'close' }, vars: { max: FILES_MAX_PER_REQUEST } });
const notMultipart = () => new AppError('not_multipart');
const badForm = () => new AppError('bad_form');

/**
 * preValidation for upload routes: a declared length beyond what any valid upload can be is
 * refused before a byte of the body is read.
 */
export async function refuseOversizedUpload(request: FastifyRequest): Promise<void> {
  const length = Number(request.headers['content-length'] ?? 0);
  if (length > UPLOAD_BODY_MAX_BYTES) {
    throw new AppError('upload_too_large', { headers: { connection: 'close' }, vars: { mb: wholeMegabytes(UPLOAD_BODY_MAX_BYTES) } });
  }
}

/**
 * Streams a multipart form's files to temporary disk, counting bytes as they arrive: the first
 * byte over FILE_MAX_BYTES, or a file beyond FILES_MAX_PER_REQUEST, stops the request at once
 * with 413 and every temporary file is removed. No part is held in memory.
 */
export async function receiveUpload(
  request: FastifyRequest,
  options: { fieldMaxBytes?: number; fieldTooLong?: (field: string) => AppError } = {},
): Promise<TReceivedUpload> {
  if (!request.isMultipart()) throw notMultipart();
  const dir = await mkdtemp(path.join(tmpdir(), 'obmen-upload-'));
  const gone = new AbortController();
  const socket = request.raw.socket;
  const onClose = () => gone.abort(new AppError('client_closed'));
  socket.once('close', onClose);
  const cleanup = () => {
    socket.off('close', onClose);
    return rm(dir, { recursive: true, force: true });
  };
  const files: TReceivedFile[] = [];
  const fields: Record<string, string> = {};
  try {
    const parts = request.parts({
      limits: {
        fileSize: FILE_MAX_BYTES + 1,
        files: FILES_MAX_PER_REQUEST,
        fields: FIELDS_MAX,
        fieldSize: options.fieldMaxBytes ?? FIELD_MAX_BYTES,
        parts: FILES_MAX_PER_REQUEST + FIELDS_MAX,
      },
    });
    for await (const part of parts) {
      if (part.type === 'field') {
        if (part.valueTruncated && options.fieldTooLong) throw options.fieldTooLong(part.fieldname);
        if (part.valueTruncated || typeof part.value !== 'string') throw badForm();
        fields[part.fieldname] ??= part.value;
        continue;
      }
      const target = path.join(dir, `${files.length}.bin`);
      let size = 0;
      const counter = new Transform({
        transform(chunk: Buffer, _encoding, done) {
          size += chunk.length;
          if (size > FILE_MAX_BYTES) done(fileTooLarge(part.fieldname));
          else done(null, chunk);
        },
      });
      await pipeline(part.file, counter, createWriteStream(target, { mode: 0o600 }));
      if (part.file.truncated) throw fileTooLarge(part.fieldname);
      files.push({ field: part.fieldname, path: target, size });
    }
    return { files, fields, signal: gone.signal, cleanup };
  } catch (err) {
    await cleanup();
    throw toUploadError(err);
  }
}

function toUploadError(err: unknown): unknown {
  if (err instanceof AppError) return err;
  const code = (err as { code?: string }).code;
  if (code === 'FST_FILES_LIMIT' || code === 'FST_PARTS_LIMIT') return tooManyFiles();
  if (code === 'FST_REQ_FILE_TOO_LARGE') return fileTooLarge('_');
  if (code === 'FST_FIELDS_LIMIT' || code === 'FST_PROTO_VIOLATION' || code === 'FST_INVALID_JSON_FIELD_ERROR') return badForm();
  if (code === 'FST_INVALID_MULTIPART_CONTENT_TYPE') return notMultipart();
  // Malformed multipart (cut off, bad boundary) is the client's fault, not ours.
  if (err instanceof Error && /multipart|boundary|Unexpected end|terminated early/i.test(err.message)) return badForm();
  return err;
}
