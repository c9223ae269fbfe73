/**
 * The one application error. `messageKey` is an i18n key: the error handler localizes it for
 * the caller, so services never deal with languages.
 */
export class AppError extends Error {
  readonly code: string;
  readonly statusCode: number;
  readonly messageKey: string;
  readonly vars: Record<string, string | number>;
  readonly fields: Record<string, string> | undefined;

  constructor(
    code: string,
    statusCode: number,
    messageKey: string,
    options: { vars?: Record<string, string | number>; fields?: Record<string, string> } = {},
  ) {
    super(code);
    this.code = code;
    this.statusCode = statusCode;
    this.messageKey = messageKey;
    this.vars = options.vars ?? {};
    this.fields = options.fields;
  }
}

export const notFound = () => new AppError('not_found', 404, 'error.not_found');
