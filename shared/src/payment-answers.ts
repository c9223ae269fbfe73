import { z } from 'zod';
import { ZOk, ZWalletEnvelope } from './api.ts';
import { ZSecondFactorNeed } from './passkeys.ts';
import { historyPageSchema } from './money.ts';
import {
  ZDepositAddress,
  ZDepositPayment,
  ZPaymentLimits,
  ZPaymentRecord,
  ZPaymentSystem,
  ZPaymentSystemGroup,
  ZPurchaseCheckQuote,
  ZPurchaseQuote,
} from './payments.ts';
import { ZWithdrawal, ZWithdrawLimits } from './withdraw.ts';

/* The answers of the deposit, purchase and withdrawal calls: the payments routes declare them with these, the site's calls type theirs by them. */

/** GET /api/deposit/ps */
export const ZDepositSystems = ZOk.extend({ currencies: z.array(ZPaymentSystemGroup) });

/** POST /api/deposit/integration_json: a payment to follow, or a chain address to send to. */
export const ZDepositOpened = ZOk.extend({ payment: ZDepositPayment.nullable(), address: ZDepositAddress.nullable() });

/** POST /api/deposit/integration_json/check */
export const ZPaymentChecked = ZOk.extend({ payment: ZDepositPayment, quote: ZPurchaseQuote.nullable() });

/** POST /api/{x}/check (deposit, purchase) */
export const ZPaymentFormCheck = ZOk.extend({
  ok: z.boolean(),
  currency: z.string(),
  fee: z.string().nullable(),
  receive: z.string().nullable(),
  limits: ZPaymentLimits,
  /** Field → localized message; `_` for the whole form. */
  fields: z.record(z.string(), z.string()),
  message: z.string().nullable(),
  quote: ZPurchaseCheckQuote.nullable(),
});

/** GET /api/deposit/history and /api/payment/history (JSON) */
export const ZPaymentHistoryResponse = ZOk.extend(historyPageSchema(ZPaymentRecord).shape);

/** GET /api/withdraw/history (JSON) */
export const ZWithdrawHistoryResponse = ZOk.extend(historyPageSchema(ZWithdrawal).shape);

/** GET /api/purchase/ps/{x} */
export const ZPurchaseSystems = ZOk.extend({ buy: z.string(), systems: z.array(ZPaymentSystem) });

/** POST /api/purchase/integration_json */
export const ZPurchaseOpened = ZOk.extend({ payment: ZDepositPayment, quote: ZPurchaseQuote });

/** GET /api/withdraw/ps */
export const ZWithdrawSystems = ZOk.extend({
  currencies: z.array(ZPaymentSystemGroup),
  limits: ZWithdrawLimits,
  /** Withdrawals are paused until then after a security change; null when they are not. */
  blocked_until: z.string().nullable(),
  /** The form asks for the second factor: a code (TOTP on) or a passkey. */
  ...ZSecondFactorNeed,
  /** The caller's requests still under way. */
  open: z.array(ZWithdrawal),
});

/** POST /api/withdraw/check */
export const ZWithdrawCheckResponse = ZOk.extend({
  ok: z.boolean(),
  currency: z.string(),
  fee: z.string().nullable(),
  receive: z.string().nullable(),
  limits: ZWithdrawLimits,
  /** Field → localized message; `_` for the whole form. */
  fields: z.record(z.string(), z.string()),
  message: z.string().nullable(),
});

/** GET /api/withdraw/status/{id} */
export const ZWithdrawalResponse = ZOk.extend({ withdrawal: ZWithdrawal });

/** POST /api/withdraw/form/{id} and /api/withdraw/cancel/{id} */
export const ZWithdrawDone = ZOk.extend({ message: z.string(), withdrawal: ZWithdrawal, ...ZWalletEnvelope.shape });
