import { createRequire } from 'node:module';
import { PDFArray, PDFDict, PDFDocument, PDFName, PDFNull, PDFRef, PDFStream, type PDFContext, type PDFObject } from 'pdf-lib';

/** A document or a chat attachment has a few pages; a 10 MB file of thousands costs minutes to copy. */
export const PDF_MAX_PAGES = 50;

/**
 * The most one stream may decode to. Parsing decodes object streams (and cross-reference
 * streams) whole, with no limit of pdf-lib's own: a 1 MB object stream of spaces inflated to
 * 1 GB and took 9 s. Object streams hold small dictionaries: 64 MB is far more than any real one.
 */
const MAX_DECODED_BYTES = 64 * 1024 * 1024;

/**
 * Every pdf-lib decoder (Flate, LZW, ASCII85, …) grows its output through DecodeStream's
 * ensureBuffer: refusing a size there stops a decompression bomb before it takes the memory
 * (pdf-lib then drops that object stream as unreadable). pdf-lib exports no hook for it; the
 * class is the one its parser uses (the same CommonJS module).
 */
type TDecodeStreamClass = { prototype: { ensureBuffer(this: unknown, requested: number): Uint8Array } };
const DecodeStream = (createRequire(import.meta.url)('pdf-lib/cjs/core/streams/DecodeStream.js') as { default: TDecodeStreamClass }).default;
const ensureBuffer = DecodeStream.prototype.ensureBuffer;
DecodeStream.prototype.ensureBuffer = function ensureBoundedBuffer(requested: number) {
  if (requested > MAX_DECODED_BYTES) throw new PdfRefused('unreadable');
  return ensureBuffer.call(this, requested);
};

export type TPdfRefusal = 'unreadable' | 'too_many_pages';

export class PdfRefused extends Error {
  readonly reason: TPdfRefusal;
  constructor(reason: TPdfRefusal) {
    super(`pdf refused: ${reason}`);
    this.reason = reason;
  }
}

/**
 * What a page keeps: what it shows, nothing it does. Annotations (links, widgets, multimedia),
 * additional actions (/AA: on open, on close), thumbnails, article beads and structure are left
 * behind. Parent stays until the copy, which reads inherited attributes through it.
 */
const PAGE_KEYS = new Set(['Type', 'Parent', 'Contents', 'Resources', 'MediaBox', 'CropBox', 'BleedBox', 'TrimBox', 'ArtBox', 'Rotate', 'Group', 'UserUnit']);

/** Keys that only ever trigger or hold active content; dropped from any dictionary. */
const ACTIVE_KEYS = new Set(['AA', 'OpenAction', 'Annots', 'AcroForm', 'JS', 'JavaScript', 'EmbeddedFiles', 'EF', 'RichMediaContent', 'XFA']);

/** Action types (ISO 32000 §12.6.4): none is needed to show a page. */
const ACTION_TYPES = new Set([
  'GoTo',
  'GoToR',
  'GoToE',
  'GoToDp',
  'Launch',
  'Thread',
  'URI',
  'Sound',
  'Movie',
  'Hide',
  'Named',
  'SubmitForm',
  'ResetForm',
  'ImportData',
  'JavaScript',
  'SetOCGState',
  'Rendition',
  'Trans',
  'GoTo3DView',
  'RichMediaExecute',
]);
const ACTION_KEYS = new Set(['JS', 'EF']);
const ACTIVE_TYPES = new Set(['Action', 'Filespec', 'EmbeddedFile', 'RichMedia', 'RichMediaContent']);

/**
 * A PDF rebuilt from its pages: a new document whose catalog has nothing but the page tree (no
 * /OpenAction, /Names with JavaScript or embedded files, /AcroForm, /AA, outlines), whose pages
 * keep only what they show (PAGE_KEYS), and where any action, file specification or embedded
 * file that a kept object still points at is cut out. The parser resolves object streams and
 * hex-escaped names (`/J#61vaScript` is /JavaScript here), so nothing is matched on raw bytes.
 * Throws PdfRefused for an encrypted, unreadable or too long document.
 */
export async function rebuildPdf(bytes: Uint8Array, maxPages = PDF_MAX_PAGES): Promise<Uint8Array> {
  let source: PDFDocument;
  try {
    // Encrypted documents throw here (ignoreEncryption is off): their content cannot be rewritten.
    source = await PDFDocument.load(bytes, { updateMetadata: false });
  } catch {
    throw new PdfRefused('unreadable');
  }
  let count: number;
  try {
    count = source.getPageCount();
  } catch {
    throw new PdfRefused('unreadable');
  }
  if (count === 0) throw new PdfRefused('unreadable');
  if (count > maxPages) throw new PdfRefused('too_many_pages');
  try {
    for (const page of source.getPages()) {
      for (const key of page.node.keys()) if (!PAGE_KEYS.has(key.decodeText())) page.node.delete(key);
    }
    const rebuilt = await PDFDocument.create({ updateMetadata: false });
    const pages = await rebuilt.copyPages(source, source.getPageIndices());
    for (const page of pages) rebuilt.addPage(page);
    removeActiveContent(rebuilt.context);
    return await rebuilt.save({ useObjectStreams: false });
  } catch {
    throw new PdfRefused('unreadable');
  }
}

/** A name as a reader sees it: `#xx` escapes decoded, in either case of hex digit. */
export function nameOf(name: PDFName): string {
  return name.decodeText().replace(/#([0-9a-fA-F]{2})/g, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)));
}

function dictOf(object: PDFObject | undefined): PDFDict | undefined {
  if (object instanceof PDFDict) return object;
  if (object instanceof PDFStream) return object.dict;
  return undefined;
}

/** An action, a file specification or an embedded file, however its names are spelled. */
export function isActive(dict: PDFDict): boolean {
  const type = dict.get(PDFName.of('Type'));
  if (type instanceof PDFName && ACTIVE_TYPES.has(nameOf(type))) return true;
  const subtype = dict.get(PDFName.of('S'));
  if (subtype instanceof PDFName && ACTION_TYPES.has(nameOf(subtype))) return true;
  // A JavaScript action's script, a file specification's embedded streams.
  return dict.keys().some((key) => ACTION_KEYS.has(nameOf(key)));
}

/**
 * Deletes every active object of the new document, and every reference to one, in each
 * dictionary and array that remains (a font or an image that points at an action keeps working).
 */
function removeActiveContent(context: PDFContext): void {
  const active = new Set<PDFRef>();
  for (const [ref, object] of context.enumerateIndirectObjects()) {
    const dict = dictOf(object);
    if (dict && isActive(dict)) active.add(ref);
  }
  for (const ref of active) context.delete(ref);
  const isDead = (value: PDFObject | undefined): boolean => {
    if (value instanceof PDFRef) return active.has(value);
    const dict = dictOf(value);
    return dict !== undefined && isActive(dict);
  };
  const clean = (object: PDFObject): void => {
    const dict = dictOf(object);
    if (dict) {
      for (const [key, value] of dict.entries()) {
        if (ACTIVE_KEYS.has(nameOf(key)) || isDead(value)) dict.delete(key);
        else clean(value);
      }
    } else if (object instanceof PDFArray) {
      for (let i = 0; i < object.size(); i++) {
        const value = object.get(i);
        if (isDead(value)) object.set(i, PDFNull);
        else clean(value);
      }
    }
  };
  for (const [, object] of context.enumerateIndirectObjects()) clean(object);
}
