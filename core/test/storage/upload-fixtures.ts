import { constants, createDeflate, deflateSync } from 'node:zlib';
import { decodePDFRawStream, PDFArray, PDFDict, PDFDocument, PDFName, PDFRawStream, PDFStream } from 'pdf-lib';
import sharp from 'sharp';

/** Test files, made by the tests: nothing binary lives in the repository. */

/** A JPEG carrying EXIF with camera data and a GPS position, as phones write them. */
export async function jpegWithGps(width = 320, height = 200): Promise<Buffer> {
  return sharp({ create: { width, height, channels: 3, background: '#4d8887' } })
    .jpeg()
    .withExif({
      IFD0: { Make: 'SpyPhone', Model: 'X1', Copyright: 'SECRET-OWNER-NAME' },
      IFD3: { GPSLatitudeRef: 'N', GPSLatitude: '55/1 45/1 21/1', GPSLongitudeRef: 'E', GPSLongitude: '37/1 37/1 4/1' },
    })
    .toBuffer();
}

export async function png(width = 200, height = 120): Promise<Buffer> {
  return sharp({ create: { width, height, channels: 3, background: '#bf616a' } })
    .png()
    .toBuffer();
}

export async function webp(): Promise<Buffer> {
  return sharp({ create: { width: 64, height: 64, channels: 3, background: '#a3be8c' } })
    .webp()
    .toBuffer();
}

/** 7000×7000 (49 megapixels) in a few bytes: lossless, one colour. Re-encoding it cost seconds of CPU. */
export async function hugeWebp(): Promise<Buffer> {
  return sharp({ create: { width: 7000, height: 7000, channels: 3, background: '#a3be8c' } })
    .webp({ lossless: true, effort: 0 })
    .toBuffer();
}

/** A minimal, valid one-page PDF. */
export function pdf(extra = ''): Buffer {
  return Buffer.from(
    `%PDF-1.4\n1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj\n2 0 obj << /Type /Pages /Kids [3 0 R] /Count 1 >> endobj\n` +
      `3 0 obj << /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] ${extra}>> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n`,
    'latin1',
  );
}

/** What `file` says of a Windows program: MZ header, PE signature. Named .jpg by the tests. */
export function windowsExecutable(): Buffer {
  const exe = Buffer.alloc(1024);
  exe.write('MZ', 0, 'latin1');
  exe.writeUInt32LE(0x80, 0x3c);
  exe.write('PE\0\0', 0x80, 'latin1');
  exe.writeUInt16LE(0x14c, 0x84);
  return exe;
}

/** A real JPEG with a web page appended: opens as a picture, and as HTML when sniffed. */
export async function jpegHtmlPolyglot(): Promise<Buffer> {
  return Buffer.concat([await jpegWithGps(), Buffer.from('<html><script>alert(document.cookie)</script></html>')]);
}

/** A real PNG with a ZIP archive appended (the end record a ZIP reader looks for). */
export async function pngZipPolyglot(): Promise<Buffer> {
  const eocd = Buffer.alloc(22);
  eocd.write('PK\x05\x06', 0, 'latin1');
  return Buffer.concat([await png(), Buffer.from('PK\x03\x04payload', 'latin1'), eocd]);
}

/** A HEIC header (ftyp heic), what iPhones send by default. */
export function heicHeader(): Buffer {
  const box = Buffer.alloc(64);
  box.writeUInt32BE(24, 0);
  box.write('ftypheic', 4, 'latin1');
  box.write('mif1heic', 16, 'latin1');
  return box;
}

export type TPart = { name: string; value: string } | { name: string; filename: string; content: Buffer; type?: string };

