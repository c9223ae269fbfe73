import { z } from 'zod';
import {
  ZApiError,
  ZOpsAuditQuery,
  ZOpsChatReportsResponse,
  ZOpsClaimResponse,
  ZOpsQueuesResponse,
  ZOpsReportResolveBody,
  ZOpsSavedRepliesResponse,
  ZOpsSupportListQuery,
  ZOpsSupportListResponse,
  ZOpsSupportReplyBody,
  ZOpsSupportReplyResponse,
  ZOpsSupportThreadResponse,
  ZOpsAuditResponse,
  ZOpsEnrolFinishBody,
  ZOpsEnrolStartBody,
  ZOpsEnrolStartResponse,
  ZOpsMeResponse,
  ZOpsSignInBody,
  ZOpsStepUpBody,
  ZOpsBlockWithdrawalsBody,
  ZOpsCustomerActionBody,
  ZOpsCustomerNoteBody,
  ZOpsCustomerResponse,
  ZOpsCustomerSearchQuery,
  ZOpsCustomerSearchResponse,
  ZOpsOperatorsResponse,
  ZOpsProposeBody,
  ZOpsRequestResponse,
  ZOpsRequestsResponse,
  ZAuthCheckResponse,
  ZAuthMessage,
  ZAuthState,
  ZBonusHistoryQuery,
  ZBonusHistoryResponse,
  ZCardBody,
  ZCardCatalogueResponse,
  ZCardChangeResponse,
  ZCardCloseBody,
  ZCardDetailsResponse,
  ZCardListResponse,
  ZCardMoveBody,
  ZCardOrderBody,
  ZCardOrderOneResponse,
  ZCardOrderResponse,
  ZCardOrdersResponse,
  ZCardRevealBody,
  ZCardRevealResponse,
  ZChangePasswordBody,
  ZChatBlockBody,
  ZChatBlockResponse,
  ZChatListResponse,
  ZChatPageQuery,
  ZChatReadBody,
  ZChatReadResponse,
  ZChatReportBody,
  ZChatSentResponse,
  ZCodeBody,
  ZDepositCreateBody,
  ZEmailBody,
  ZEmailChangeBody,
  ZEmailStateResponse,
  ZExchangeAllBody,
  ZExchangeAllPreviewResponse,
  ZExchangeAllQuery,
  ZExchangeAllResponse,
  ZExchangeBody,
  ZExchangeCheckBody,
  ZExchangeDoneResponse,
  ZExchangeListQuery,
  ZExchangeListResponse,
  ZInviteBody,
  ZInviteResponse,
  ZLangBody,
  ZLangResponse,
  ZLinkPreview,
  ZLinkSpendBody,
  ZLocale,
  ZLoginByPasswordBody,
  ZMailingBody,
  ZMailingResponse,
  ZMenuResponse,
  ZNotifyCloseBody,
  ZNotifyCloseResponse,
  ZOk,
  ZPageQuery,
  ZPairResponse,
  ZPasswordSignInResponse,
  ZPaymentCheckBody,
  ZPaymentFormCheckBody,
  ZPaymentHistoryQuery,
  ZPrivateChatResponse,
  ZPurchaseBody,
  ZQuoteResponse,
  ZRefereeListResponse,
  ZReferralInfoResponse,
  ZReferralMailingBody,
  ZReferralMailingResponse,
  ZRegisterBody,
  ZResetPasswordBody,
  ZRevokeOthersResponse,
  ZSecondFactorLoginBody,
  ZSecurityMessage,
  ZSecurityResponse,
  ZSupportResponse,
  ZTotpEnableResponse,
  ZTotpSetupResponse,
  ZTransferBody,
  ZTransferCheck,
  ZTransferDoneResponse,
  ZTransferInfoResponse,
  ZUnsubscribeQuery,
  ZUnsubscribeResponse,
  ZUserInfoResponse,
  ZUserInfoUpdate,
  ZVerificationResponse,
  ZVerificationSubmit,
  ZWalletsResponse,
  ZWithdrawCheckBody,
  ZWithdrawFormBody,
  ZArticleResponse,
  ZExchangeHistoryResponse,
  ZHistoryQuery,
  ZTransferHistoryResponse,
  ZWithdrawHistoryQuery,
} from './index.ts';
import {
  ZDepositOpened,
  ZDepositSystems,
  ZPaymentChecked,
  ZPaymentFormCheck,
  ZPaymentHistoryResponse,
  ZPurchaseOpened,
  ZPurchaseSystems,
  ZWithdrawCheckResponse,
  ZWithdrawalResponse,
  ZWithdrawDone,
  ZWithdrawHistoryResponse,
  ZWithdrawSystems,
} from './payment-answers.ts';

