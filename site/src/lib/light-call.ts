import type { TAnswer, TCalls } from '@obmen/shared/calls';
import type { TApiError } from '@obmen/shared/envelope';
import { VALIDATE_ANSWERS } from './answer-checks.ts';

/** A declared call sent as a form, whose path has no parameters. */
type TFormCallKey = { [K in keyof TCalls]: TCalls[K] extends { encoding: 'form' } ? (K extends `${string}{${string}` ? never : K) : never }[keyof TCalls];

/** What an error answer may say, read without its schema. */
export type TLightError = Partial<Pick<TApiError, 'code' | 'message' | 'fields'>>;

export type TLightResult<K extends TFormCallKey> = { ok: true; answer: TAnswer<TCalls[K]> } | { ok: false; error: TLightError };

/**
 * A declared form call for a framework-free page script that must stay a few hundred bytes (the
 * home page's quote): what api() does without its weight. The answer is typed by the call's
 * declaration; where answers are checked (VALIDATE_ANSWERS) the declarations are loaded then and
 * the answer held to its schema, so a drift fails loudly; production loads no schema and trusts
 * the answer, as api() does there.
 */
export async function callLight<K extends TFormCallKey>(key: K, form: Record<string, string>, signal?: AbortSignal): Promise<TLightResult<K>> {
  const [method, path] = key.split(' ');
  const response = await fetch(path ?? '', {
    method,
    headers: { accept: 'application/json' },
    body: new URLSearchParams(form),
    credentials: 'same-origin',
    signal: signal ?? null,
  });
  const data: unknown = await response.json().catch(() => null);
  if (!response.ok) return { ok: false, error: errorOf(data) };
  if (VALIDATE_ANSWERS) {
    const calls: typeof import('@obmen/shared/calls') = await import('@obmen/shared/calls');
    calls.checkAnswer(calls.CALLS[key], data, true);
  }
  // Held to its schema above wherever answers are checked; trusted as sent in production, as api() trusts it.
  return { ok: true, answer: data as TAnswer<TCalls[K]> };
}

/** The parts of an error answer a script shows, whatever else it holds. */
function errorOf(data: unknown): TLightError {
  if (data === null || typeof data !== 'object') return {};
  const error: TLightError = {};
  if ('code' in data && typeof data.code === 'string') error.code = data.code;
  if ('message' in data && typeof data.message === 'string') error.message = data.message;
  if ('fields' in data && typeof data.fields === 'object' && data.fields !== null) {
    error.fields = Object.fromEntries(Object.entries(data.fields).filter((entry): entry is [string, string] => typeof entry[1] === 'string'));
  }
  return error;
}
