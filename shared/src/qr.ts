import qrcode from 'qrcode-generator';

/*
 * QR codes drawn as SVG on the server (the TOTP enrolment, the referral link): one library for
 * the project, qrcode-generator. Not in the package index: the browser's islands never draw one.
 */

export type TQrPath = { size: number; path: string };

/**
 * The QR code of `text` as one SVG path (runs of dark modules) in a `size`×`size` box that
 * includes the quiet zone of `quiet` modules around it. `ecc`: the error correction level.
 */
export function qrPath(text: string, { quiet = 4, ecc = 'M' }: { quiet?: number; ecc?: 'L' | 'M' | 'Q' | 'H' } = {}): TQrPath {
  const code = qrcode(0, ecc);
  code.addData(text);
  code.make();
  const n = code.getModuleCount();
  let path = '';
  for (let y = 0; y < n; y++) {
    let x = 0;
    while (x < n) {
      if (!code.isDark(y, x)) {
        x++;
        continue;
      }
      const start = x;
      while (x < n && code.isDark(y, x)) x++;
      path += `M${start + quiet} ${y + quiet}h${x - start}v1h-${x - start}z`;
    }
  }
  return { size: n + quiet * 2, path };
}
