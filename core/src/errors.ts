import { ROUTE_NOT_FOUND_HEADER, translate, type TI18nKey } from '@obmen/shared';

/**
 * What an error code means: its HTTP status, the i18n key of its message (which may use vars),
 * and the form field it marks by default with the i18n key of the field's message (given the
 * same vars as the message).
 */
type TErrorSpec = { status: number; key: TI18nKey; field?: string; fieldKey?: TI18nKey };

/** The closed set of error codes the core answers with. A new failure adds its code here. */
export const ERRORS = {
  // the request
  validation: { status: 400, key: 'error.validation' },
  bad_request: { status: 400, key: 'error.validation' },
  unauthorized: { status: 401, key: 'error.unauthorized' },
  not_found: { status: 404, key: 'error.not_found' },
  route_not_found: { status: 404, key: 'api.route_not_found' },
  article_not_found: { status: 404, key: 'api.article_not_found' },
  notification_not_found: { status: 404, key: 'api.notification_not_found' },
  exchange_not_found: { status: 404, key: 'api.exchange_not_found' },
  exchange_batch_not_found: { status: 404, key: 'api.exchange_batch_not_found' },
  account_not_found: { status: 404, key: 'api.account_not_found' },
  currency_not_found: { status: 404, key: 'api.currency_not_found' },
  document_not_found: { status: 404, key: 'api.document_not_found' },
  payment_provider_not_found: { status: 404, key: 'api.payment_provider_not_found' },
  payment_not_found: { status: 404, key: 'api.payment_not_found' },
  withdrawal_not_found: { status: 404, key: 'api.withdrawal_not_found' },
  card_not_found: { status: 404, key: 'api.card_not_found' },
  card_issuer_not_found: { status: 404, key: 'api.card_issuer_not_found' },
  chat_not_found: { status: 404, key: 'api.chat_not_found' },
  chat_file_not_found: { status: 404, key: 'api.chat_file_not_found' },
  recruit_not_found: { status: 404, key: 'api.recruit_not_found' },
  invite_code_not_found: { status: 404, key: 'api.invite_code_not_found' },
  ops_request_not_found: { status: 404, key: 'api.ops_request_not_found' },
  rate_limited: { status: 429, key: 'error.rate_limited' },
  internal: { status: 500, key: 'error.internal' },
  database_unavailable: { status: 503, key: 'error.database_unavailable' },
  // accounts
  auth_type_disabled: { status: 403, key: 'auth.auth_type_disabled' },
  invalid_credentials: { status: 401, key: 'auth.invalid_credentials' },
  invalid_token: { status: 400, key: 'auth.invalid_token' },
  link_confirm_required: { status: 409, key: 'auth.link_confirm_required' },
  invalid_password: { status: 400, key: 'auth.invalid_current_password', field: 'current_password' },
  not_closable: { status: 409, key: 'notify.not_closable' },
  field_verified: { status: 409, key: 'user.field_verified' },
  // account security (domains/security)
  second_factor_required: { status: 400, key: 'security.code_required', field: 'code', fieldKey: 'validation.required' },
  second_factor_invalid: { status: 400, key: 'security.code_invalid', field: 'code', fieldKey: 'security.field_code_invalid' },
  second_factor_enabled: { status: 409, key: 'security.already_enabled' },
  second_factor_not_enabled: { status: 409, key: 'security.not_enabled' },
  second_factor_not_started: { status: 409, key: 'security.not_started' },
  challenge_invalid: { status: 400, key: 'security.challenge_invalid' },
  session_not_found: { status: 404, key: 'api.session_not_found' },
  withdrawals_blocked: { status: 403, key: 'security.withdrawals_blocked' },
  sign_in_blocked: { status: 403, key: 'auth.sign_in_blocked' },
  // the back office (domains/ops)
  ops_sign_in_failed: { status: 401, key: 'ops.sign_in_failed' },
  ops_forbidden: { status: 403, key: 'ops.forbidden' },
  step_up_required: { status: 403, key: 'ops.step_up_required' },
  ops_claimed: { status: 409, key: 'ops.claimed' },
  ops_four_eyes: { status: 409, key: 'ops.four_eyes' },
  ops_request_closed: { status: 409, key: 'ops.request_closed' },
  ops_request_pending: { status: 409, key: 'ops.request_pending' },
  // withdrawals (the limit's message names the period: withdraw.limit_exceeded_24h / _30d)
  withdrawal_limit_exceeded: { status: 422, key: 'withdraw.limit_exceeded_24h', field: 'amount', fieldKey: 'withdraw.field_limit_exceeded' },
  deposit_limit_exceeded: { status: 422, key: 'withdraw.limit_exceeded_24h', field: 'amount', fieldKey: 'withdraw.field_limit_exceeded' },
  withdrawal_state: { status: 409, key: 'withdraw.state_conflict' },
  // identity verification and uploads (the state conflicts name their reason by key)
  verification_state: { status: 409, key: 'verification.read_only' },
  files_missing: { status: 400, key: 'verification.files_missing' },
  file_refused: { status: 415, key: 'files.type_not_allowed' },
  file_too_large: { status: 413, key: 'files.too_large' },
  too_many_files: { status: 413, key: 'files.too_many' },
  not_multipart: { status: 415, key: 'files.not_multipart' },
  bad_form: { status: 400, key: 'files.bad_form' },
  upload_too_large: { status: 413, key: 'files.request_too_large' },
  // every slot of the file checks (storage/work-queue.ts) is taken, or two of the caller's: Retry-After
  overloaded: { status: 503, key: 'files.overloaded' },
  // the client went away while its upload waited: nobody reads this answer, and nothing is logged
  client_closed: { status: 499, key: 'error.bad_request' },
  // chats
  chat_blocked: { status: 403, key: 'chat.blocked' },
  // mail preferences and the referral programme
  unsubscribe_link_invalid: { status: 400, key: 'mailprefs.link_invalid' },
  invite_codes_limit: { status: 409, key: 'referral.codes_limit', field: 'label' },
  invite_code_default: { status: 409, key: 'referral.code_default' },
  // payments
  webhook_signature_invalid: { status: 401, key: 'payments.webhook_signature_invalid' },
  // cards (the state conflicts name their reason by key)
  card_state: { status: 409, key: 'cards.state_conflict' },
  card_verification_required: { status: 403, key: 'cards.verification_required' },
  card_reveal_refused: { status: 400, key: 'cards.reveal_refused', field: 'password', fieldKey: 'cards.reveal_refused' },
  payment_level_required: { status: 403, key: 'payments.level_required', field: 'ps', fieldKey: 'payments.field.level_required' },
  payment_fee_exceeds_amount: { status: 422, key: 'payments.fee_exceeds_amount', field: 'amount', fieldKey: 'payments.field.fee_exceeds_amount' },
  // money: refusals of the SQL functions (code = the raised message) and of the services
  insufficient_funds: { status: 422, key: 'money.insufficient_funds', field: 'amount', fieldKey: 'money.field_insufficient_funds' },
  amount_not_positive: { status: 422, key: 'money.amount_not_positive', field: 'amount' },
  amount_too_small: { status: 422, key: 'money.amount_too_small', field: 'amount', fieldKey: 'money.field_too_small' },
  amount_too_large: { status: 422, key: 'money.amount_too_large', field: 'amount', fieldKey: 'money.field_too_large' },
  amount_too_precise: { status: 400, key: 'money.amount_too_precise_n', field: 'amount', fieldKey: 'money.amount_too_precise' },
  currency_disabled: { status: 422, key: 'money.currency_disabled', field: 'currency', fieldKey: 'money.field_unavailable' },
  pair_unavailable: { status: 422, key: 'exchange.pair_unavailable', field: 'dst', fieldKey: 'money.field_unavailable' },
  same_currency: { status: 422, key: 'exchange.same_currency', field: 'dst' },
  rates_unavailable: { status: 503, key: 'exchange.rates_unavailable' },
  quote_expired: { status: 409, key: 'exchange.quote_expired', field: 'quote' },
  quote_used: { status: 409, key: 'exchange.quote_used', field: 'quote' },
  quote_invalid: { status: 409, key: 'exchange.quote_invalid', field: 'quote' },
  recipient_not_found: { status: 422, key: 'transfer.recipient_not_found', field: 'account_id', fieldKey: 'transfer.field_not_found' },
  transfer_to_self: { status: 422, key: 'transfer.to_self', field: 'account_id' },
  idempotency_key_required: { status: 400, key: 'money.idempotency_key_required' },
  idempotency_key_invalid: { status: 400, key: 'money.idempotency_key_invalid' },
  idempotency_key_reused: { status: 422, key: 'money.idempotency_key_reused' },
  already_reversed: { status: 409, key: 'money.already_reversed' },
  hold_not_held: { status: 409, key: 'money.hold_not_held' },
  hold_not_found: { status: 404, key: 'money.hold_not_found' },
  transaction_not_found: { status: 404, key: 'error.not_found' },
  busy: { status: 503, key: 'money.busy' },
  // operator input (rates:set, transfer:set, notify:send)
  unknown_currency: { status: 400, key: 'ops.unknown_currency' },
  not_a_decimal: { status: 400, key: 'ops.not_a_decimal' },
  not_an_amount: { status: 400, key: 'ops.not_an_amount' },
  fraction_out_of_range: { status: 400, key: 'ops.fraction_out_of_range' },
  rate_not_positive: { status: 400, key: 'ops.rate_not_positive' },
  rate_required: { status: 400, key: 'ops.rate_required' },
  expiry_passed: { status: 400, key: 'ops.expiry_passed' },
} as const satisfies Record<string, TErrorSpec>;

