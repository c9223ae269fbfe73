import { ZApiError } from '@obmen/shared/envelope';
import { buildPath, CALLS, checkAnswer, type TAnswer, type TAnyCall, type TCall, type TCallInput, type TEncoding, type TLooseInput } from '@obmen/shared/calls';
import { applyEnvelope } from './envelope.ts';
import { clientMessage } from './client-i18n.ts';
import { VALIDATE_ANSWERS } from './answer-checks.ts';

/** For the scripts that load this module lazily (the boot script stays free of the schemas). */
export { CALLS };

export class ApiError extends Error {
  readonly status: number;
  readonly code: string;
  readonly fields: Record<string, string>;
  /** The whole error answer: some carry more than the message (a refused quote brings a fresh one). */
  readonly body: unknown;
  constructor(status: number, code: string, message: string, fields: Record<string, string> = {}, body: unknown = null) {
    super(message);
    this.status = status;
    this.code = code;
    this.fields = fields;
    this.body = body;
  }
}

export type TApiOptions = {
  /** Money-moving calls: one key per submitted form, so a retry cannot apply twice. */
  idempotencyKey?: string;
  signal?: AbortSignal;
};

/** A call's arguments: the input it needs (nothing for a bare GET) and the options. */
export type TApiArgs<C extends TAnyCall> = object extends TCallInput<C> ? [input?: TCallInput<C> & TApiOptions] : [input: TCallInput<C> & TApiOptions];

/**
 * Did a money-moving call perhaps go through? No answer, or the BFF's 502/503/504: the client
 * must send it again with the same Idempotency-Key (the core replays the first outcome).
 */
export function isOutcomeUnknown(err: unknown): boolean {
  return err instanceof ApiError && (err.status === 0 || err.status === 502 || err.status === 503 || err.status === 504);
}

/**
 * The one way the browser talks to /api: a declared call (shared/src/calls.ts) with its input;
 * applies the envelope to the stores and turns every failure into an ApiError whose message is
 * already in the user's language. The answer is typed by the call's schema (and checked against
 * it outside production).
 */
export async function api<C extends TAnyCall>(call: C, ...[input]: TApiArgs<C>): Promise<TAnswer<C>> {
  const given: TLooseInput & TApiOptions = input ?? {};
  const headers: Record<string, string> = { accept: 'application/json' };
  let body: BodyInit | undefined;
  if (given.body !== undefined) {
    if (encodingOf(call) === 'form' && typeof given.body === 'object' && given.body !== null) body = toForm(given.body);
    else {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(given.body);
    }
  }
  if (given.idempotencyKey) headers['idempotency-key'] = given.idempotencyKey;
  let response: Response;
  try {
    response = await fetch(buildPath(call, given), {
      method: call.method,
      headers,
      body: body ?? null,
      credentials: 'same-origin',
      signal: given.signal ?? null,
    });
  } catch (err) {
    if ((err as Error).name === 'AbortError') throw err;
    throw new ApiError(0, 'network', clientMessage('error.network'));
  }
  const data: unknown = await response.json().catch(() => null);
  if (data && typeof data === 'object') applyEnvelope(data);
  if (response.ok) {
    checkAnswer(call, data, VALIDATE_ANSWERS);
    return data;
  }
  const error = ZApiError.safeParse(data);
  if (error.success) throw new ApiError(response.status, error.data.code, error.data.message, error.data.fields, data);
  throw new ApiError(response.status, 'unknown', clientMessage('error.generic'), {}, data);
}

/** How a call sends its body (JSON unless declared a form). */
function encodingOf(call: TCall): TEncoding {
  return call.encoding ?? 'json';
}

/** A form's fields as sent: the ones left undefined are not. */
function toForm(body: object): URLSearchParams {
  const form = new URLSearchParams();
  for (const [name, value] of Object.entries(body)) if (value !== undefined) form.append(name, String(value));
  return form;
}

/** The signed-in state again (after a realtime resync or an ended session): the envelope updates the stores. */
export function refetchAuthState(): Promise<TAnswer<(typeof CALLS)['GET /api/auth/check']>> {
  return api(CALLS['GET /api/auth/check']);
}
