import { z } from 'zod';
import { ZPasskeyAnswerText, ZSecondFactorNeed } from './passkeys.ts';

/*
 * Leaving with your data (/settings/privacy): exports of everything the exchange holds about the
 * account, made by a job and offered for 24 hours, and closing the account.
 */

/** How long a ready export may be downloaded. */
export const DATA_EXPORT_TTL_MS = 24 * 60 * 60_000;
/** How long a closed account's data are kept before they are erased (the legal period). */
export const CLOSED_ACCOUNT_RETENTION_DAYS = 5 * 365;

export const ZDataExport = z.object({
  id: z.uuid(),
  state: z.enum(['queued', 'ready', 'failed', 'expired']),
  with_files: z.boolean(),
  size: z.number().int().nullable(),
  created_at: z.string(),
  expires_at: z.string().nullable(),
});
export type TDataExport = z.infer<typeof ZDataExport>;

/** GET /api/user/privacy: the exports, and whether the account may be closed now (or why not: i18n keys). */
export const ZPrivacyResponse = z.object({
  status: z.literal('ok'),
  exports: z.array(ZDataExport),
  closable: z.object({ ok: z.boolean(), blockers: z.array(z.string()) }),
  ...ZSecondFactorNeed,
});
export type TPrivacyResponse = z.infer<typeof ZPrivacyResponse>;

/** POST /api/user/privacy/export */
export const ZDataExportBody = z.object({ with_files: z.boolean().default(false) });
export const ZPrivacyAnswer = ZPrivacyResponse.extend({ message: z.string() });

/** POST /api/user/close: the account's e-mail typed again, and the second factor's code when 2FA is on. */
export const ZCloseAccountBody = z.object({
  email: z.string().trim().min(1, 'validation.required').max(254, 'validation.too_long'),
  code: z.string().trim().max(64, 'validation.invalid').optional(),
  passkey: ZPasskeyAnswerText,
});
export type TCloseAccountBody = z.infer<typeof ZCloseAccountBody>;
export const ZCloseAccountResponse = z.object({ status: z.literal('ok'), message: z.string() });

export const ZDataExportParams = z.object({ id: z.uuid() });

/** GET /api/user/privacy/export/{id}: the ZIP itself. */
export const DATA_EXPORT_RESPONSE = {
  description: 'The export: a ZIP of JSON and CSV files',
  content: { 'application/zip': { schema: z.string().meta({ contentMediaType: 'application/zip' }) } },
};
