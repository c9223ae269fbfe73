import { z } from 'zod';
import { ZEmail, ZNewPassword, ZPassword } from './auth.ts';
import { ZSecondFactorCode } from './security.ts';
import { ZPasskeyAnswerText, ZPasskeyInfo, ZPasskeyNewFields } from './passkeys.ts';

/*
 * The back office's calls (/api/ops/*): operators sign in with a password and a second factor and
 * hold a session of their own, apart from customers'. The BFF keeps its token in OPS_COOKIE and
 * sends it to the core in OPS_TOKEN_HEADER on /api/ops only; the core hands a new one back in
 * the same header and says "cleared" in OPS_SESSION_STATE_HEADER.
 */

export const OPS_COOKIE = 'ops_token';
export const OPS_TOKEN_HEADER = 'x-obmen-ops-token';
export const OPS_SESSION_STATE_HEADER = 'x-obmen-ops-session';
export const OPS_API_PREFIX = '/api/ops/';
/** The back office's sign-in page. */
export const OPS_LOGIN_PATH = '/ops/login';
/** The ops cookie's life: an operator's session lasts at most 8 hours (idle 15 minutes, by the core). */
export const OPS_SESSION_MAX_S = 8 * 60 * 60;

/** What an /api/ops route asks of its caller: a permission, any signed-in operator, or nothing (sign-in). */
export const OPS_PERMISSIONS = [
  'support.reply',
  'support.view_files',
  'chat.reports',
  'kyc.review',
  'kyc.view_documents',
  'customers.view',
  'customers.view_personal',
  'customers.block',
  'customers.note',
  'audit.view',
  'operators.manage',
  'queues.view',
  'customers.reset_second_factor',
  'ledger.adjust',
  'withdrawals.review',
  'withdrawals.approve_large',
  'payments.review',
  'config.money',
  'config.site',
  'content.publish',
  'reconciliation.view',
  'reconciliation.resolve',
] as const;
export type TOpsPermission = (typeof OPS_PERMISSIONS)[number];
export type TOpsAccess = TOpsPermission | 'signed_in' | null;

/** The ops cookie: HttpOnly, SameSite=Strict, Secure on https; a session's whole life at most. */
export function opsCookie(token: string, secure: boolean): string {
  return `${OPS_COOKIE}=${token}; Max-Age=${OPS_SESSION_MAX_S}; Path=/; HttpOnly; SameSite=Strict${secure ? '; Secure' : ''}`;
}
export function clearedOpsCookie(secure: boolean): string {
  return `${OPS_COOKIE}=; Max-Age=0; Path=/; HttpOnly; SameSite=Strict${secure ? '; Secure' : ''}`;
}

/** Why an operator acts: a closed catalogue, shown in ru and en (`ops.reason.<code>`). */
export const OPS_REASONS = ['customer_request', 'fraud_suspected', 'compliance_review', 'security_incident', 'chargeback', 'duty_changed', 'other'] as const;
export const ZOpsReason = z.enum(OPS_REASONS, 'validation.invalid');
export type TOpsReason = z.infer<typeof ZOpsReason>;

/** Every action: a reason from the catalogue and, for `other`, words of the operator's own. */
export const ZOpsReasonGiven = z
  .object({ reason: ZOpsReason, text: z.string().trim().max(500, 'validation.too_long').default('') })
  .refine((body) => body.reason !== 'other' || body.text !== '', { path: ['text'], message: 'validation.required' });

/** The roles the database holds (migration 098), each a set of permissions. */
export const OPS_ROLES = ['support', 'compliance', 'finance', 'content', 'admin'] as const;
export type TOpsRole = (typeof OPS_ROLES)[number];

const ZEnrolToken = z.string().min(1, 'validation.required').max(200, 'validation.invalid');

