import { ROUTE_NOT_FOUND_HEADER, translate, type TI18nKey } from '@obmen/shared';

/**
 * What an error code means: its HTTP status, the i18n key of its message (which may use vars),
 * and the form field it marks by default with the i18n key of the field's message (given the
 * same vars as the message).
 */
type TErrorSpec = { status: number; key: TI18nKey; field?: string; fieldKey?: TI18nKey };

/** A code's spec: its status and message key, and the field it marks with that field's message key. */
function error(status: number, key: TI18nKey, field?: string, fieldKey?: TI18nKey): TErrorSpec {
  return { status, key, ...(field === undefined ? {} : { field }), ...(fieldKey === undefined ? {} : { fieldKey }) };
}

/** The closed set of error codes the core answers with. A new failure adds its code here. */
export const ERRORS = {
  // the request
  validation: error(400, 'error.validation'),
  bad_request: error(400, 'error.validation'),
  unauthorized: error(401, 'error.unauthorized'),
  not_found: error(404, 'error.not_found'),
  route_not_found: error(404, 'api.route_not_found'),
  article_not_found: error(404, 'api.article_not_found'),
  notification_not_found: error(404, 'api.notification_not_found'),
  exchange_not_found: error(404, 'api.exchange_not_found'),
  exchange_batch_not_found: error(404, 'api.exchange_batch_not_found'),
  account_not_found: error(404, 'api.account_not_found'),
  currency_not_found: error(404, 'api.currency_not_found'),
  document_not_found: error(404, 'api.document_not_found'),
  payment_provider_not_found: error(404, 'api.payment_provider_not_found'),
  payment_not_found: error(404, 'api.payment_not_found'),
  withdrawal_not_found: error(404, 'api.withdrawal_not_found'),
  card_not_found: error(404, 'api.card_not_found'),
  card_issuer_not_found: error(404, 'api.card_issuer_not_found'),
  chat_not_found: error(404, 'api.chat_not_found'),
  chat_file_not_found: error(404, 'api.chat_file_not_found'),
  recruit_not_found: error(404, 'api.recruit_not_found'),
  invite_code_not_found: error(404, 'api.invite_code_not_found'),
  ops_request_not_found: error(404, 'api.ops_request_not_found'),
  suspense_not_found: error(404, 'api.suspense_not_found'),
  data_export_not_found: error(404, 'api.data_export_not_found'),
  account_not_closable: error(409, 'privacy.blocker_balance'),
  account_closed: error(403, 'privacy.account_closed'),
  withdraw_destination_not_found: error(404, 'api.withdraw_destination_not_found'),
  withdraw_destination_exists: error(409, 'withdraw.book_exists'),
  withdraw_destination_unconfirmed: error(403, 'withdraw.book_unconfirmed'),
  withdraw_destination_waiting: error(403, 'withdraw.book_waiting'),
  withdraw_allowlist_only: error(403, 'withdraw.book_allowlist_only'),
  pair_not_found: error(404, 'api.pair_not_found'),
  rate_limited: error(429, 'error.rate_limited'),
  internal: error(500, 'error.internal'),
  database_unavailable: error(503, 'error.database_unavailable'),
  // accounts
  auth_type_disabled: error(403, 'auth.auth_type_disabled'),
  invalid_credentials: error(401, 'auth.invalid_credentials'),
  invalid_token: error(400, 'auth.invalid_token'),
  link_confirm_required: error(409, 'auth.link_confirm_required'),
  invalid_password: error(400, 'auth.invalid_current_password', 'current_password'),
  not_closable: error(409, 'notify.not_closable'),
  field_verified: error(409, 'user.field_verified'),
  // account security (domains/security)
  second_factor_required: error(400, 'security.code_required', 'code', 'validation.required'),
  second_factor_invalid: error(400, 'security.code_invalid', 'code', 'security.field_code_invalid'),
  second_factor_enabled: error(409, 'security.already_enabled'),
  second_factor_not_enabled: error(409, 'security.not_enabled'),
  second_factor_not_started: error(409, 'security.not_started'),
  challenge_invalid: error(400, 'security.challenge_invalid'),
  passkey_invalid: error(400, 'security.passkey_invalid', 'passkey', 'security.field_passkey_invalid'),
  passkeys_full: error(409, 'security.passkeys_full'),
  session_not_found: error(404, 'api.session_not_found'),
  passkey_not_found: error(404, 'api.passkey_not_found'),
  withdrawals_blocked: error(403, 'security.withdrawals_blocked'),
  sign_in_blocked: error(403, 'auth.sign_in_blocked'),
  // keys for bots (domains/apikeys)
  api_key_invalid: error(401, 'apikeys.error_invalid'),
  api_key_stale: error(401, 'apikeys.error_stale'),
  api_key_signature: error(401, 'apikeys.error_signature'),
  api_key_replayed: error(401, 'apikeys.error_replayed'),
  api_key_scope: error(403, 'apikeys.error_scope'),
  api_key_ip: error(403, 'apikeys.error_ip'),
  api_key_needs_second_factor: error(409, 'apikeys.error_needs_second_factor'),
  api_key_transfer_needs_ips: error(400, 'apikeys.error_transfer_needs_ips', 'ips', 'apikeys.error_transfer_needs_ips'),
  api_keys_full: error(409, 'apikeys.error_full'),
  api_key_not_found: error(404, 'api.api_key_not_found'),
  // the back office (domains/ops)
  ops_sign_in_failed: error(401, 'ops.sign_in_failed'),
  ops_forbidden: error(403, 'ops.forbidden'),
  step_up_required: error(403, 'ops.step_up_required'),
  ops_claimed: error(409, 'ops.claimed'),
  ops_four_eyes: error(409, 'ops.four_eyes'),
  ops_request_closed: error(409, 'ops.request_closed'),
  ops_request_pending: error(409, 'ops.request_pending'),
  ops_reverse_hold: error(409, 'ops.reverse_hold'),
  suspense_resolved: error(409, 'ops.recon.resolved'),
  // withdrawals (the limit's message names the period: withdraw.limit_exceeded_24h / _30d)
  withdrawal_limit_exceeded: error(422, 'withdraw.limit_exceeded_24h', 'amount', 'withdraw.field_limit_exceeded'),
  deposit_limit_exceeded: error(422, 'withdraw.limit_exceeded_24h', 'amount', 'withdraw.field_limit_exceeded'),
  withdrawal_state: error(409, 'withdraw.state_conflict'),
  // identity verification and uploads (the state conflicts name their reason by key)
  verification_state: error(409, 'verification.read_only'),
  files_missing: error(400, 'verification.files_missing'),
  file_refused: error(415, 'files.type_not_allowed'),
  file_too_large: error(413, 'files.too_large'),
  too_many_files: error(413, 'files.too_many'),
  not_multipart: error(415, 'files.not_multipart'),
  bad_form: error(400, 'files.bad_form'),
  upload_too_large: error(413, 'files.request_too_large'),
  // every slot of the file checks (storage/work-queue.ts) is taken, or two of the caller's: Retry-After
  overloaded: error(503, 'files.overloaded'),
  // the client went away while its upload waited: nobody reads this answer, and nothing is logged
  client_closed: error(499, 'error.bad_request'),
  // chats
  chat_blocked: error(403, 'chat.blocked'),
  // mail preferences and the referral programme
  unsubscribe_link_invalid: error(400, 'mailprefs.link_invalid'),
  invite_codes_limit: error(409, 'referral.codes_limit', 'label'),
  invite_code_default: error(409, 'referral.code_default'),
  // payments
  webhook_signature_invalid: error(401, 'payments.webhook_signature_invalid'),
  bank_payment_matched: error(409, 'payments.bank_matched'),
  bank_match_currency: error(409, 'payments.bank_match_currency'),
  bank_match_deposit_state: error(409, 'payments.bank_match_deposit_state'),
  // cards (the state conflicts name their reason by key)
  card_state: error(409, 'cards.state_conflict'),
  card_verification_required: error(403, 'cards.verification_required'),
  card_reveal_refused: error(400, 'cards.reveal_refused', 'password', 'cards.reveal_refused'),
  payment_level_required: error(403, 'payments.level_required', 'ps', 'payments.field.level_required'),
  payment_fee_exceeds_amount: error(422, 'payments.fee_exceeds_amount', 'amount', 'payments.field.fee_exceeds_amount'),
  // money: refusals of the SQL functions (code = the raised message) and of the services
  insufficient_funds: error(422, 'money.insufficient_funds', 'amount', 'money.field_insufficient_funds'),
  amount_not_positive: error(422, 'money.amount_not_positive', 'amount'),
  amount_too_small: error(422, 'money.amount_too_small', 'amount', 'money.field_too_small'),
  amount_too_large: error(422, 'money.amount_too_large', 'amount', 'money.field_too_large'),
  amount_too_precise: error(400, 'money.amount_too_precise_n', 'amount', 'money.amount_too_precise'),
  currency_disabled: error(422, 'money.currency_disabled', 'currency', 'money.field_unavailable'),
  pair_unavailable: error(422, 'exchange.pair_unavailable', 'dst', 'money.field_unavailable'),
  same_currency: error(422, 'exchange.same_currency', 'dst'),
  rates_unavailable: error(503, 'exchange.rates_unavailable'),
  quote_expired: error(409, 'exchange.quote_expired', 'quote'),
  quote_used: error(409, 'exchange.quote_used', 'quote'),
  quote_invalid: error(409, 'exchange.quote_invalid', 'quote'),
  recipient_not_found: error(422, 'transfer.recipient_not_found', 'account_id', 'transfer.field_not_found'),
  transfer_to_self: error(422, 'transfer.to_self', 'account_id'),
  idempotency_key_required: error(400, 'money.idempotency_key_required'),
  idempotency_key_invalid: error(400, 'money.idempotency_key_invalid'),
  idempotency_key_reused: error(422, 'money.idempotency_key_reused'),
  already_reversed: error(409, 'money.already_reversed'),
  hold_not_held: error(409, 'money.hold_not_held'),
  hold_not_found: error(404, 'money.hold_not_found'),
  transaction_not_found: error(404, 'error.not_found'),
  busy: error(503, 'money.busy'),
  // operator input (rates:set, transfer:set, notify:send)
  unknown_currency: error(400, 'ops.unknown_currency'),
  not_a_decimal: error(400, 'ops.not_a_decimal'),
  not_an_amount: error(400, 'ops.not_an_amount'),
  fraction_out_of_range: error(400, 'ops.fraction_out_of_range'),
  rate_not_positive: error(400, 'ops.rate_not_positive'),
  rate_required: error(400, 'ops.rate_required'),
  expiry_passed: error(400, 'ops.expiry_passed'),
  notification_not_scheduled: error(409, 'ops.config.notify_not_scheduled'),
  // operator input (payments:system:*, /ops/config/payments)
  payment_system_unknown: error(404, 'ops.payment_system_unknown'),
  payment_terms_missing: error(409, 'ops.payment_terms_missing', 'currency'),
  payment_no_address_format: error(400, 'ops.payment_no_address_format', 'currency'),
  payment_confirmations_range: error(400, 'ops.payment_confirmations_range', 'confirmations'),
  payment_limits_required: error(400, 'ops.payment_limits_required', 'min'),
  payment_min_positive: error(400, 'ops.payment_min_positive', 'min'),
  payment_max_below_min: error(400, 'ops.payment_max_below_min', 'max'),
} satisfies Record<string, TErrorSpec>;

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
  'passkey',
  'api_key',
  'chat',
  'chat_file',
  'recruit',
  'invite_code',
  'ops_request',
  'suspense',
  'withdraw_destination',
  'data_export',
  'pair',
] as const;
export type TMissingEntity = (typeof MISSING_ENTITIES)[number];

export const notFound = () => new AppError('not_found');

/** No route of that method and path: a mistyped call, not a missing entity. */
/** Like the not-found handler's answer (plugins/errors.ts): the BFF counts it as a miss. */
export const routeNotFound = () => new AppError('route_not_found', { headers: { [ROUTE_NOT_FOUND_HEADER]: '1' } });

export const notFoundOf = (entity: TMissingEntity) => new AppError(`${entity}_not_found`);

/** No valid session: the answer also carries an anonymous `user` (spec §4: the client logs out). */
export const unauthorized = () => new AppError('unauthorized');