/*
 * One declaration per call the site makes to /api, in the browser (site/src/lib/api.ts) and in
 * the server-rendered pages (site/src/lib/core.ts): its method and path (the key), its body and
 * query, its answer. The clients take a declaration, build the path from it and type the answer
 * by its schema; outside production they check the answer against it. The core's routes are
 * held to the same declarations by core/test/contract.test.ts.
 */

/** What a call sends: `json` (the default) or a urlencoded form (the spec's "(form)" calls). */
export type TEncoding = 'json' | 'form';

export type TCallSpec = { answer: z.ZodType; body?: z.ZodType; query?: z.ZodType; encoding?: TEncoding };

export type TCallKey = `${'GET' | 'POST'} /api/${string}`;

export type TCall<K extends TCallKey = TCallKey, S extends TCallSpec = TCallSpec> = S & {
  method: K extends `${infer M} ${string}` ? M : never;
  path: K extends `${string} ${infer P}` ? P : never;
};

function declareCalls<const T extends Record<TCallKey, TCallSpec>>(specs: T): { readonly [K in keyof T & TCallKey]: TCall<K, T[K]> } {
  return Object.fromEntries(
    Object.entries(specs).map(([key, spec]) => {
      const [method, path] = key.split(' ');
      return [key, { ...spec, method, path }];
    }),
  ) as { readonly [K in keyof T & TCallKey]: TCall<K, T[K]> };
}

/** The body of a call that sends an empty JSON object (or an empty form): the core reads nothing from it. */
export const ZEmptyBody = z.strictObject({});

/** GET /api/dev/mailbox: the development mailbox (loopback only, outside the public document), newest first. */
export const ZDevMailboxQuery = z.object({
  to: z.string().trim().max(254).optional(),
  limit: z.coerce.number().int().min(1).max(200).default(50),
});
export const ZDevMailboxResponse = z.object({
  mails: z.array(
    z.object({
      id: z.number(),
      kind: z.string(),
      to: z.string(),
      subject: z.string(),
      text: z.string(),
      html: z.string(),
      locale: ZLocale,
      created_at: z.string(),
      sent_at: z.string().nullable(),
      /** The links of the text part: sign-in, reset and confirmation links. */
      links: z.array(z.string()),
      headers: z.record(z.string(), z.string()),
    }),
  ),
});

/** POST /api/support and /api/chat/private/{id} as JSON (with files they go as multipart). */
export const ZChatSendBody = z.object({ text: z.string().optional(), message: z.string().optional() });

