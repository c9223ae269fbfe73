import { ZApiError } from '@obmen/shared/envelope';
import { applyEnvelope } from './envelope.ts';
import { clientMessage } from './client-i18n.ts';

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
  method?: 'GET' | 'POST';
  /** Sent as JSON. */
  json?: unknown;
  /** Sent as form data (the spec's "(form)" calls). */
  form?: Record<string, string> | FormData;
  /** Money-moving calls: one key per submitted form, so a retry cannot apply twice. */
  idempotencyKey?: string;
  signal?: AbortSignal;
};

/**
 * Did a money-moving call perhaps go through? No answer, or the BFF's 502/503/504: the client
 * must send it again with the same Idempotency-Key (the core replays the first outcome).
 */
export function isOutcomeUnknown(err: unknown): boolean {
  return err instanceof ApiError && (err.status === 0 || err.status === 502 || err.status === 503 || err.status === 504);
}

/**
 * The one way the browser talks to /api: applies the envelope to the stores and turns every
 * failure into an ApiError whose message is already in the user's language.
 */
export async function api<T = Record<string, unknown>>(path: string, options: TApiOptions = {}): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json' };
  let body: BodyInit | undefined;
  if (options.json !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(options.json);
  } else if (options.form) {
    body = options.form instanceof FormData ? options.form : new URLSearchParams(options.form);
  }
  if (options.idempotencyKey) headers['idempotency-key'] = options.idempotencyKey;
  let response: Response;
  try {
    response = await fetch(`/api${path}`, {
      method: options.method ?? (body ? 'POST' : 'GET'),
      headers,
      body: body ?? null,
      credentials: 'same-origin',
      signal: options.signal ?? null,
    });
  } catch (err) {
    if ((err as Error).name === 'AbortError') throw err;
    throw new ApiError(0, 'network', clientMessage('error.network'));
  }
  const data: unknown = await response.json().catch(() => null);
  if (data && typeof data === 'object') applyEnvelope(data);
  if (response.ok) return data as T;
  const error = ZApiError.safeParse(data);
  if (error.success) throw new ApiError(response.status, error.data.code, error.data.message, error.data.fields, data);
  throw new ApiError(response.status, 'unknown', clientMessage('error.generic'), {}, data);
}
