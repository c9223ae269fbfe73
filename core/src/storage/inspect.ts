import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { fileTypeFromFile } from 'file-type';
import sharp from 'sharp';
import { ACCEPTED_FILE_TYPES, type TAcceptedFileType, type TI18nKey } from '@obmen/shared';
import { AppError } from '../errors.ts';
import type { TReceivedFile } from './upload.ts';

/** A received file that passed every check, ready to store. */
export type TCheckedFile = {
  field: string;
  /** The bytes to store: the re-encoded image, or the PDF as received. */
  path: string;
  size: number;
  mime: TAcceptedFileType;
  ext: 'jpg' | 'png' | 'webp' | 'pdf';
  /** Images are re-encoded (served inline); PDFs are kept as they came (served as attachments). */
  reencoded: boolean;
};

const EXT: Record<TAcceptedFileType, TCheckedFile['ext']> = { 'image/jpeg': 'jpg', 'image/png': 'png', 'image/webp': 'webp', 'application/pdf': 'pdf' };

/** A decompression bomb (a tiny file of a huge picture) stops here: 50 megapixels is any phone's photo. */
const MAX_INPUT_PIXELS = 50_000_000;

const refused = (field: string, key: TI18nKey) => new AppError('file_refused', { key, fields: { [field]: key } });

/*
 * Marks of another format hidden inside an allowed one: a file that is both a picture and a
 * web page, a script or a ZIP/JAR (a polyglot) is refused outright instead of being trusted to
 * re-encoding. ZIP readers look for their end record in the last 64 KiB; HTML and PDF
 * readers scan for their marks anywhere near the start, browsers anywhere.
 */
const ACTIVE_MARKS = ['<script', '<html', '<!doctype html', '<svg', '<iframe', '<?php', '<%@', 'javascript:'].map((mark) => Buffer.from(mark));
/** Active content in a PDF: scripts, launch actions, embedded files, Flash/XFA forms. */
const PDF_ACTIVE_MARKS = ['/JavaScript', '/JS', '/Launch', '/EmbeddedFile', '/RichMedia', '/XFA'].map((mark) => Buffer.from(mark));
const ZIP_END = Buffer.from('PK\x05\x06', 'latin1');
const PDF_HEADER = Buffer.from('%PDF-');
const OVERLAP = 32;
/** Small chunks: twenty uploads scanned at once must not add up to a burst of memory. */
const SCAN_CHUNK = 64 * 1024;

function asciiLowerCase(bytes: Buffer): Buffer {
  const out = Buffer.allocUnsafe(bytes.length);
  for (let i = 0; i < bytes.length; i++) {
    const byte = bytes[i]!;
    out[i] = byte >= 0x41 && byte <= 0x5a ? byte + 0x20 : byte;
  }
  return out;
}

/**
 * One re-encode per CPU at a time, one libvips thread each: a decoded picture holds tens of MB,
 * and each extra libvips thread keeps its own buffers (and malloc arena) alive.
 */
const encodeSlots = createSlots(Math.max(1, availableParallelism()));
sharp.cache(false);
sharp.concurrency(1);

/**
 * Checks one received file by its bytes (never its name or declared type) and, for images,
 * writes a re-encoded copy without any metadata (EXIF, GPS, XMP, ICC, comments) beside it.
 */
export async function checkFile(file: TReceivedFile): Promise<TCheckedFile> {
  if (file.size === 0) throw refused(file.field, 'files.empty');
  const sniffed = await fileTypeFromFile(file.path);
  if (sniffed?.mime === 'image/heic' || sniffed?.mime === 'image/heif') throw refused(file.field, 'files.heic_unsupported');
  const mime = sniffed && (ACCEPTED_FILE_TYPES as readonly string[]).includes(sniffed.mime) ? (sniffed.mime as TAcceptedFileType) : null;
  if (!mime) throw refused(file.field, 'files.type_not_allowed');
  if (await hasForeignContent(file.path, file.size, mime)) throw refused(file.field, 'files.polyglot');
  if (mime === 'application/pdf') return { field: file.field, path: file.path, size: file.size, mime, ext: 'pdf', reencoded: false };
  const out = `${file.path}.clean.${EXT[mime]}`;
  try {
    await encodeSlots.run(() => reencode(file.path, out, mime));
  } catch {
    throw refused(file.field, 'files.damaged');
  }
  return { field: file.field, path: out, size: (await stat(out)).size, mime, ext: EXT[mime], reencoded: true };
}

/** Fresh pixels in the same format: upright (EXIF orientation applied), no metadata at all. */
async function reencode(input: string, output: string, mime: TAcceptedFileType): Promise<void> {
  // failOn 'error': a truncated or corrupt picture is refused rather than half-decoded.
  const image = sharp(input, { limitInputPixels: MAX_INPUT_PIXELS, failOn: 'error', pages: 1 }).rotate();
  if (mime === 'image/jpeg') await image.jpeg({ quality: 90 }).toFile(output);
  else if (mime === 'image/png') await image.png({ compressionLevel: 9 }).toFile(output);
  else await image.webp({ quality: 90 }).toFile(output);
}

/** Scans the file in chunks (overlapping, so a mark split between two chunks is still found). */
async function hasForeignContent(filePath: string, size: number, mime: TAcceptedFileType): Promise<boolean> {
  let offset = 0;
  let tail = Buffer.alloc(0);
  for await (const chunk of createReadStream(filePath, { highWaterMark: SCAN_CHUNK }) as AsyncIterable<Buffer>) {
    const window = Buffer.concat([tail, chunk]);
    const start = offset - tail.length;
    const folded = asciiLowerCase(window);
    if (ACTIVE_MARKS.some((mark) => folded.includes(mark))) return true;
    if (mime === 'application/pdf' && PDF_ACTIVE_MARKS.some((mark) => window.includes(mark))) return true;
    // A PDF header inside a picture (PDF readers accept one anywhere in the first KiB).
    if (mime !== 'application/pdf') {
      const at = window.indexOf(PDF_HEADER);
      if (at >= 0 && start + at < 1024) return true;
    }
    const zipAt = window.lastIndexOf(ZIP_END);
    if (zipAt >= 0 && start + zipAt >= size - 65_557) return true;
    offset += chunk.length;
    tail = window.subarray(Math.max(0, window.length - OVERLAP));
  }
  return false;
}

function createSlots(size: number) {
  let free = size;
  const waiting: Array<() => void> = [];
  return {
    async run<T>(work: () => Promise<T>): Promise<T> {
      if (free > 0) free--;
      else await new Promise<void>((resolve) => waiting.push(resolve));
      try {
        return await work();
      } finally {
        const next = waiting.shift();
        if (next) next();
        else free++;
      }
    },
  };
}