/** POST /api/ops/enrol/start */
export const ZOpsEnrolStartBody = z.object({ token: ZEnrolToken });
export const ZOpsEnrolStartResponse = z.object({ status: z.literal('ok'), email: z.string(), secret: z.string(), otpauth_uri: z.string() });

/** POST /api/ops/enrol/finish */
export const ZOpsEnrolFinishBody = z.object({ token: ZEnrolToken, password: ZNewPassword, code: ZSecondFactorCode });

/**
 * POST /api/ops/sign-in: the password and the second factor, a TOTP code or an assertion of one
 * of the operator's passkeys (over a challenge of POST /api/ops/passkey/options).
 */
export const ZOpsSignInBody = z
  .object({ email: ZEmail, password: ZPassword, code: ZSecondFactorCode.optional(), passkey: ZPasskeyAnswerText })
  .refine((body) => body.code !== undefined || body.passkey !== undefined, { path: ['code'], message: 'validation.required' });

/** POST /api/ops/passkeys: a passkey of the signed-in operator's own. */
export const ZOpsPasskeyAddBody = z.object(ZPasskeyNewFields);
/** GET /api/ops/passkeys and the answer of adding or removing one: the operator's own passkeys. */
export const ZOpsPasskeysResponse = z.object({ status: z.literal('ok'), passkeys: z.array(ZPasskeyInfo) });
export type TOpsPasskeysResponse = z.infer<typeof ZOpsPasskeysResponse>;

export const ZOpsOperator = z.object({
  email: z.string(),
  locale: z.enum(['ru', 'en']),
  roles: z.array(z.string()),
  permissions: z.array(z.enum(OPS_PERMISSIONS)),
});
export type TOpsOperator = z.infer<typeof ZOpsOperator>;

/** GET /api/ops/me, and the answer of a sign-in */
export const ZOpsMeResponse = z.object({ status: z.literal('ok'), operator: ZOpsOperator });

/** POST /api/ops/locale: the operator's language, kept for their next sign-in and the core's messages. */
export const ZOpsLocaleBody = z.object({ locale: z.enum(['ru', 'en'], 'validation.invalid') });

/** POST /api/ops/step-up */
export const ZOpsStepUpBody = z.object({ code: ZSecondFactorCode });

/** GET /api/ops/audit */
export const ZOpsAuditQuery = z.object({
  actor: z.string().max(200).optional(),
  subject: z.string().max(200).optional(),
  action: z.string().max(100).optional(),
  from: z.iso.date().optional(),
  to: z.iso.date().optional(),
  after: z.coerce.number().int().min(0).optional(),
  /** `desc`: newest first (the back office's page), older than `before` when given; oldest first after `after` otherwise. */
  order: z.enum(['asc', 'desc']).default('asc'),
  before: z.coerce.number().int().min(1).optional(),
});
/** GET /api/ops/audit/export: a whole period of the chain (from inclusive, to exclusive, UTC days). */
export const ZOpsAuditExportQuery = z.object({ from: z.iso.date('validation.invalid'), to: z.iso.date('validation.invalid') });
/** JSON Lines: each row with its hashes and the exact content its hash covers (`ops audit:verify <file>` checks it offline). */
export const ZJsonLines = z.string().describe('application/jsonl; one audit row per line, oldest first');
export const ZOpsAuditRow = z.object({
  id: z.number().int(),
  at: z.string(),
  actor: z.string(),
  action: z.string(),
  subject: z.string().nullable(),
  outcome: z.enum(['done', 'denied', 'viewed']),
  prev_hash: z.string().nullable(),
  hash: z.string(),
  content: z.string(),
});
export const ZOpsAuditResponse = z.object({ status: z.literal('ok'), rows: z.array(ZOpsAuditRow) });
export type TOpsAuditRow = z.infer<typeof ZOpsAuditRow>;
/** What the audit page filters by (its address). */
export type TOpsAuditFilter = Pick<z.input<typeof ZOpsAuditQuery>, 'actor' | 'subject' | 'action' | 'from' | 'to'>;