export const CALLS = declareCalls({
  // ---- Site, language, notifications, content
  'POST /api/lang': { body: ZLangBody, answer: ZLangResponse },
  'POST /api/notify/close': { body: ZNotifyCloseBody, answer: ZNotifyCloseResponse },
  'GET /api/content/menu': { answer: ZMenuResponse },
  'GET /api/content/article/{name}': { answer: ZArticleResponse },
  'GET /api/dev/mailbox': { query: ZDevMailboxQuery, answer: ZDevMailboxResponse },

  // ---- Auth
  'GET /api/auth/check': { answer: ZAuthCheckResponse },
  'POST /api/auth/register': { body: ZRegisterBody, answer: ZAuthMessage },
  'POST /api/auth/login_by_password': { body: ZLoginByPasswordBody, answer: ZPasswordSignInResponse },
  'POST /api/auth/login_second_factor': { body: ZSecondFactorLoginBody, answer: ZAuthState },
  'POST /api/auth/login': { body: ZEmailBody, answer: ZAuthMessage },
  'GET /api/auth/login/{token}': { answer: ZLinkPreview },
  'POST /api/auth/login/{token}': { body: ZLinkSpendBody, answer: ZPasswordSignInResponse },
  'GET /api/auth/confirm/{token}': { answer: ZLinkPreview },
  'POST /api/auth/confirm/{token}': { body: ZLinkSpendBody, answer: ZPasswordSignInResponse },
  'POST /api/auth/reset': { body: ZEmailBody, answer: ZAuthMessage },
  'GET /api/auth/reset/{token}': { answer: ZOk },
  'POST /api/auth/reset/{token}': { body: ZResetPasswordBody, answer: ZPasswordSignInResponse },
  'POST /api/auth/change': { body: ZChangePasswordBody, answer: ZAuthState },
  'POST /api/auth/logout': { body: ZEmptyBody, answer: ZAuthState },

  // ---- Account, settings, security
  'GET /api/user/info': { answer: ZUserInfoResponse },
  'POST /api/user/info': { body: ZUserInfoUpdate, encoding: 'form', answer: ZUserInfoResponse },
  'GET /api/config/mailing': { answer: ZMailingResponse },
  'POST /api/config/mailing': { body: ZMailingBody, answer: ZMailingResponse },
  'GET /api/mail/unsubscribe': { query: ZUnsubscribeQuery, answer: ZUnsubscribeResponse },
  'POST /api/mail/unsubscribe': { query: ZUnsubscribeQuery, answer: ZUnsubscribeResponse },
  'GET /api/wallets': { answer: ZWalletsResponse },
  'GET /api/security': { answer: ZSecurityResponse },
  'POST /api/security/totp/setup': { body: ZEmptyBody, answer: ZTotpSetupResponse },
  'POST /api/security/totp/enable': { body: ZCodeBody, answer: ZTotpEnableResponse },
  'POST /api/security/totp/disable': { body: ZCodeBody, answer: ZSecurityMessage },
  'POST /api/security/recovery_codes': { body: ZCodeBody, answer: ZTotpEnableResponse },
  'POST /api/security/sessions/{id}/revoke': { body: ZEmptyBody, answer: ZOk },
  'POST /api/security/sessions/revoke_others': { body: ZEmptyBody, answer: ZRevokeOthersResponse },
  'GET /api/user/email': { answer: ZEmailStateResponse },
  'POST /api/user/email': { body: ZEmailChangeBody, answer: ZSecurityMessage },
  'POST /api/user/email/confirm/{token}': { body: ZEmptyBody, answer: ZSecurityMessage },
  'POST /api/user/email/report/{token}': { body: ZEmptyBody, answer: ZSecurityMessage },
  'GET /api/verification': { answer: ZVerificationResponse },
  'GET /api/verification/{type}/new': { answer: ZVerificationResponse },
  'POST /api/verification/{type}/upload': { answer: ZVerificationResponse },
  'POST /api/verification/{type}/submit': { body: ZVerificationSubmit, answer: ZVerificationResponse },

  // ---- Exchange, transfer
  'GET /api/exchange/list': { query: ZExchangeListQuery, answer: ZExchangeListResponse },
  'POST /api/exchange/check': { body: ZExchangeCheckBody, encoding: 'form', answer: ZQuoteResponse },
  'POST /api/exchange/landing': { body: ZExchangeCheckBody, encoding: 'form', answer: ZQuoteResponse },
  'GET /api/exchange/all': { query: ZExchangeAllQuery, answer: ZExchangeAllPreviewResponse },
  'GET /api/exchange/all/{currency}': { query: ZExchangeAllQuery, answer: ZExchangeAllPreviewResponse },
  'POST /api/exchange/all/{currency}': { body: ZExchangeAllBody, encoding: 'form', answer: ZExchangeAllResponse },
  'GET /api/exchange/{src}/{dst}': { answer: ZPairResponse },
  'POST /api/exchange/{src}/{dst}': { body: ZExchangeBody, encoding: 'form', answer: ZExchangeDoneResponse },
  'GET /api/exchange/history': { query: ZHistoryQuery, answer: ZExchangeHistoryResponse },
  'GET /api/transfer/history': { query: ZHistoryQuery, answer: ZTransferHistoryResponse },
  'GET /api/transfer': { answer: ZTransferInfoResponse },
  'POST /api/transfer/check': { body: ZTransferBody, encoding: 'form', answer: ZTransferCheck },
  'POST /api/transfer': { body: ZTransferBody, encoding: 'form', answer: ZTransferDoneResponse },

  // ---- Deposit, purchase, withdrawal
  'GET /api/deposit/ps': { answer: ZDepositSystems },
  'POST /api/deposit/integration_json': { body: ZDepositCreateBody, encoding: 'form', answer: ZDepositOpened },
  'POST /api/deposit/integration_json/check': { body: ZPaymentCheckBody, answer: ZPaymentChecked },
  'POST /api/{x}/check': { body: ZPaymentFormCheckBody, encoding: 'form', answer: ZPaymentFormCheck },
  'GET /api/deposit/history': { query: ZPaymentHistoryQuery, answer: ZPaymentHistoryResponse },
  'GET /api/payment/history': { query: ZPaymentHistoryQuery, answer: ZPaymentHistoryResponse },
  'GET /api/withdraw/history': { query: ZWithdrawHistoryQuery, answer: ZWithdrawHistoryResponse },
  'GET /api/purchase/ps/{x}': { answer: ZPurchaseSystems },
  'POST /api/purchase/integration_json': { body: ZPurchaseBody, encoding: 'form', answer: ZPurchaseOpened },
  'GET /api/withdraw/ps': { answer: ZWithdrawSystems },
  'POST /api/withdraw/check': { body: ZWithdrawCheckBody, encoding: 'form', answer: ZWithdrawCheckResponse },
  'POST /api/withdraw/form/{id}': { body: ZWithdrawFormBody, encoding: 'form', answer: ZWithdrawDone },
  'GET /api/withdraw/status/{id}': { answer: ZWithdrawalResponse },
  'POST /api/withdraw/cancel/{id}': { body: ZEmptyBody, encoding: 'form', answer: ZWithdrawDone },

  // ---- Cards
  'GET /api/card': { answer: ZCardCatalogueResponse },
  'GET /api/card/order': { answer: ZCardOrdersResponse },
  'GET /api/card/order/{id}': { answer: ZCardOrderOneResponse },
  'POST /api/card/order': { body: ZCardOrderBody, encoding: 'form', answer: ZCardOrderResponse },
  'POST /api/card/order/confirm': { body: ZCardBody, encoding: 'form', answer: ZCardOrderResponse },
  'POST /api/card/order/cancel': { body: ZCardBody, encoding: 'form', answer: ZCardOrderResponse },
  'GET /api/card/my': { answer: ZCardListResponse },
  'GET /api/card/details/{id}': { answer: ZCardDetailsResponse },
  'POST /api/card/reveal': { body: ZCardRevealBody, encoding: 'form', answer: ZCardRevealResponse },
  'POST /api/card/freeze': { body: ZCardBody, encoding: 'form', answer: ZCardChangeResponse },
  'POST /api/card/unfreeze': { body: ZCardBody, encoding: 'form', answer: ZCardChangeResponse },
  'POST /api/card/close': { body: ZCardCloseBody, encoding: 'form', answer: ZCardChangeResponse },
  'POST /api/card/topup': { body: ZCardMoveBody, encoding: 'form', answer: ZCardChangeResponse },
  'POST /api/card/withdraw': { body: ZCardMoveBody, encoding: 'form', answer: ZCardChangeResponse },

  // ---- Referral
  'GET /api/referral/invite': { answer: ZInviteResponse },
  'POST /api/referral/invite': { body: ZInviteBody, answer: ZInviteResponse },
  'GET /api/referral/info': { answer: ZReferralInfoResponse },
  'GET /api/referral/list': { query: ZPageQuery, answer: ZRefereeListResponse },
  'GET /api/referral/bonus/history': { query: ZBonusHistoryQuery, answer: ZBonusHistoryResponse },
  'POST /api/referral/mailing': { body: ZReferralMailingBody, answer: ZReferralMailingResponse },

  // ---- Chats
  'GET /api/support': { query: ZChatPageQuery, answer: ZSupportResponse },
  'POST /api/support': { body: ZChatSendBody, answer: ZChatSentResponse },
  'POST /api/support/read': { body: ZChatReadBody, answer: ZChatReadResponse },
  'GET /api/chat/list': { answer: ZChatListResponse },
  'GET /api/chat/private/{id}': { query: ZChatPageQuery, answer: ZPrivateChatResponse },
  'POST /api/chat/private/{id}': { body: ZChatSendBody, answer: ZChatSentResponse },
  'POST /api/chat/private/read/{id}': { body: ZChatReadBody, answer: ZChatReadResponse },
  'POST /api/chat/private/block/{id}': { body: ZChatBlockBody, answer: ZChatBlockResponse },
  'POST /api/chat/private/report/{id}': { body: ZChatReportBody, answer: ZOk },

  // ---- The back office (/api/ops: the operator's own session)
  'POST /api/ops/enrol/start': { body: ZOpsEnrolStartBody, answer: ZOpsEnrolStartResponse },
  'POST /api/ops/enrol/finish': { body: ZOpsEnrolFinishBody, answer: ZOk },
  'POST /api/ops/sign-in': { body: ZOpsSignInBody, answer: ZOpsMeResponse },
  'POST /api/ops/sign-out': { answer: ZOk },
  'GET /api/ops/me': { answer: ZOpsMeResponse },
  'POST /api/ops/step-up': { body: ZOpsStepUpBody, answer: ZOk },
  'GET /api/ops/audit': { query: ZOpsAuditQuery, answer: ZOpsAuditResponse },
  'GET /api/ops/queues': { answer: ZOpsQueuesResponse },
  'GET /api/ops/support': { query: ZOpsSupportListQuery, answer: ZOpsSupportListResponse },
  'GET /api/ops/support/replies': { answer: ZOpsSavedRepliesResponse },
  'GET /api/ops/support/{account}': { answer: ZOpsSupportThreadResponse },
  'POST /api/ops/support/{account}/claim': { answer: ZOpsClaimResponse },
  'POST /api/ops/support/{account}/release': { answer: ZOk },
  'POST /api/ops/support/{account}/reply': { body: ZOpsSupportReplyBody, answer: ZOpsSupportReplyResponse },
  'POST /api/ops/support/{account}/close': { answer: ZOk },
  'POST /api/ops/support/{account}/reopen': { answer: ZOk },
  'GET /api/ops/chat-reports': { answer: ZOpsChatReportsResponse },
  'POST /api/ops/chat-reports/{id}/resolve': { body: ZOpsReportResolveBody, answer: ZOk },
  'GET /api/ops/customers': { query: ZOpsCustomerSearchQuery, answer: ZOpsCustomerSearchResponse },
  'GET /api/ops/customers/{account_id}': { answer: ZOpsCustomerResponse },
  'POST /api/ops/customers/{account_id}/reveal': { body: ZOpsCustomerActionBody, answer: ZOpsCustomerResponse },
  'POST /api/ops/customers/{account_id}/block-sign-in': { body: ZOpsCustomerActionBody, answer: ZOk },
  'POST /api/ops/customers/{account_id}/unblock-sign-in': { body: ZOpsCustomerActionBody, answer: ZOk },
  'POST /api/ops/customers/{account_id}/block-withdrawals': { body: ZOpsBlockWithdrawalsBody, answer: ZOk },
  'POST /api/ops/customers/{account_id}/revoke-sessions': { body: ZOpsCustomerActionBody, answer: ZOk },
  'POST /api/ops/customers/{account_id}/notes': { body: ZOpsCustomerNoteBody, answer: ZOk },
  'GET /api/ops/requests': { answer: ZOpsRequestsResponse },
  'POST /api/ops/requests': { body: ZOpsProposeBody, answer: ZOpsRequestResponse },
  'POST /api/ops/requests/{id}/approve': { answer: ZOpsRequestResponse },
  'POST /api/ops/requests/{id}/decline': { answer: ZOpsRequestResponse },
  'POST /api/ops/requests/{id}/withdraw': { answer: ZOpsRequestResponse },
  'GET /api/ops/operators': { answer: ZOpsOperatorsResponse },
});

