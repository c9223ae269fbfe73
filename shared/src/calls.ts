import { z } from 'zod';
import {
  ZApiError,
  ZOpsAuditQuery,
  ZOpsChatReportsResponse,
  ZOpsClaimResponse,
  ZOpsQueuesResponse,
  ZOpsDashboardResponse,
  ZOpsReconciliationQuery,
  ZOpsReconciliationResponse,
  ZOpsSuspenseAdjustBody,
  ZOpsSuspenseExplainBody,
  ZOpsSuspenseResponse,
  ZOpsWithdrawalDecision,
  ZOpsBankMatchBody,
  ZOpsBankMatchResponse,
  ZOpsChainReleaseResponse,
  ZOpsPaymentsQuery,
  ZOpsPaymentsResponse,
  ZOpsWebhookReplayResponse,
  ZOpsWithdrawalRejectBody,
  ZOpsWithdrawalsResponse,
  ZOpsReportResolveBody,
  ZOpsSavedRepliesResponse,
  ZOpsSupportListQuery,
  ZOpsSupportListResponse,
  ZOpsSupportReplyBody,
  ZOpsSupportReplyResponse,
  ZOpsSupportThreadResponse,
  ZOpsAuditResponse,
  ZOpsEnrolFinishBody,
  ZOpsLocaleBody,
  ZOpsEnrolStartBody,
  ZOpsEnrolStartResponse,
  ZOpsMeResponse,
  ZOpsSignInBody,
  ZOpsPasskeyAddBody,
  ZOpsPasskeysResponse,
  ZOpsStepUpBody,
  ZOpsKycClaimResponse,
  ZOpsKycDecisionResponse,
  ZOpsKycQueueResponse,
  ZOpsKycRejectBody,
  ZOpsKycReviewResponse,
  ZOpsBlockWithdrawalsBody,
  ZOpsCustomerActionBody,
  ZOpsCustomerNoteBody,
  ZOpsCustomerResponse,
  ZOpsCustomerSearchQuery,
  ZOpsCustomerSearchResponse,
  ZOpsOperatorsResponse,
  ZOpsProposeBody,
  ZOpsRequestResponse,
  ZOpsRequestsQuery,
  ZOpsRequestsResponse,
  ZOpsNotificationBody,
  ZOpsNotificationPreviewBody,
  ZOpsNotificationPreviewResponse,
  ZOpsNotificationResponse,
  ZOpsNotificationsResponse,
  ZOpsSiteConfigResponse,
  ZOpsReferralConfigResponse,
  ZOpsRateBody,
  ZOpsCardCreateBody,
  ZOpsLimitsResponse,
  ZOpsMoneyConfigResponse,
  ZOpsFooterResponse,
  ZOpsFooterLogoFields,
  ZOpsFooterRemoveBody,
  ZOpsRateResponse,
  ZOpsRatesResponse,
  ZOpsPaymentEnableBody,
  ZOpsCardEnableBody,
  ZOpsCardProductsResponse,
  ZOpsArticleBody,
  ZOpsMenuItemBody,
  ZOpsMenuRemoveBody,
  ZOpsMenusResponse,
  ZOpsArticlePreviewBody,
  ZOpsArticlePreviewResponse,
  ZOpsArticleResponse,
  ZOpsArticlesResponse,
  ZOpsPaymentSystemsResponse,
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
  ZPasskeyAddBody,
  ZPasskeyOptionsResponse,
  ZPasskeySignInBody,
  ZSecondFactorBody,
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
  ZPrivacyResponse,
  ZDataExportBody,
  ZPrivacyAnswer,
  ZCloseAccountBody,
  ZCloseAccountResponse,
  ZAntiPhishingBody,
  ZAntiPhishingResponse,
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
  ZRateCandlesQuery,
  ZRateCandlesResponse,
  ZRateSummaryResponse,
  ZRefereeListResponse,
  ZReferralInfoResponse,
  ZReferralMailingBody,
  ZReferralMailingResponse,
  ZRegisterBody,
  ZResetPasswordBody,
  ZRevokeOthersResponse,
  ZSecondFactorLoginBody,
  ZSignInChallengeBody,
  ZSecurityMessage,
  ZSignInReport,
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
  ZWithdrawBook,
  ZWithdrawBookAnswer,
  ZWithdrawDestinationBody,
  ZWithdrawAllowlistBody,
  ZArticleResponse,
  ZExchangeHistoryResponse,
  ZHistoryQuery,
  ZTransferHistoryResponse,
  ZWithdrawHistoryQuery,
  ZApiKeysResponse,
  ZApiKeyCreateBody,
  ZApiKeyCreated,
  ZApiKeyRevoked,
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

// The shapes most declarations take: an answer only, a JSON body, a urlencoded form, a query.
const answers = <A extends z.ZodType>(answer: A) => ({ answer });
const json = <B extends z.ZodType, A extends z.ZodType>(body: B, answer: A) => ({ body, answer });
const form = <B extends z.ZodType, A extends z.ZodType>(body: B, answer: A) => ({ body, encoding: 'form' as const, answer });
const byQuery = <Q extends z.ZodType, A extends z.ZodType>(query: Q, answer: A) => ({ query, answer });

export const CALLS = declareCalls({
  // ---- Site, language, notifications, content
  'POST /api/lang': json(ZLangBody, ZLangResponse),
  'POST /api/notify/close': json(ZNotifyCloseBody, ZNotifyCloseResponse),
  'GET /api/content/menu': answers(ZMenuResponse),
  'GET /api/content/article/{name}': answers(ZArticleResponse),
  'GET /api/dev/mailbox': byQuery(ZDevMailboxQuery, ZDevMailboxResponse),

  // ---- Auth
  'GET /api/auth/check': answers(ZAuthCheckResponse),
  'POST /api/auth/register': json(ZRegisterBody, ZAuthMessage),
  'POST /api/auth/login_by_password': json(ZLoginByPasswordBody, ZPasswordSignInResponse),
  'POST /api/auth/login_second_factor': json(ZSecondFactorLoginBody, ZAuthState),
  'POST /api/auth/login_second_factor/options': json(ZSignInChallengeBody, ZPasskeyOptionsResponse),
  'POST /api/auth/passkey/options': json(ZEmptyBody, ZPasskeyOptionsResponse),
  'POST /api/auth/passkey': json(ZPasskeySignInBody, ZAuthState),
  'POST /api/auth/login': json(ZEmailBody, ZAuthMessage),
  'GET /api/auth/login/{token}': answers(ZLinkPreview),
  'POST /api/auth/login/{token}': json(ZLinkSpendBody, ZPasswordSignInResponse),
  'GET /api/auth/confirm/{token}': answers(ZLinkPreview),
  'POST /api/auth/confirm/{token}': json(ZLinkSpendBody, ZPasswordSignInResponse),
  'POST /api/auth/reset': json(ZEmailBody, ZAuthMessage),
  'GET /api/auth/reset/{token}': answers(ZOk),
  'POST /api/auth/reset/{token}': json(ZResetPasswordBody, ZPasswordSignInResponse),
  'POST /api/auth/change': json(ZChangePasswordBody, ZAuthState),
  'POST /api/auth/logout': json(ZEmptyBody, ZAuthState),

  // ---- Account, settings, security
  'GET /api/user/info': answers(ZUserInfoResponse),
  'POST /api/user/info': form(ZUserInfoUpdate, ZUserInfoResponse),
  'GET /api/config/mailing': answers(ZMailingResponse),
  'POST /api/config/mailing': json(ZMailingBody, ZMailingResponse),
  'GET /api/user/privacy': answers(ZPrivacyResponse),
  'POST /api/user/privacy/export': json(ZDataExportBody, ZPrivacyAnswer),
  'POST /api/user/close': json(ZCloseAccountBody, ZCloseAccountResponse),
  'POST /api/config/anti_phishing': json(ZAntiPhishingBody, ZAntiPhishingResponse),
  'GET /api/mail/unsubscribe': byQuery(ZUnsubscribeQuery, ZUnsubscribeResponse),
  'POST /api/mail/unsubscribe': byQuery(ZUnsubscribeQuery, ZUnsubscribeResponse),
  'GET /api/wallets': answers(ZWalletsResponse),
  'GET /api/security': answers(ZSecurityResponse),
  'POST /api/security/totp/setup': json(ZEmptyBody, ZTotpSetupResponse),
  'POST /api/security/totp/enable': json(ZCodeBody, ZTotpEnableResponse),
  'POST /api/security/totp/disable': json(ZSecondFactorBody, ZSecurityMessage),
  'POST /api/security/recovery_codes': json(ZSecondFactorBody, ZTotpEnableResponse),
  'POST /api/security/passkeys/options': json(ZEmptyBody, ZPasskeyOptionsResponse),
  'POST /api/security/passkeys': json(ZPasskeyAddBody, ZSecurityMessage),
  'POST /api/security/passkeys/{id}/remove': json(ZSecondFactorBody, ZSecurityMessage),
  'POST /api/security/second_factor/options': json(ZEmptyBody, ZPasskeyOptionsResponse),
  'POST /api/security/sessions/{id}/revoke': json(ZEmptyBody, ZOk),
  'POST /api/security/sessions/revoke_others': json(ZEmptyBody, ZRevokeOthersResponse),
  'GET /api/security/api_keys': answers(ZApiKeysResponse),
  'POST /api/security/api_keys': json(ZApiKeyCreateBody, ZApiKeyCreated),
  'POST /api/security/api_keys/{id}/revoke': json(ZEmptyBody, ZApiKeyRevoked),
  'GET /api/user/email': answers(ZEmailStateResponse),
  'POST /api/user/email': json(ZEmailChangeBody, ZSecurityMessage),
  'POST /api/user/email/confirm/{token}': json(ZEmptyBody, ZSecurityMessage),
  'POST /api/user/email/report/{token}': json(ZEmptyBody, ZSecurityMessage),
  'POST /api/auth/sign_in/report/{token}': json(ZEmptyBody, ZSignInReport),
  'GET /api/verification': answers(ZVerificationResponse),
  'GET /api/verification/{type}/new': answers(ZVerificationResponse),
  'POST /api/verification/{type}/upload': answers(ZVerificationResponse),
  'POST /api/verification/{type}/submit': json(ZVerificationSubmit, ZVerificationResponse),

  // ---- Exchange, transfer
  'GET /api/exchange/list': byQuery(ZExchangeListQuery, ZExchangeListResponse),
  'POST /api/exchange/check': form(ZExchangeCheckBody, ZQuoteResponse),
  'POST /api/exchange/landing': form(ZExchangeCheckBody, ZQuoteResponse),
  'GET /api/exchange/all': byQuery(ZExchangeAllQuery, ZExchangeAllPreviewResponse),
  'GET /api/exchange/all/{currency}': byQuery(ZExchangeAllQuery, ZExchangeAllPreviewResponse),
  'POST /api/exchange/all/{currency}': form(ZExchangeAllBody, ZExchangeAllResponse),
  'GET /api/exchange/rates': answers(ZRateSummaryResponse),
  'GET /api/exchange/rates/{src}/{dst}': byQuery(ZRateCandlesQuery, ZRateCandlesResponse),
  'GET /api/exchange/{src}/{dst}': answers(ZPairResponse),
  'POST /api/exchange/{src}/{dst}': form(ZExchangeBody, ZExchangeDoneResponse),
  'GET /api/exchange/history': byQuery(ZHistoryQuery, ZExchangeHistoryResponse),
  'GET /api/transfer/history': byQuery(ZHistoryQuery, ZTransferHistoryResponse),
  'GET /api/transfer': answers(ZTransferInfoResponse),
  'POST /api/transfer/check': form(ZTransferBody, ZTransferCheck),
  'POST /api/transfer': form(ZTransferBody, ZTransferDoneResponse),

  // ---- Deposit, purchase, withdrawal
  'GET /api/deposit/ps': answers(ZDepositSystems),
  'POST /api/deposit/integration_json': form(ZDepositCreateBody, ZDepositOpened),
  'POST /api/deposit/integration_json/check': json(ZPaymentCheckBody, ZPaymentChecked),
  'POST /api/{x}/check': form(ZPaymentFormCheckBody, ZPaymentFormCheck),
  'GET /api/deposit/history': byQuery(ZPaymentHistoryQuery, ZPaymentHistoryResponse),
  'GET /api/payment/history': byQuery(ZPaymentHistoryQuery, ZPaymentHistoryResponse),
  'GET /api/withdraw/history': byQuery(ZWithdrawHistoryQuery, ZWithdrawHistoryResponse),
  'GET /api/purchase/ps/{x}': answers(ZPurchaseSystems),
  'POST /api/purchase/integration_json': form(ZPurchaseBody, ZPurchaseOpened),
  'GET /api/withdraw/ps': answers(ZWithdrawSystems),
  'POST /api/withdraw/check': form(ZWithdrawCheckBody, ZWithdrawCheckResponse),
  'POST /api/withdraw/form/{id}': form(ZWithdrawFormBody, ZWithdrawDone),
  'GET /api/withdraw/status/{id}': answers(ZWithdrawalResponse),
  'POST /api/withdraw/cancel/{id}': form(ZEmptyBody, ZWithdrawDone),
  'GET /api/withdraw/book': answers(ZWithdrawBook),
  'POST /api/withdraw/book': json(ZWithdrawDestinationBody, ZWithdrawBookAnswer),
  'POST /api/withdraw/book/confirm/{token}': json(ZEmptyBody, ZWithdrawBookAnswer),
  'POST /api/withdraw/book/{id}/remove': json(ZEmptyBody, ZWithdrawBookAnswer),
  'POST /api/withdraw/book/allowlist': json(ZWithdrawAllowlistBody, ZWithdrawBookAnswer),

  // ---- Cards
  'GET /api/card': answers(ZCardCatalogueResponse),
  'GET /api/card/order': answers(ZCardOrdersResponse),
  'GET /api/card/order/{id}': answers(ZCardOrderOneResponse),
  'POST /api/card/order': form(ZCardOrderBody, ZCardOrderResponse),
  'POST /api/card/order/confirm': form(ZCardBody, ZCardOrderResponse),
  'POST /api/card/order/cancel': form(ZCardBody, ZCardOrderResponse),
  'GET /api/card/my': answers(ZCardListResponse),
  'GET /api/card/details/{id}': answers(ZCardDetailsResponse),
  'POST /api/card/reveal': form(ZCardRevealBody, ZCardRevealResponse),
  'POST /api/card/freeze': form(ZCardBody, ZCardChangeResponse),
  'POST /api/card/unfreeze': form(ZCardBody, ZCardChangeResponse),
  'POST /api/card/close': form(ZCardCloseBody, ZCardChangeResponse),
  'POST /api/card/topup': form(ZCardMoveBody, ZCardChangeResponse),
  'POST /api/card/withdraw': form(ZCardMoveBody, ZCardChangeResponse),

  // ---- Referral
  'GET /api/referral/invite': answers(ZInviteResponse),
  'POST /api/referral/invite': json(ZInviteBody, ZInviteResponse),
  'GET /api/referral/info': answers(ZReferralInfoResponse),
  'GET /api/referral/list': byQuery(ZPageQuery, ZRefereeListResponse),
  'GET /api/referral/bonus/history': byQuery(ZBonusHistoryQuery, ZBonusHistoryResponse),
  'POST /api/referral/mailing': json(ZReferralMailingBody, ZReferralMailingResponse),

  // ---- Chats
  'GET /api/support': byQuery(ZChatPageQuery, ZSupportResponse),
  'POST /api/support': json(ZChatSendBody, ZChatSentResponse),
  'POST /api/support/read': json(ZChatReadBody, ZChatReadResponse),
  'GET /api/chat/list': answers(ZChatListResponse),
  'GET /api/chat/private/{id}': byQuery(ZChatPageQuery, ZPrivateChatResponse),
  'POST /api/chat/private/{id}': json(ZChatSendBody, ZChatSentResponse),
  'POST /api/chat/private/read/{id}': json(ZChatReadBody, ZChatReadResponse),
  'POST /api/chat/private/block/{id}': json(ZChatBlockBody, ZChatBlockResponse),
  'POST /api/chat/private/report/{id}': json(ZChatReportBody, ZOk),

  // ---- The back office (/api/ops: the operator's own session)
  'POST /api/ops/enrol/start': json(ZOpsEnrolStartBody, ZOpsEnrolStartResponse),
  'POST /api/ops/enrol/finish': json(ZOpsEnrolFinishBody, ZOk),
  'POST /api/ops/sign-in': json(ZOpsSignInBody, ZOpsMeResponse),
  'POST /api/ops/passkey/options': json(ZEmptyBody, ZPasskeyOptionsResponse),
  'GET /api/ops/passkeys': answers(ZOpsPasskeysResponse),
  'POST /api/ops/passkeys/options': json(ZEmptyBody, ZPasskeyOptionsResponse),
  'POST /api/ops/passkeys': json(ZOpsPasskeyAddBody, ZOpsPasskeysResponse),
  'POST /api/ops/passkeys/{id}/remove': answers(ZOpsPasskeysResponse),
  'POST /api/ops/sign-out': answers(ZOk),
  'GET /api/ops/me': answers(ZOpsMeResponse),
  'POST /api/ops/locale': json(ZOpsLocaleBody, ZOk),
  'POST /api/ops/step-up': json(ZOpsStepUpBody, ZOk),
  'GET /api/ops/audit': byQuery(ZOpsAuditQuery, ZOpsAuditResponse),
  'GET /api/ops/kyc': answers(ZOpsKycQueueResponse),
  'POST /api/ops/kyc/{id}/claim': answers(ZOpsKycClaimResponse),
  'GET /api/ops/kyc/{id}': answers(ZOpsKycReviewResponse),
  'POST /api/ops/kyc/{id}/approve': answers(ZOpsKycDecisionResponse),
  'POST /api/ops/kyc/{id}/reject': json(ZOpsKycRejectBody, ZOpsKycDecisionResponse),
  'GET /api/ops/customers': byQuery(ZOpsCustomerSearchQuery, ZOpsCustomerSearchResponse),
  'GET /api/ops/customers/{account_id}': answers(ZOpsCustomerResponse),
  'POST /api/ops/customers/{account_id}/reveal': json(ZOpsCustomerActionBody, ZOpsCustomerResponse),
  'POST /api/ops/customers/{account_id}/block-sign-in': json(ZOpsCustomerActionBody, ZOk),
  'POST /api/ops/customers/{account_id}/unblock-sign-in': json(ZOpsCustomerActionBody, ZOk),
  'POST /api/ops/customers/{account_id}/block-withdrawals': json(ZOpsBlockWithdrawalsBody, ZOk),
  'POST /api/ops/customers/{account_id}/revoke-sessions': json(ZOpsCustomerActionBody, ZOk),
  'POST /api/ops/customers/{account_id}/notes': json(ZOpsCustomerNoteBody, ZOk),
  'GET /api/ops/requests': byQuery(ZOpsRequestsQuery, ZOpsRequestsResponse),
  'POST /api/ops/requests': json(ZOpsProposeBody, ZOpsRequestResponse),
  'POST /api/ops/requests/{id}/approve': answers(ZOpsRequestResponse),
  'POST /api/ops/requests/{id}/decline': answers(ZOpsRequestResponse),
  'POST /api/ops/requests/{id}/withdraw': answers(ZOpsRequestResponse),
  'GET /api/ops/operators': answers(ZOpsOperatorsResponse),
  'GET /api/ops/queues': answers(ZOpsQueuesResponse),
  'GET /api/ops/dashboard': answers(ZOpsDashboardResponse),
  'GET /api/ops/reconciliation': byQuery(ZOpsReconciliationQuery, ZOpsReconciliationResponse),
  'POST /api/ops/reconciliation/suspense/{id}/explain': json(ZOpsSuspenseExplainBody, ZOpsSuspenseResponse),
  'POST /api/ops/reconciliation/suspense/{id}/adjust': json(ZOpsSuspenseAdjustBody, ZOpsSuspenseResponse),
  'GET /api/ops/withdrawals': answers(ZOpsWithdrawalsResponse),
  'POST /api/ops/withdrawals/{id}/claim': answers(ZOpsClaimResponse),
  'POST /api/ops/withdrawals/{id}/approve': answers(ZOpsWithdrawalDecision),
  'POST /api/ops/withdrawals/{id}/reject': json(ZOpsWithdrawalRejectBody, ZOpsWithdrawalDecision),
  'POST /api/ops/withdrawals/{id}/retry': answers(ZOpsWithdrawalDecision),
  'POST /api/ops/withdrawals/{id}/mark-failed': answers(ZOpsWithdrawalDecision),
  'GET /api/ops/payments': byQuery(ZOpsPaymentsQuery, ZOpsPaymentsResponse),
  'POST /api/ops/payments/webhooks/{id}/replay': answers(ZOpsWebhookReplayResponse),
  'POST /api/ops/payments/bank/{id}/match': json(ZOpsBankMatchBody, ZOpsBankMatchResponse),
  'POST /api/ops/payments/callbacks/{id}/replay': answers(ZOpsWebhookReplayResponse),
  'POST /api/ops/payments/chain/{id}/release': answers(ZOpsChainReleaseResponse),
  'GET /api/ops/support': byQuery(ZOpsSupportListQuery, ZOpsSupportListResponse),
  'GET /api/ops/support/replies': answers(ZOpsSavedRepliesResponse),
  'GET /api/ops/support/{account}': answers(ZOpsSupportThreadResponse),
  'POST /api/ops/support/{account}/claim': answers(ZOpsClaimResponse),
  'POST /api/ops/support/{account}/release': answers(ZOk),
  'POST /api/ops/support/{account}/reply': json(ZOpsSupportReplyBody, ZOpsSupportReplyResponse),
  'POST /api/ops/support/{account}/close': answers(ZOk),
  'POST /api/ops/support/{account}/reopen': answers(ZOk),
  'GET /api/ops/chat-reports': answers(ZOpsChatReportsResponse),
  'POST /api/ops/chat-reports/{id}/resolve': json(ZOpsReportResolveBody, ZOk),
  'GET /api/ops/config/site': answers(ZOpsSiteConfigResponse),
  'GET /api/ops/config/referral': answers(ZOpsReferralConfigResponse),
  'GET /api/ops/config/rates': answers(ZOpsRatesResponse),
  'POST /api/ops/config/rates': json(ZOpsRateBody, ZOpsRateResponse),
  'GET /api/ops/config/payments': answers(ZOpsPaymentSystemsResponse),
  'POST /api/ops/config/payments/enabled': json(ZOpsPaymentEnableBody, ZOpsPaymentSystemsResponse),
  'GET /api/ops/config/cards': answers(ZOpsCardProductsResponse),
  'POST /api/ops/config/cards/enabled': json(ZOpsCardEnableBody, ZOpsCardProductsResponse),
  'POST /api/ops/config/cards': json(ZOpsCardCreateBody, ZOpsCardProductsResponse),
  'GET /api/ops/config/limits': answers(ZOpsLimitsResponse),
  'GET /api/ops/config/money': answers(ZOpsMoneyConfigResponse),
  'GET /api/ops/config/footer': answers(ZOpsFooterResponse),
  'POST /api/ops/config/footer': json(ZOpsFooterLogoFields, ZOpsFooterResponse),
  'POST /api/ops/config/footer/remove': json(ZOpsFooterRemoveBody, ZOpsFooterResponse),
  'GET /api/ops/config/articles': answers(ZOpsArticlesResponse),
  'GET /api/ops/config/articles/{name}/{locale}': answers(ZOpsArticleResponse),
  'POST /api/ops/config/articles/preview': json(ZOpsArticlePreviewBody, ZOpsArticlePreviewResponse),
  'POST /api/ops/config/articles': json(ZOpsArticleBody, ZOpsArticleResponse),
  'GET /api/ops/config/menus': answers(ZOpsMenusResponse),
  'POST /api/ops/config/menus': json(ZOpsMenuItemBody, ZOpsMenusResponse),
  'POST /api/ops/config/menus/remove': json(ZOpsMenuRemoveBody, ZOpsMenusResponse),
  'GET /api/ops/config/notifications': answers(ZOpsNotificationsResponse),
  'POST /api/ops/config/notifications': json(ZOpsNotificationBody, ZOpsNotificationResponse),
  'POST /api/ops/config/notifications/preview': json(ZOpsNotificationPreviewBody, ZOpsNotificationPreviewResponse),
  'POST /api/ops/config/notifications/{id}/delete': answers(ZOk),
  'POST /api/ops/config/notifications/scheduled/{id}/cancel': answers(ZOk),
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
