import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { fileTypeFromFile } from 'file-type';
import sharp from 'sharp';
import { ACCEPTED_FILE_TYPES, type TAcceptedFileType, type TI18nKey } from '@obmen/shared';
import { AppError } from '../errors.ts';
import type { TPdfJob, TPdfResult } from './pdf-worker.ts';
import type { TReceivedFile } from './upload.ts';
import { createWorkQueue } from './work-queue.ts';

/** A received file that passed every check, ready to store. */
export type TCheckedFile = {
  field: string;
  /** The bytes to store: the re-encoded image, or the rebuilt PDF. */
  path: string;
  size: number;
  mime: TAcceptedFileType;
  ext: 'jpg' | 'png' | 'webp' | 'pdf';
  /** Images are re-encoded (served inline); PDFs are rebuilt (still served as attachments). */
  reencoded: boolean;
};

const EXT: Record<TAcceptedFileType, TCheckedFile['ext']> = { 'image/jpeg': 'jpg', 'image/png': 'png', 'image/webp': 'webp', 'application/pdf': 'pdf' };

/**
 * A document or a chat photo needs no more: 24 megapixels is a 6000×4000 camera photo. Checked
 * on the header before any decoding, so a small file of a huge picture (a 100 KB WebP of 49 MP
 * cost 4.6 s of CPU to re-encode) is refused for the cost of reading its first bytes.
 */
export const MAX_INPUT_PIXELS = 24_000_000;
/** The longest side kept: enough to read a document; JPEG and WebP shrink while decoding. */
export const MAX_SIDE = 4096;
/** A re-encode of a picture within the caps takes well under a second; a stuck one stops here. */
const ENCODE_TIMEOUT_S = 10;
/** pdf-lib is JavaScript: a file of many small objects or an object-stream bomb ends here. */
const PDF_TIMEOUT_MS = 10_000;
const PDF_WORKER = new URL('./pdf-worker.ts', import.meta.url);

const refused = (field: string, key: TI18nKey, vars?: Record<string, number>) => new AppError('file_refused', { key, vars, fields: { [field]: key } });

/*
 * Marks of another format hidden inside an allowed one: a file that is both a picture and a
 * web page, a script or a ZIP/JAR (a polyglot) is refused outright instead of being trusted to
 * re-encoding. ZIP readers look for their end record in the last 64 KiB; HTML and PDF
 * readers scan for their marks anywhere near the start, browsers anywhere. A PDF's own active
 * content is not looked for here: names can be escaped and objects compressed, so every PDF is
 * rebuilt instead (pdf.ts).
 */
