import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppError } from '../../src/errors.ts';
import { checkFile, MAX_SIDE } from '../../src/storage/inspect.ts';
import { rebuildPdf } from '../../src/storage/pdf.ts';
import {
  activeContentOf,
  hugeWebp,
  pageTextOf,
  pdf,
  pdfActionInObjectStream,
  pdfEncrypted,
  pdfEscapedEmbeddedFile,
  pdfEscapedJavaScript,
  pdfEscapedLaunch,
  pdfObjectStreamBomb,
  pdfOfPages,
} from './upload-fixtures.ts';

let dir = '';
beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'obmen-inspect-'));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

let made = 0;
async function received(content: Buffer) {
  const file = path.join(dir, `${made++}.bin`);
  await writeFile(file, content);
  return { field: 'file0', path: file, size: content.length };
}

/** The refusal's field message key, or the error itself when it is no refusal. */
async function refusalOf(work: Promise<unknown>): Promise<string> {
  const err = await work.then(
    () => null,
    (e: unknown) => e,
  );
  if (!(err instanceof AppError)) throw new Error(`expected a refusal, got ${String(err)}`);
  return `${err.code} ${err.messageKey}`;
}

const ACTIVE_PDFS = [
  ['JavaScript named /S/J#61vaScript /J#53', pdfEscapedJavaScript],
  ['a launch action named /S/L#61unch', pdfEscapedLaunch],
  ['an attachment under /Embedded#46iles', pdfEscapedEmbeddedFile],
  ['JavaScript inside a compressed object stream', pdfActionInObjectStream],
] as const;

describe('PDF rebuild', () => {
  it.each(ACTIVE_PDFS)('%s: the fixture is active, and no byte scan sees it', async (_name, make) => {
    const bytes = make();
    // What a reader runs (parsed, names decoded, object streams opened)…
    expect(await activeContentOf(bytes)).not.toEqual([]);
    // …under names no byte pattern of the old check matched.
    expect(['/JavaScript', '/JS ', '/Launch', '/EmbeddedFile'].filter((mark) => bytes.includes(mark))).toEqual([]);
  });

  it('the object-stream fixture keeps its action compressed: not even the word is in the bytes', () => {
    const bytes = pdfActionInObjectStream();
    expect(bytes.includes('/ObjStm')).toBe(true);
    expect(bytes.includes('JavaScript')).toBe(false);
  });

  it.each(ACTIVE_PDFS)('%s: rebuilt without anything active, the page kept', async (_name, make) => {
    const rebuilt = await rebuildPdf(make());
    expect(await activeContentOf(rebuilt)).toEqual([]);
    expect(await pageTextOf(rebuilt)).toEqual([expect.stringContaining('(PASSPORT 4567) Tj')]);
    expect(Buffer.from(rebuilt).includes('evil')).toBe(false);
  });

  it.each(ACTIVE_PDFS)('%s: checkFile stores the rebuilt copy (in a worker), never the original', async (_name, make) => {
    const original = make();
    const checked = await checkFile(await received(original), { owner: 'test' });
    expect(checked).toMatchObject({ mime: 'application/pdf', ext: 'pdf', reencoded: false });
    expect(checked.path).not.toBe(path.join(dir, `${made - 1}.bin`));
    const stored = await readFile(checked.path);
    expect(stored.equals(original)).toBe(false);
    expect(checked.size).toBe(stored.length);
    expect(await activeContentOf(stored)).toEqual([]);
    expect(await pageTextOf(stored)).toEqual([expect.stringContaining('(PASSPORT 4567) Tj')]);
  });

  it('keeps a plain PDF readable: same pages, same size of page', async () => {
    const checked = await checkFile(await received(pdfOfPages(3)), { owner: 'test' });
    const stored = await readFile(checked.path);
    expect(await activeContentOf(stored)).toEqual([]);
    expect(await pageTextOf(stored)).toHaveLength(3);
  });

  it('refuses an encrypted, an unreadable and a too long PDF with their reasons', async () => {
    expect(await refusalOf(checkFile(await received(pdfEncrypted()), { owner: 'test' }))).toBe('file_refused files.pdf_unreadable');
    expect(await refusalOf(checkFile(await received(Buffer.from('%PDF-1.7\nnothing else at all\n')), { owner: 'test' }))).toBe(
      'file_refused files.pdf_unreadable',
    );
    expect(await refusalOf(checkFile(await received(pdfOfPages(51)), { owner: 'test' }))).toBe('file_refused files.pdf_too_many_pages');
    const fifty = await checkFile(await received(pdfOfPages(50)), { owner: 'test' });
    expect(await pageTextOf(await readFile(fifty.path))).toHaveLength(50);
  });

  it('an object stream that inflates to 1 GB: stopped at the decoding cap, the page kept', async () => {
    const bomb = await pdfObjectStreamBomb(1024);
    expect(bomb.length).toBeLessThan(2 * 1024 * 1024);
    const started = process.cpuUsage();
    const checked = await checkFile(await received(bomb), { owner: 'test' });
    const cpu = process.cpuUsage(started);
    expect(await pageTextOf(await readFile(checked.path))).toHaveLength(1);
    // Whole-process CPU (the worker's included): inflating the gigabyte took ~9 s of it here.
    expect((cpu.user + cpu.system) / 1000).toBeLessThan(3000);
  });

  it('a script in the page dictionary itself (/AA) or the minimal fixture with /OpenAction: gone', async () => {
    const checked = await checkFile(await received(pdf('/AA << /O << /S /JavaScript /JS (app.alert(1)) >> >> ')), { owner: 'test' });
    expect(await activeContentOf(await readFile(checked.path))).toEqual([]);
  });
});

describe('picture cost', () => {
  it('refuses a 49-megapixel WebP by its header, before decoding it', async () => {
    const huge = await hugeWebp();
    const started = process.cpuUsage();
    const refusal = await refusalOf(checkFile(await received(huge), { owner: 'test' }));
    const cpu = process.cpuUsage(started);
    expect(refusal).toBe('file_refused files.too_many_pixels');
    // CPU time of the whole process (libvips threads included), not wall time: load does not move it.
    // Decoding and re-encoding these 49 MP took ~3 s of it here; reading a header takes milliseconds.
    expect((cpu.user + cpu.system) / 1000).toBeLessThan(1000);
  });

  it('keeps a picture within the cap, shrunk to the longest side allowed', async () => {
    const wide = await sharp({ create: { width: 6000, height: 3000, channels: 3, background: '#bf616a' } })
      .jpeg()
      .toBuffer();
    const checked = await checkFile(await received(wide), { owner: 'test' });
    const meta = await sharp(checked.path).metadata();
    expect([meta.format, meta.width, meta.height]).toEqual(['jpeg', MAX_SIDE, MAX_SIDE / 2]);
  });
});