export type TErrorCode = keyof typeof ERRORS;

export function isErrorCode(code: string): code is TErrorCode {
  return Object.hasOwn(ERRORS, code);
}

export type TAppErrorOptions = {
  vars?: Record<string, string | number>;
  /** Field name → i18n key (or an already readable message); replaces the code's default field. */
  fields?: Record<string, string>;
  /** Marks this field (with the code's field message) instead of the code's default one. */
  field?: string;
  /** Response headers that belong to the error, e.g. Retry-After. */
  headers?: Record<string, string>;
  /** More members of the answer's body, e.g. the fresh quote of a refused one. */
  data?: Record<string, unknown>;
  /** A more precise message than the code's own (a notification, not a page, was not found). */
  key?: TI18nKey;
  /** Only for the framework's own client errors, which come with their status (413, 415…). */
  status?: number;
};

/**
 * The one application error: a code of ERRORS, whose status and messages follow from it. The
 * error handler localizes `messageKey` and the fields for the caller, so services never deal
 * with languages. Its `message` is the code and the English text, for logs and terminals.
 */
export class AppError extends Error {
  readonly code: TErrorCode;
  readonly statusCode: number;
  readonly messageKey: TI18nKey;
  readonly vars: Record<string, string | number>;
  readonly fields: Record<string, string> | undefined;
  readonly headers: Record<string, string> | undefined;
  readonly data: Record<string, unknown> | undefined;

