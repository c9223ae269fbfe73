/**
 * The one application error. `messageKey` is an i18n key: the error handler localizes it for
 * the caller, so services never deal with languages.
 */
export class AppError extends Error {
  readonly code: string;
  readonly statusCode: number;
  readonly messageKey: string;
  readonly vars: Record<string, string | number>;
  /** Field name → i18n key (or an already readable message); localized by the error handler. */
  readonly fields: Record<string, string> | undefined;
  /** Response headers that belong to the error, e.g. Retry-After. */
  readonly headers: Record<string, string> | undefined;

  constructor(
    code: string,
    statusCode: number,
    messageKey: string,
    options: { vars?: Record<string, string | number>; fields?: Record<string, string>; headers?: Record<string, string> } = {},
  ) {
    super(code);
    this.code = code;
    this.statusCode = statusCode;
    this.messageKey = messageKey;
    this.vars = options.vars ?? {};
    this.fields = options.fields;
    this.headers = options.headers;
  }
}

/**
 * What a call can name that may not exist. Each answers 404 with its own code and a message that
 * names it ("This exchange was not found"); another user's entity answers exactly the same.
 */
export const MISSING_ENTITIES = ['article', 'notification', 'exchange', 'exchange_batch', 'account', 'currency', 'document', 'payment_provider'] as const;
export type TMissingEntity = (typeof MISSING_ENTITIES)[number];

/** No route of that method and path: a mistyped call, not a missing entity. */
export const routeNotFound = () => new AppError('route_not_found', 404, 'api.route_not_found');

export const notFoundOf = (entity: TMissingEntity) => new AppError(`${entity}_not_found`, 404, `api.${entity}_not_found`);

/** No valid session: the answer also carries an anonymous `user` (spec §4: the client logs out). */
export const unauthorized = () => new AppError('unauthorized', 401, 'error.unauthorized');