/** A multipart/form-data body, built by hand so tests control every byte and header. */
export function multipart(parts: TPart[]): { payload: Buffer; headers: Record<string, string> } {
  const boundary = `----obmen${Math.random().toString(16).slice(2)}`;
  const chunks: Buffer[] = [];
  for (const part of parts) {
    if ('value' in part) {
      chunks.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${part.name}"\r\n\r\n${part.value}\r\n`));
    } else {
      chunks.push(
        Buffer.from(
          `--${boundary}\r\nContent-Disposition: form-data; name="${part.name}"; filename="${part.filename}"\r\nContent-Type: ${part.type ?? 'application/octet-stream'}\r\n\r\n`,
        ),
        part.content,
        Buffer.from('\r\n'),
      );
    }
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  const payload = Buffer.concat(chunks);
  return { payload, headers: { 'content-type': `multipart/form-data; boundary=${boundary}`, 'content-length': String(payload.length) } };
}

/**
 * A PDF written object by object, so each test controls every name: `objects[n - 1]` is object
 * n (1-based, no holes), object 1 the catalog. Objects numbered in `compressed` go into one
 * FlateDecode object stream (/Type/ObjStm, PDF 1.5), indexed by an xref stream, as Acrobat and
 * most producers write them now; the others are plain, indexed by a classic xref table.
 */
export function buildPdf(objects: string[], options: { compressed?: number[]; trailer?: string } = {}): Buffer {
  const compressed = new Set(options.compressed ?? []);
  const chunks: Buffer[] = [Buffer.from('%PDF-1.7\n%\xe2\xe3\xcf\xd3\n', 'latin1')];
  let length = chunks[0]!.length;
  const write = (text: string | Buffer) => {
    const chunk = typeof text === 'string' ? Buffer.from(text, 'latin1') : text;
    chunks.push(chunk);
    length += chunk.length;
  };
  const offsets = new Map<number, number>();
  objects.forEach((body, index) => {
    const number = index + 1;
    if (compressed.has(number)) return;
    offsets.set(number, length);
    write(`${number} 0 obj\n${body}\nendobj\n`);
  });
  if (!compressed.size) {
    const xrefAt = length;
    const rows = [...Array(objects.length).keys()].map((i) => `${String(offsets.get(i + 1)).padStart(10, '0')} 00000 n \n`).join('');
    write(`xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${rows}`);
    write(`trailer\n<< /Size ${objects.length + 1} /Root 1 0 R ${options.trailer ?? ''}>>\nstartxref\n${xrefAt}\n%%EOF\n`);
    return Buffer.concat(chunks);
  }
  const inStream = [...compressed].sort((a, b) => a - b);
  const streamNumber = objects.length + 1;
  const xrefNumber = objects.length + 2;
  let header = '';
  let bodies = '';
  for (const number of inStream) {
    header += `${number} ${bodies.length} `;
    bodies += `${objects[number - 1]}\n`;
  }
  const packed = deflateSync(Buffer.from(header + bodies, 'latin1'));
  offsets.set(streamNumber, length);
  write(`${streamNumber} 0 obj\n<< /Type /ObjStm /N ${inStream.length} /First ${header.length} /Filter /FlateDecode /Length ${packed.length} >>\nstream\n`);
  write(packed);
  write('\nendstream\nendobj\n');
  offsets.set(xrefNumber, length);
  const rows: Buffer[] = [];
  const row = (type: number, field2: number, field3: number) => {
    const entry = Buffer.alloc(7);
    entry.writeUInt8(type, 0);
    entry.writeUInt32BE(field2, 1);
    entry.writeUInt16BE(field3, 5);
    rows.push(entry);
  };
  row(0, 0, 65535);
  for (let number = 1; number <= xrefNumber; number++) {
    if (compressed.has(number)) row(2, streamNumber, inStream.indexOf(number));
    else row(1, offsets.get(number)!, 0);
  }
  const xref = deflateSync(Buffer.concat(rows));
  write(
    `${xrefNumber} 0 obj\n<< /Type /XRef /Size ${xrefNumber + 1} /W [1 4 2] /Root 1 0 R /Filter /FlateDecode /Length ${xref.length} ${options.trailer ?? ''}>>\nstream\n`,
  );
  write(xref);
  write(`\nendstream\nendobj\nstartxref\n${offsets.get(xrefNumber)}\n%%EOF\n`);
  return Buffer.concat(chunks);
}

/** A page that shows something (a line of text), so a rebuilt copy can be told to keep it. */
const PAGE_TEXT = 'BT /F1 18 Tf 20 100 Td (PASSPORT 4567) Tj ET';
const pageContent = `<< /Length ${PAGE_TEXT.length} >>\nstream\n${PAGE_TEXT}\nendstream`;
const FONT = '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>';

/**
 * A one-page PDF whose every trigger runs `action` (object 4): on open (/OpenAction), on the
 * page's open (/AA /O), and from a link annotation covering the page (/Annots, /A). Objects:
 * 1 catalog, 2 pages, 3 page, 4 the action, 5 the link, 6 the content, 7 the font, then `more`.
 */
function pdfRunning(action: string, options: { catalog?: string; more?: string[]; compressed?: number[] } = {}): Buffer {
  return buildPdf(
    [
      `<< /Type /Catalog /Pages 2 0 R /OpenAction 4 0 R ${options.catalog ?? ''}>>`,
      '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
      '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 300 200] /Contents 6 0 R /Resources << /Font << /F1 7 0 R >> >> /AA << /O 4 0 R >> /Annots [5 0 R] >>',
      action,
      '<< /Type /Annot /Subtype /Link /Rect [0 0 300 200] /A 4 0 R >>',
      pageContent,
      FONT,
      ...(options.more ?? []),
    ],
    { compressed: options.compressed },
  );
}

/** JavaScript with its names hex-escaped (ISO 32000 §7.3.5): /S/JavaScript /JS, read as such by every reader. */
export const pdfEscapedJavaScript = () => pdfRunning('<< /S/J#61vaScript /J#53 (app.alert\\(document.cookie\\)) >>');

/** A launch action (runs a program) with its name escaped. */
export const pdfEscapedLaunch = () => pdfRunning('<< /S/L#61unch /F (C:\\\\Windows\\\\System32\\\\cmd.exe) /Win << /F (cmd.exe) >> >>');

/**
 * An attached executable: the catalog's name tree /EmbeddedFiles (escaped), a file
 * specification (object 8) and the embedded file stream (object 9), and an action that opens it.
 */
export function pdfEscapedEmbeddedFile(): Buffer {
  const payload = 'MZ\x90\x00 evil program';
  return pdfRunning('<< /S /Go#54oE /NewWindow true /T << /R /C /N (evil.exe) >> >>', {
    catalog: '/Names << /Embedded#46iles << /Names [(evil.exe) 8 0 R] >> >> ',
    more: [
      '<< /Type /F#69lespec /F (evil.exe) /UF (evil.exe) /E#46 << /F 9 0 R >> >>',
      `<< /Type /Embedded#46ile /Length ${payload.length} >>\nstream\n${payload}\nendstream`,
    ],
  });
}

/** Plain-named JavaScript, but inside a compressed object stream: no byte of its names is in the file. */
export const pdfActionInObjectStream = () =>
  pdfRunning('<< /S /JavaScript /JS (app.launchURL\\("http://evil.example/"\\)) >>', { compressed: [1, 2, 3, 4, 5] });

/**
 * A valid one-page PDF plus an object stream of `decodedMb` MB of spaces, compressed about a
 * thousand to one (a 1 GB stream is 1 MB in the file). Deflated in 1 MB steps: the test never
 * holds the decoded bytes.
 */
export async function pdfObjectStreamBomb(decodedMb: number): Promise<Buffer> {
  const deflate = createDeflate({ level: constants.Z_BEST_COMPRESSION });
  const packed: Buffer[] = [];
  deflate.on('data', (chunk: Buffer) => packed.push(chunk));
  const done = new Promise((resolve) => deflate.on('end', resolve));
  const mb = Buffer.alloc(1024 * 1024, 0x20);
  for (let i = 0; i < decodedMb; i++) if (!deflate.write(mb)) await new Promise((resolve) => deflate.once('drain', resolve));
  deflate.end();
  await done;
  const stream = Buffer.concat(packed);
  const pdf = pdfOfPages(1).toString('latin1');
  const at = pdf.indexOf('\nxref\n') + 1;
  return Buffer.concat([
    Buffer.from(`${pdf.slice(0, at)}9 0 obj\n<< /Type /ObjStm /N 1 /First 4 /Filter /FlateDecode /Length ${stream.length} >>\nstream\n`, 'latin1'),
    stream,
    Buffer.from(`\nendstream\nendobj\n${pdf.slice(at)}`, 'latin1'),
  ]);
}

/** A PDF of `count` empty pages. */
export function pdfOfPages(count: number): Buffer {
  const kids = [...Array(count).keys()].map((i) => `${i + 3} 0 R`).join(' ');
  return buildPdf([
    '<< /Type /Catalog /Pages 2 0 R >>',
    `<< /Type /Pages /Kids [${kids}] /Count ${count} >>`,
    ...Array.from({ length: count }, () => '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] >>'),
  ]);
}

/** A password-protected PDF (its /Encrypt dictionary; the content is never reached). */
export const pdfEncrypted = () =>
  buildPdf(
    [
      '<< /Type /Catalog /Pages 2 0 R >>',
      '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
      '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] >>',
      '<< /Filter /Standard /V 2 /R 3 /Length 128 /O <00> /U <00> /P -4 >>',
    ],
    {
      trailer: '/Encrypt 4 0 R /ID [<0123456789abcdef0123456789abcdef> <0123456789abcdef0123456789abcdef>] ',
    },
  );

const ACTION_NAMES = new Set(['JavaScript', 'Launch', 'GoToE', 'GoToR', 'ImportData', 'SubmitForm', 'URI', 'RichMediaExecute', 'Rendition']);
const ACTIVE_KEYS = new Set(['JS', 'JavaScript', 'EmbeddedFiles', 'EF', 'OpenAction', 'AA', 'Annots', 'AcroForm', 'Names']);
const ACTIVE_TYPES = new Set(['Action', 'Filespec', 'EmbeddedFile', 'Annot']);

/**
 * What a reader could run or open in a PDF, found by parsing it (pdf-lib decodes object streams
 * and escaped names), never by matching bytes: every object, every nested dictionary.
 */
export async function activeContentOf(bytes: Uint8Array): Promise<string[]> {
  const doc = await PDFDocument.load(bytes, { updateMetadata: false });
  const found: string[] = [];
  const name = (value: unknown) =>
    value instanceof PDFName ? value.decodeText().replace(/#([0-9a-f]{2})/gi, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16))) : null;
  const visit = (object: unknown, where: string) => {
    const dict = object instanceof PDFDict ? object : object instanceof PDFStream ? object.dict : null;
    if (dict) {
      for (const [key, value] of dict.entries()) {
        const keyName = name(key)!;
        if (ACTIVE_KEYS.has(keyName)) found.push(`${where}: /${keyName}`);
        if (keyName === 'S' && ACTION_NAMES.has(name(value) ?? '')) found.push(`${where}: /S /${name(value)}`);
        if (keyName === 'Type' && ACTIVE_TYPES.has(name(value) ?? '')) found.push(`${where}: /Type /${name(value)}`);
        visit(value, `${where}/${keyName}`);
      }
    } else if (object instanceof PDFArray) {
      for (const [i, value] of object.asArray().entries()) visit(value, `${where}[${i}]`);
    }
  };
  for (const [ref, object] of doc.context.enumerateIndirectObjects()) visit(object, ref.toString());
  return found;
}

/** The text a PDF's pages draw (their content streams, decoded). */
export async function pageTextOf(bytes: Uint8Array): Promise<string[]> {
  const doc = await PDFDocument.load(bytes, { updateMetadata: false });
  return doc.getPages().map((page) => {
    const contents = page.node.Contents();
    const streams = contents instanceof PDFArray ? contents.asArray().map((ref) => doc.context.lookup(ref)) : [contents];
    return streams.map((stream) => (stream instanceof PDFRawStream ? Buffer.from(decodePDFRawStream(stream).decode()).toString('latin1') : '')).join('');
  });
}
