import { z } from 'zod';
import { ZBalance, ZLocale, ZNotification, ZSiteSettings, ZUnreadMsgs, ZUser, ZWallet } from './envelope.ts';
import { ZAuthMessage, ZAuthState } from './auth.ts';
import {
  ZCurrencyCode,
  ZCurrencyInfo,
  ZExchangeAllBody,
  ZExchangeBatch,
  ZExchangePair,
  ZExchangeQuote,
  ZExchangeRecord,
  ZTransferCurrency,
  ZTransferRecord,
  historyPageSchema,
} from './money.ts';

/*
 * Answers shared by many calls (spec §7): a plain ok, and the envelope keys a call adds to its
 * own answer. Response schemas list every key they send: core serialises through them, and
 * outside production a key a schema does not declare is an error.
 */

export const ZOk = z.object({ status: z.literal('ok') });

/** `wallets` + `total_balance`: every answer that changes or shows balances. */
export const ZWalletEnvelope = z.object({ wallets: z.array(ZWallet), total_balance: ZBalance });
export type TWalletEnvelope = z.infer<typeof ZWalletEnvelope>;

/** GET /api/wallets, POST /api/wallets/display_currency */
export const ZWalletsResponse = ZOk.extend(ZWalletEnvelope.shape);

/** GET /api/site */
export const ZSiteResponse = z.object({ site_settings: ZSiteSettings });

/** GET /api/notify */
export const ZNotificationsResponse = z.object({ notifications: z.array(ZNotification) });

/** POST /api/lang: `user` when signed in (its stored language changed). */
export const ZLangResponse = ZOk.extend({ locale: ZLocale, user: ZUser.optional() });

/** A numeric id in a path (exchanges, batches, …): a malformed one names nothing, like a missing one. */
export const ZIdParams = z.object({ id: z.string().regex(/^\d{1,18}$/, 'validation.invalid') });

// ---- Auth -------------------------------------------------------------------------------------

/** GET /api/auth/check: the state, the open notifications (only when any) and, signed in, the wallets. */
export const ZAuthCheckResponse = ZAuthState.extend({
  notifications: z.array(ZNotification).optional(),
  unread_msgs: ZUnreadMsgs.optional(),
  ...ZWalletEnvelope.partial().shape,
});

/** GET|POST /api/auth/send_confirmation_instructions */
export const ZConfirmationResponse = ZAuthMessage.extend({ email_confirmed: z.boolean() });

// ---- Exchange ---------------------------------------------------------------------------------

/** GET /api/exchange/list */
export const ZExchangeListResponse = ZOk.extend({ search: z.string(), pairs: z.array(ZExchangePair), currencies: z.array(ZCurrencyInfo) });

/** POST /api/exchange/check and /api/exchange/landing */
export const ZQuoteResponse = ZOk.extend({ quote: ZExchangeQuote });

/** GET /api/exchange/{src}/{dst}: the pair, both currencies and, signed in, both balances. */
export const ZPairResponse = ZOk.extend({
  pair: ZExchangePair,
  src: ZCurrencyInfo,
  dst: ZCurrencyInfo,
  balances: z.object({ src: z.string(), dst: z.string() }).optional(),
});

/** POST /api/exchange/{src}/{dst} */
export const ZExchangeDoneResponse = ZOk.extend({ message: z.string(), exchange: ZExchangeRecord, ...ZWalletEnvelope.shape });

/** GET /api/exchange/status/{id} */
export const ZExchangeStatusResponse = ZOk.extend({ exchange: ZExchangeRecord });

/** GET /api/exchange/all[/{currency}]: what converting would give now (indicative). */
export const ZExchangeAllPreviewResponse = ZOk.extend({
  currency: z.string(),
  currencies: z.array(ZCurrencyInfo),
  preview: ZExchangeBatch,
  ...ZWalletEnvelope.shape,
});

/** GET /api/exchange/all[/{currency}]?currencies=BTC,ETH: which wallets to preview. */
export const ZExchangeAllQuery = ZExchangeAllBody.pick({ currencies: true });

/** GET|POST /api/exchange/all/{currency} */
export const ZCurrencyParams = z.object({ currency: ZCurrencyCode });

/** POST /api/exchange/all[/{currency}] */
export const ZExchangeAllResponse = ZOk.extend({ message: z.string(), batch: ZExchangeBatch, ...ZWalletEnvelope.shape });

/** GET /api/exchange/all/status/{id} */
export const ZExchangeBatchResponse = ZOk.extend({ batch: ZExchangeBatch });

/** GET /api/exchange/history (JSON; `format=csv` answers text/csv) */
export const ZExchangeHistoryResponse = ZOk.extend(historyPageSchema(ZExchangeRecord).shape);

// ---- Transfer ---------------------------------------------------------------------------------

/** GET /api/transfer: what can be sent, with the wallets. */
export const ZTransferInfoResponse = ZOk.extend({ currencies: z.array(ZTransferCurrency), ...ZWalletEnvelope.shape });

/** POST /api/transfer */
export const ZTransferDoneResponse = ZOk.extend({ message: z.string(), transfer: ZTransferRecord, ...ZWalletEnvelope.shape });

/** GET /api/transfer/history (JSON; `format=csv` answers text/csv) */
export const ZTransferHistoryResponse = ZOk.extend(historyPageSchema(ZTransferRecord).shape);

/** The CSV form of a history. */
export const ZCsv = z.string().describe('text/csv; one row per record, newest first');
