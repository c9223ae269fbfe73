/*
 * Request ids and what logs may hold (both services and the site's server code). The BFF gives
 * every request an id (or keeps a sane one from the client), sends it to the core in
 * `x-request-id` and returns it to the client; the core logs under the same `reqId`.
 */

export const REQUEST_ID_HEADER = 'x-request-id';

/** A client's id is kept only when it is a short token of safe characters: nothing to forge a log line with. */
const SANE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,64}$/;

export function isSaneRequestId(value: unknown): value is string {
  return typeof value === 'string' && SANE_REQUEST_ID.test(value);
}

/**
 * pino `redact` paths: the secrets that could reach a log line as a header or as a field of a
 * logged object (a session cookie or token, passwords, one-time tokens, document and card numbers).
 */
const SECRET_FIELDS = ['password', 'current_password', 'new_password', 'token', 'number', 'document_number', 'card_number', 'cookie', 'authorization'];
export const LOG_REDACT_PATHS = [
  'req.headers.cookie',
  'req.headers.authorization',
  'req.headers["x-obmen-session-token"]',
  'res.headers["set-cookie"]',
  'res.headers["x-obmen-session-token"]',
  // Plugins log their own options with the request's headers (@fastify/multipart at trace).
  '*.headers.cookie',
  '*.headers.authorization',
  '*.headers["x-obmen-session-token"]',
  ...SECRET_FIELDS,
  ...SECRET_FIELDS.map((field) => `*.${field}`),
];

/** A 43-character base64url token (sessions, mailed links) as a path segment or a query value. */
const TOKEN_IN_URL = /(?<=[/=])[A-Za-z0-9_-]{43}(?=$|[/?&#])/g;

/** A request URL as logs may show it: mailed-link tokens (/api/auth/reset/T, ?token=T) masked. */
export function redactUrl(url: string): string {
  return url.replace(TOKEN_IN_URL, '[redacted]');
}

/** What the site's server code logs through: the BFF's request logger (pino) fits it. */
type TLogFn = (obj: object, msg: string) => void;
export type TPageLog = { error: TLogFn; warn: TLogFn; info: TLogFn };

/** pino's request serializer as Fastify's default, with the URL's tokens masked. */
export function serializeRequestForLog(req: { method: string; url: string; host?: string; ip?: string }) {
  return { method: req.method, url: redactUrl(req.url), host: req.host, remoteAddress: req.ip };
}

/**
 * The pino options both services share: their level, the service on every line (one log stream
 * may hold both), the redactions and the request serializer. `stream`: where the lines go; the
 * servers give `pino.destination({ sync: false })`: a line is written when the previous write
 * is done, the lines of a busy moment in one write (pino's default, a write per line as it is
 * made, cost the BFF about a tenth of its CPU per proxied call; pino flushes what is left at exit).
 */
export function loggerOptions(level: string, service: 'core' | 'bff' | 'site', stream?: { write(line: string): unknown }) {
  return { level, base: { service }, redact: LOG_REDACT_PATHS, serializers: { req: serializeRequestForLog }, ...(stream ? { stream } : {}) };
}

/** What oneLineRequestLogs changes of Fastify's LogController (shared does not depend on Fastify). */
type TRequestLogController = {
  isLogDisabled(request: unknown): boolean;
  incomingRequest(request: unknown, reply: unknown): void;
  requestCompleted(error: unknown, request: unknown, reply: unknown): void;
};
type TLineLog = { info(obj: object, msg: string): void; error(obj: object, msg: string): void };
type TRootLog = TLineLog & { child(bindings: object, options: { redact: string[] }): TLineLog };
type TAnsweredReply = { elapsedTime: number; log: TLineLog; server: { log: TRootLog } };

/**
 * The access line's own logger: the root one without redaction. Pino's redaction walks every one
 * of LOG_REDACT_PATHS on every line (about 16 µs a line here, most of what the line costs); an
 * access line holds only what the serializers take (method, URL with its tokens masked, host,
 * address, status, time), so there is nothing in it to redact.
 */
const accessLogs = new WeakMap<TRootLog, TLineLog>();
function accessLogOf(root: TRootLog): TLineLog {
  const known = accessLogs.get(root);
  if (known) return known;
  const log = root.child({}, { redact: [] });
  accessLogs.set(root, log);
  return log;
}

/** One access line: what Fastify's serializers take of the request and the answer, and the time. */
export type TAccessLine = {
  reqId: string;
  req: unknown;
  res: { statusCode: number };
  responseTime: number;
};

/** The access line of an answered request, also of one answered before Fastify (the BFF's front door). */
export function writeAccessLine(root: TRootLog, line: TAccessLine): void {
  accessLogOf(root).info(line, 'request completed');
}

/**
 * Fastify's LogController made to write ONE access line per request, when it has been answered
 * (method, URL, status, time), instead of two (incoming, completed): each log line is a large
 * part of what a proxied call costs the BFF. A failed request's line carries the error and goes
 * through the redacting logger.
 */
export function oneLineRequestLogs<T extends TRequestLogController>(controller: T): T {
  controller.incomingRequest = () => {};
  controller.requestCompleted = (error, request, reply) => {
    if (controller.isLogDisabled(request)) return;
    const answered = reply as TAnsweredReply;
    if (error) {
      answered.log.error({ req: request, res: reply, err: error, responseTime: answered.elapsedTime }, 'request errored');
      return;
    }
    const reqId = (request as { id: string }).id;
    writeAccessLine(answered.server.log, { reqId, req: request, res: reply as { statusCode: number }, responseTime: answered.elapsedTime });
  };
  return controller;
}
