import qrcode from 'qrcode-generator';

/** The QR code of `text` as a standalone SVG document (black on white, scalable, a quiet zone of 4 modules). */
export function qrSvg(text: string): string {
  const qr = qrcode(0, 'M');
  qr.addData(text);
  qr.make();
  return qr.createSvgTag({ cellSize: 4, margin: 16, scalable: true });
}