export type TCalls = typeof CALLS;
/** Any declared call. */
export type TAnyCall = TCalls[keyof TCalls];

/*
 * What the BFF answers by itself, on any call, instead of the core: a body over its limit, the
 * core unreachable, failing or slow, or the site shedding load (with Retry-After). Every one is
 * the common error shape; the codes are the ones a client may act on.
 */
export const BFF_FAILURES = {
  413: ['payload_too_large', 'upload_too_large'],
  502: ['bad_gateway'],
  503: ['upstream_unavailable', 'overloaded'],
  504: ['upstream_timeout'],
} as const;
export const ZBffFailure = ZApiError.extend({ code: z.enum(Object.values(BFF_FAILURES).flat()) });
export type TBffFailure = z.infer<typeof ZBffFailure>;

// ---- Typing a call's input and answer ---------------------------------------------------------

type TParamNames<P extends string> = P extends `${string}{${infer K}}${infer R}` ? K | TParamNames<R> : never;

/** The values of a path's `{parameters}`. */
export type TPathParams<P extends string> = { [K in TParamNames<P>]: string | number };

/** A form carries strings only, under the body schema's keys. */
type TFormBody<B> = { [K in keyof B]?: string };

type TParamsInput<C extends TCall> = [TParamNames<C['path']>] extends [never] ? { params?: never } : { params: TPathParams<C['path']> };
// Not distributed over a union of calls (a form that picks its call): the input is then any of theirs.
type TQueryInput<C extends TCall> = [C] extends [{ query: z.ZodType }] ? { query?: Partial<z.input<NonNullable<C['query']>>> } : { query?: never };
type TBodyInput<C extends TCall> = [C] extends [{ body: z.ZodType }]
  ? { body: [C] extends [{ encoding: 'form' }] ? TFormBody<z.input<NonNullable<C['body']>>> : z.input<NonNullable<C['body']>> }
  : { body?: never };

