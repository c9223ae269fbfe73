import { describe, expect, it } from 'vitest';
import { ZTransferBody, ZUserInfoUpdate, ZVisibleText, translate } from '../src/index.ts';

/** Every bidirectional control, in every kind of text other users read. */
const BIDI = ['\u202a', '\u202b', '\u202c', '\u202d', '\u202e', '\u2066', '\u2067', '\u2068', '\u2069', '\u200e', '\u200f', '\u061c'];
const transfer = (comment: string) => ZTransferBody.safeParse({ account_id: '12345674', currency: 'USDT', amount: '1', comment });

describe('ZVisibleText', () => {
  it('refuses each bidirectional control, with a message in both languages', () => {
    for (const char of BIDI) {
      const result = ZVisibleText(140).safeParse(`for rent ${char}1234${char} USDT`);
      expect(result.success, `U+${char.codePointAt(0)!.toString(16)}`).toBe(false);
      expect(result.error!.issues[0]!.message).toBe('validation.bidi_control');
    }
    expect(translate('ru', 'validation.bidi_control')).toMatch(/направления текста/);
    expect(translate('en', 'validation.bidi_control')).toMatch(/text-direction/);
  });

  it('keeps right-to-left scripts, emoji and joiners that change no order', () => {
    for (const text of ['شكرا على التحويل', 'תודה רבה', 'спасибо 👍🏽', 'family 👨‍👩‍👧']) {
      expect(ZVisibleText(140).parse(`  ${text} `)).toBe(text);
    }
  });

  it('is the rule of transfer comments, names and the free-text fields of personal data', () => {
    expect(transfer('rent \u202eTDSU 0001').success).toBe(false);
    expect(transfer('rent for May').success).toBe(true);
    for (const field of ['first_name', 'last_name', 'middle_name', 'city', 'address']) {
      const result = ZUserInfoUpdate.safeParse({ [field]: 'Ann\u2067a' });
      expect(result.success, field).toBe(false);
      expect(result.error!.issues[0]!.message, field).toBe('validation.bidi_control');
    }
  });
});
