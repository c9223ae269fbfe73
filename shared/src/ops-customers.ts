import { z } from 'zod';
import { ZUserInfo } from './auth.ts';
import { ZOpsAuditRow, ZOpsReasonGiven } from './ops.ts';
import { ZSecurityResponse } from './security.ts';

/*
 * The back office's customer view (/api/ops/customers*): find a customer, see everything about
 * them on one page, act on them. Personal data (names, phone, birth date, address) comes masked
 * unless the operator reveals it (a permission, a fresh second factor, an audit row).
 */

/** GET /api/ops/customers?q= : account id, e-mail, name, phone, deposit address or document number. */
export const ZOpsCustomerSearchQuery = z.object({ q: z.string().trim().min(2, 'validation.invalid').max(200, 'validation.too_long') });
export const ZOpsCustomerHit = z.object({
  account_id: z.number().int(),
  email: z.string(),
  name: z.string().nullable(),
  level: z.number().int(),
  created_at: z.string(),
  matched: z.enum(['account_id', 'email', 'name', 'phone', 'address', 'document']),
});
export type TOpsCustomerHit = z.infer<typeof ZOpsCustomerHit>;
export const ZOpsCustomerSearchResponse = z.object({ status: z.literal('ok'), customers: z.array(ZOpsCustomerHit) });

export const ZOpsCustomerParams = z.object({ account_id: z.coerce.number().int().min(10000000, 'validation.invalid').max(99999999, 'validation.invalid') });

const ZMoneyRow = z.object({ currency: z.string(), amount: z.string() });
export const ZOpsCustomer = z.object({
  account_id: z.number().int(),
  email: z.string(),
  email_confirmed: z.boolean(),
  locale: z.enum(['ru', 'en']),
  created_at: z.string(),
  level: z.number().int(),
  /** Masked (`И***`) unless revealed. */
  personal: ZUserInfo.pick({
    first_name: true,
    last_name: true,
    middle_name: true,
    birth_date: true,
    phone: true,
    country: true,
    city: true,
    address: true,
  }).extend({
    revealed: z.boolean(),
  }),
  sign_in_blocked_at: z.string().nullable(),
  /** The operator's block (the security hold after a password change shows in `security`). */
  withdrawals_blocked_until: z.string().nullable(),
  verification: z
    .object({
      status: z.enum(['draft', 'submitted', 'approved', 'rejected']),
      type: z.string(),
      submitted_at: z.string().nullable(),
      decided_at: z.string().nullable(),
    })
    .nullable(),
  wallets: z.array(z.object({ currency: z.string(), balance: z.string(), held: z.string() })),
  ledger: z.array(
    z.object({
      transaction_id: z.string(),
      at: z.string(),
      kind: z.string(),
      memo: z.string().nullable(),
      account: z.enum(['user', 'hold']),
      ...ZMoneyRow.shape,
    }),
  ),
  payments: z.array(z.object({ id: z.string(), at: z.string(), kind: z.enum(['deposit', 'purchase', 'withdrawal']), state: z.string(), ...ZMoneyRow.shape })),
  exchanges: z.array(z.object({ id: z.string(), at: z.string(), from: ZMoneyRow, to: ZMoneyRow })),
  transfers: z.array(z.object({ id: z.string(), at: z.string(), direction: z.enum(['in', 'out']), counterparty: z.number().int(), ...ZMoneyRow.shape })),
  cards: z.array(z.object({ id: z.string(), at: z.string(), product: z.string(), state: z.string(), last4: z.string().nullable() })),
  referral: z.object({ invited: z.number().int(), referred_by: z.number().int().nullable() }),
  security: ZSecurityResponse.pick({ second_factor: true, sessions: true, sign_ins: true, withdrawals_blocked_until: true }),
  support: z.object({ messages: z.number().int(), last_at: z.string().nullable(), reports_against: z.number().int() }),
  notes: z.array(z.object({ at: z.string(), operator: z.string(), text: z.string() })),
  audit: z.array(ZOpsAuditRow.pick({ id: true, at: true, actor: true, action: true, outcome: true })),
});
export type TOpsCustomer = z.infer<typeof ZOpsCustomer>;
export const ZOpsCustomerResponse = z.object({ status: z.literal('ok'), customer: ZOpsCustomer });

/** POST /api/ops/customers/{account_id}/block-sign-in and unblock-sign-in, revoke-sessions, reveal */
export const ZOpsCustomerActionBody = ZOpsReasonGiven;
/** POST /api/ops/customers/{account_id}/block-withdrawals: until a day (UTC midnight); a past or empty day lifts it. */
export const ZOpsBlockWithdrawalsBody = ZOpsReasonGiven.and(z.object({ until: z.iso.date('validation.invalid').nullable() }));
/** POST /api/ops/customers/{account_id}/notes */
export const ZOpsCustomerNoteBody = z.object({ text: z.string().trim().min(1, 'validation.required').max(2000, 'validation.too_long') });