/** What a client's implementation reads of any call's input. */
export type TLooseInput = { params?: Record<string, string | number>; query?: object; body?: unknown };

/** What a call needs from its caller: the path's parameters, the query, the body (and what any client reads of them). */
export type TCallInput<C extends TCall> = TParamsInput<C> & TQueryInput<C> & TBodyInput<C> & TLooseInput;

/** The answer of a call, as its schema declares it. */
export type TAnswer<C extends TCall> = z.output<C['answer']>;

/**
 * The path of a call on the wire, `{parameters}` filled in (encoded) and the query appended in
 * the order given; parameters and query values left undefined are not sent.
 */
export function buildPath<C extends TCall>(call: C, input: { params?: Record<string, string | number>; query?: object } = {}): string {
  const path = call.path.replace(/\{(\w+)\}/g, (_, name: string) => {
    const value = input.params?.[name];
    if (value === undefined) throw new Error(`${call.method} ${call.path}: no value for {${name}}`);
    return encodeURIComponent(String(value));
  });
  const query = Object.entries(input.query ?? {})
    .filter(([, value]) => value !== undefined)
    .map(([name, value]) => `${encodeURIComponent(name)}=${encodeURIComponent(String(value))}`)
    .join('&');
  return query ? `${path}?${query}` : path;
}

