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
