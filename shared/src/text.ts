import { z } from 'zod';

/**
 * Bidirectional formatting characters (embeddings, overrides, isolates, and the implicit marks
 * LRM, RLM, ALM): invisible, yet they reorder what a reader sees, so "exe.txt" can display as
 * "txt.exe" and a comment can show another account number or amount (Trojan Source,
 * CVE-2021-42574). Refused in any text one user writes and another reads.
 */
export const BIDI_CONTROLS = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;

/**
 * Text a user writes and other users see (transfer comments, names, chat): trimmed, bounded,
 * never carrying bidirectional controls. Every such field builds on this one schema.
 */
export function ZVisibleText(max: number) {
  return z
    .string()
    .trim()
    .max(max, 'validation.too_long')
    .refine((value) => !BIDI_CONTROLS.test(value), { error: 'validation.bidi_control' });
}

/**
 * How one user is named to another (a chat's title, a referral invitation): the first name and
 * the last name's initial ("Иван П."), never the e-mail; null when no first name was given.
 */
export function shortPersonName(first: string | null | undefined, last: string | null | undefined): string | null {
  const given = first?.trim();
  if (!given) return null;
  const initial = last?.trim().slice(0, 1);
  return initial ? `${given} ${initial.toUpperCase()}.` : given;
}