/**
 * `safeParse` for what a form is about to send: on success, the value itself (not the parsed
 * output: the wire keeps what the user typed, the core normalises it), typed as the schema's input.
 */
export function checkInput<S extends z.ZodType>(schema: S, value: unknown): { success: true; input: z.input<S> } | { success: false; error: z.ZodError } {
  const result = schema.safeParse(value);
  // The value has just passed the schema: it is one of its inputs.
  return result.success ? { success: true, input: value as z.input<S> } : { success: false, error: result.error };
}

/** An answer that is not what its call declares: a drift between the site and the core. */
export class AnswerMismatchError extends Error {
  readonly call: string;
  readonly issues: z.core.$ZodIssue[];
  constructor(call: TCall, error: z.ZodError) {
    super(`${call.method} ${call.path}: the answer does not match its schema\n${z.prettifyError(error)}`);
    this.name = 'AnswerMismatchError';
    this.call = `${call.method} ${call.path}`;
    this.issues = error.issues;
  }
}

/**
 * Holds a successful answer to its call's schema when `validate` (development and tests), and
 * throws AnswerMismatchError naming the call and the issues when it differs; in production the
 * answer is trusted as it is, at no cost. Keys the schema does not name pass: the BFF adds `fv`
 * to every answer (ZBffEnvelope, envelope.ts).
 */
export function checkAnswer<C extends TCall>(call: C, data: unknown, validate: boolean): asserts data is TAnswer<C> {
  if (!validate) return;
  const result = call.answer.safeParse(data);
  if (!result.success) throw new AnswerMismatchError(call, result.error);
}