const ACTIVE_MARKS = ['<script', '<html', '<!doctype html', '<svg', '<iframe', '<?php', '<%@', 'javascript:'].map((mark) => Buffer.from(mark));
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
 * The costly part of every check (decoding and re-encoding a picture, rebuilding a PDF): one job
 * per CPU at a time, owners served in turn, one owner on at most all CPUs but one (a second
 * user starts at once beside a flood), a bounded number waiting (503 overloaded beyond, and
 * beyond two of one owner's: files are checked one after another, so two uploads at once).
 * One libvips thread per job: a decoded picture holds tens of MB, and each extra libvips
 * thread keeps its own buffers (and malloc arena) alive.
 */
const CPUS = Math.max(1, availableParallelism());
export const fileWork = createWorkQueue({ concurrency: CPUS, maxWaiting: 32, maxPerOwner: 2, maxRunningPerOwner: Math.max(1, CPUS - 1), retryAfterS: 5 });
sharp.cache(false);
sharp.concurrency(1);

/** Whose work this is (a user id, or an operator), and the request's signal: aborted when its client goes. */
export type TFileJob = { owner: string; signal?: AbortSignal };

/** Checks the files one after another: a request never holds more than one slot of the work queue. */
export async function checkFiles(files: TReceivedFile[], job: TFileJob): Promise<TCheckedFile[]> {
  const checked: TCheckedFile[] = [];
  for (const file of files) checked.push(await checkFile(file, job));
  return checked;
}

/**
 * Checks one received file by its bytes (never its name or declared type), of the `accepted`
 * types only, and writes beside it the copy to store: images re-encoded without any metadata (EXIF, GPS, XMP, ICC, comments),
 * PDFs rebuilt without anything active.
 */
export async function checkFile(file: TReceivedFile, job: TFileJob, accepted: readonly TAcceptedFileType[] = ACCEPTED_FILE_TYPES): Promise<TCheckedFile> {
  if (file.size === 0) throw refused(file.field, 'files.empty');
  const sniffed = await fileTypeFromFile(file.path);
  if (sniffed?.mime === 'image/heic' || sniffed?.mime === 'image/heif') throw refused(file.field, 'files.heic_unsupported');
  const mime = sniffed && (accepted as readonly string[]).includes(sniffed.mime) ? (sniffed.mime as TAcceptedFileType) : null;
  if (!mime) throw refused(file.field, 'files.type_not_allowed');
  if (await hasForeignContent(file.path, file.size, mime)) throw refused(file.field, 'files.polyglot');
  const out = `${file.path}.clean.${EXT[mime]}`;
  const isPdf = mime === 'application/pdf';
  await fileWork.run(job.owner, job.signal, (signal) => (isPdf ? rebuildPdfOffThread(file, out, signal) : reencode(file, out, mime)));
  return { field: file.field, path: out, size: (await stat(out)).size, mime, ext: EXT[mime], reencoded: !isPdf };
}

/**
 * Fresh pixels in the same format: upright (EXIF orientation applied), no metadata at all, at
 * most MAX_SIDE on a side. The header's size decides first: nothing is decoded beyond the cap.
 */
async function reencode(file: TReceivedFile, output: string, mime: TAcceptedFileType): Promise<void> {
  let pixels: number;
  try {
    const { width, height } = await sharp(file.path, { pages: 1 }).metadata();
    pixels = width * height;
  } catch {
    throw refused(file.field, 'files.damaged');
  }
  if (!(pixels > 0)) throw refused(file.field, 'files.damaged');
  if (pixels > MAX_INPUT_PIXELS) throw refused(file.field, 'files.too_many_pixels', { mp: MAX_INPUT_PIXELS / 1_000_000 });
  try {
    // failOn 'error': a truncated or corrupt picture is refused rather than half-decoded.
    const image = sharp(file.path, { limitInputPixels: MAX_INPUT_PIXELS, failOn: 'error', pages: 1 })
      .rotate()
      .resize({ width: MAX_SIDE, height: MAX_SIDE, fit: 'inside', withoutEnlargement: true })
      .timeout({ seconds: ENCODE_TIMEOUT_S });
    if (mime === 'image/jpeg') await image.jpeg({ quality: 90 }).toFile(output);
    else if (mime === 'image/png') await image.png({ compressionLevel: 9 }).toFile(output);
    else await image.webp({ quality: 90 }).toFile(output);
  } catch {
    throw refused(file.field, 'files.damaged');
  }
}

/**
 * Rebuilds a PDF in a worker thread of its own: pdf-lib's parsing is JavaScript, which on the
 * core's thread would stall every other request. The worker is ended on the deadline, when its
 * heap is full, or when the client goes.
 */
function rebuildPdfOffThread(file: TReceivedFile, output: string, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(PDF_WORKER, {
      workerData: { input: file.path, output } satisfies TPdfJob,
      resourceLimits: { maxOldGenerationSizeMb: 256, maxYoungGenerationSizeMb: 32 },
    });
    let done = false;
    const finish = (err?: unknown) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      void worker.terminate();
      if (err) reject(err);
      else resolve();
    };
    const unreadable = () => refused(file.field, 'files.pdf_unreadable');
    const onAbort = () => finish(signal!.reason);
    const timer = setTimeout(() => finish(unreadable()), PDF_TIMEOUT_MS);
    signal?.addEventListener('abort', onAbort, { once: true });
    worker.once('message', (result: TPdfResult) => {
      if (result.ok) finish();
      else if (result.reason === 'too_many_pages') finish(refused(file.field, 'files.pdf_too_many_pages', { max: result.maxPages }));
      else finish(unreadable());
    });
    worker.once('error', (err: NodeJS.ErrnoException) => finish(err.code === 'ERR_WORKER_OUT_OF_MEMORY' ? unreadable() : err));
    worker.once('exit', () => finish(new Error('pdf worker exited without an answer')));
  });
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
