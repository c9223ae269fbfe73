import { createHmac, timingSafeEqual } from 'node:crypto';
import { WEBHOOK_TOLERANCE_SECONDS } from '@obmen/shared';

export type TSignatureCheck = 'valid' | 'bad_signature' | 'stale';

/** The header a provider sends for `rawBody` at `unixSeconds`: `t=<unix>,v1=<hex HMAC-SHA256 of "t.rawBody">`. */
export function signWebhook(secret: string, rawBody: Buffer, unixSeconds: number): string {
  return `t=${unixSeconds},v1=${hmac(secret, String(unixSeconds), rawBody).toString('hex')}`;
}

function hmac(secret: string, timestamp: string, rawBody: Buffer): Buffer {
  return createHmac('sha256', secret).update(`${timestamp}.`).update(rawBody).digest();
}

/**
 * Checks a signature header against the raw body, byte for byte. Several v1 values are allowed
 * (a provider rotating its secret signs with both). The comparison takes the same time whatever
 * the bytes; the timestamp is checked after the signature, so a forged header learns nothing.
 */
export function checkWebhookSignature(secret: string | undefined, header: string | undefined, rawBody: Buffer, now: Date): TSignatureCheck {
  if (!secret || !header) return 'bad_signature';
  let timestamp: string | undefined;
  const candidates: string[] = [];
  for (const part of header.split(',')) {
    const [name, value] = part.trim().split('=', 2);
    if (name === 't') timestamp = value;
    else if (name === 'v1' && value) candidates.push(value);
  }
  if (!timestamp || !/^\d{1,12}$/.test(timestamp)) return 'bad_signature';
  const expected = hmac(secret, timestamp, rawBody);
  const matches = candidates.some((hex) => {
    if (!/^[0-9a-f]{64}$/i.test(hex)) return false;
    return timingSafeEqual(Buffer.from(hex, 'hex'), expected);
  });
  if (!matches) return 'bad_signature';
  return Math.abs(now.getTime() / 1000 - Number(timestamp)) <= WEBHOOK_TOLERANCE_SECONDS ? 'valid' : 'stale';
}
