import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';

export type TCapturedAnswer = { status: number; headers: OutgoingHttpHeaders; chunks: Buffer[] };

/** A chunk given to res.write/end (a Buffer, a string in `encoding`, a Uint8Array), as a Buffer. */
export const toBuffer = (chunk: unknown, encoding?: unknown): Buffer =>
  Buffer.isBuffer(chunk)
    ? chunk
    : typeof chunk === 'string'
      ? Buffer.from(chunk, (typeof encoding === 'string' ? encoding : 'utf8') as BufferEncoding)
      : Buffer.from(chunk as Uint8Array);

const isChunk = (chunk: unknown) => chunk !== undefined && chunk !== null && typeof chunk !== 'function';

/**
 * Tees what a handler (Astro's, which writes to the raw response) sends: `onEnd` gets the
 * status, every header (those of writeHead included) and the body once the answer has ended;
 * `onAbort` runs instead when the response closes without ending (client gone, render failed).
 */
export function captureAnswer(res: ServerResponse, onEnd: (answer: TCapturedAnswer) => void, onAbort: () => void): void {
  let ended = false;
  res.once('close', () => {
    if (!ended) onAbort();
  });
  const chunks: Buffer[] = [];
  let status = 0;
  let written: OutgoingHttpHeaders = {};
  const writeHead = res.writeHead;
  const write = res.write;
  const end = res.end;
  res.writeHead = function (this: ServerResponse, code: number, ...rest: unknown[]) {
    status = code;
    const headers = rest.find((arg) => typeof arg === 'object' && arg !== null);
    if (headers && !Array.isArray(headers)) {
      written = {};
      for (const [name, value] of Object.entries(headers as OutgoingHttpHeaders)) written[name.toLowerCase()] = value;
    }
    return (writeHead as (...args: unknown[]) => ServerResponse).call(this, code, ...rest);
  } as ServerResponse['writeHead'];
  let ending = false;
  res.write = function (this: ServerResponse, chunk: unknown, ...rest: unknown[]) {
    // Some response implementations (light-my-request) end() through write(): count once.
    if (!ending && isChunk(chunk)) chunks.push(toBuffer(chunk, rest[0]));
    return (write as (...args: unknown[]) => boolean).call(this, chunk, ...rest);
  } as ServerResponse['write'];
  res.end = function (this: ServerResponse, chunk?: unknown, ...rest: unknown[]) {
    if (isChunk(chunk)) chunks.push(toBuffer(chunk, rest[0]));
    ending = true;
    ended = true;
    const result = (end as (...args: unknown[]) => ServerResponse).call(this, chunk, ...rest);
    onEnd({ status: status || res.statusCode, headers: { ...res.getHeaders(), ...written }, chunks });
    return result;
  } as ServerResponse['end'];
}