  constructor(code: TErrorCode, options: TAppErrorOptions = {}) {
    const spec: TErrorSpec = ERRORS[code];
    const key = options.key ?? spec.key;
    const vars = options.vars ?? {};
    super(`${code}: ${translate('en', key, vars)}`);
    this.code = code;
    this.statusCode = options.status ?? spec.status;
    this.messageKey = key;
    this.vars = vars;
    const field = options.field ?? spec.field;
    this.fields = options.fields ?? (field ? { [field]: spec.fieldKey ?? spec.key } : undefined);
    this.headers = options.headers;
    this.data = options.data;
  }
}

/**
 * What a call can name that may not exist. Each answers 404 with its own code and a message that
 * names it ("This exchange was not found"); another user's entity answers exactly the same.
 */
export const MISSING_ENTITIES = [
  'article',
  'notification',
  'exchange',
  'exchange_batch',
  'account',
  'currency',
  'document',
  'payment_provider',
  'payment',
  'withdrawal',
  'card',
  'card_issuer',
  'session',
  'chat',
  'chat_file',
  'recruit',
  'invite_code',
  'ops_request',
] as const;
export type TMissingEntity = (typeof MISSING_ENTITIES)[number];

export const notFound = () => new AppError('not_found');

/** No route of that method and path: a mistyped call, not a missing entity. */
/** Like the not-found handler's answer (plugins/errors.ts): the BFF counts it as a miss. */
export const routeNotFound = () => new AppError('route_not_found', { headers: { [ROUTE_NOT_FOUND_HEADER]: '1' } });

export const notFoundOf = (entity: TMissingEntity) => new AppError(`${entity}_not_found`);

/** No valid session: the answer also carries an anonymous `user` (spec §4: the client logs out). */
export const unauthorized = () => new AppError('unauthorized');
