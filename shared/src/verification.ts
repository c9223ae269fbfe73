import { z } from 'zod';
import { ZBirthDate, ZCountry, ZName } from './auth.ts';
import { ZOk } from './api.ts';
import { ZUser } from './envelope.ts';

/*
 * Identity verification (spec §4, §7 "Verification"): document types, the sides each needs,
 * states, the rejection catalogue, and the inputs and answers of /api/verification.
 * Messages are i18n keys, as in auth.ts.
 */

export const VERIFICATION_TYPES = ['passport', 'id_card', 'driver_license'] as const;
export type TVerificationType = (typeof VERIFICATION_TYPES)[number];

export const VERIFICATION_SIDES = ['front', 'back', 'selfie'] as const;
export type TVerificationSide = (typeof VERIFICATION_SIDES)[number];

/** A passport has one page that matters; cards have two sides. Everyone sends a selfie with it. */
export const REQUIRED_SIDES: Record<TVerificationType, readonly TVerificationSide[]> = {
  passport: ['front', 'selfie'],
  id_card: ['front', 'back', 'selfie'],
  driver_license: ['front', 'back', 'selfie'],
};

export const VERIFICATION_STATUSES = ['draft', 'submitted', 'approved', 'rejected'] as const;
export type TVerificationStatus = (typeof VERIFICATION_STATUSES)[number];

/**
 * Why an operator rejected one file: a closed catalogue the customer reads with what to redo
 * (`verification.reason.<r>` and `verification.redo.<r>` in both dictionaries); `other` needs a note.
 */
export const REJECT_REASONS = ['blurry', 'cropped', 'expired', 'name_mismatch', 'document_number_used', 'selfie_mismatch', 'wrong_type', 'other'] as const;
export type TRejectReason = (typeof REJECT_REASONS)[number];

export const VERIFICATION_LEVELS = [0, 1] as const;
export const LIMIT_OPERATIONS = ['deposit', 'withdrawal', 'card'] as const;
export type TLimitOperation = (typeof LIMIT_OPERATIONS)[number];

/** The site's page of each type (spec §2: the driver's licence page is /settings/drivers_license). */
export const VERIFICATION_PAGES: Record<TVerificationType, string> = {
  passport: '/settings/passport',
  id_card: '/settings/id_card',
  driver_license: '/settings/drivers_license',
};

/** Personal-data fields a document proves: read-only once identity is verified. */
export const VERIFIED_USER_FIELDS = ['first_name', 'last_name', 'middle_name', 'birth_date', 'country'] as const;

export const ZVerificationTypeParams = z.object({ type: z.enum(VERIFICATION_TYPES, { error: 'verification.type_unknown' }) });

export const ZVerificationId = z.uuid({ error: 'verification.draft_unknown' });

/** Upload form fields besides the files: the draft and each file's side (side0 for file0, …). */
export const ZVerificationSide = z.enum(VERIFICATION_SIDES, { error: 'verification.side_invalid' });

const DOCUMENT_NUMBER = /^[A-Z0-9]{4,20}$/;

const ZDate = z
  .string({ error: 'validation.required' })
  .trim()
  .min(1, 'validation.required')
  .regex(/^\d{4}-\d{2}-\d{2}$/, 'verification.date_invalid')
  .refine((value) => {
    const date = new Date(`${value}T00:00:00Z`);
    return !Number.isNaN(date.getTime()) && date.toISOString().startsWith(value) && date.getUTCFullYear() >= 1900;
  }, 'verification.date_invalid');

const required = (schema: z.ZodType<string, string>) => z.string({ error: 'validation.required' }).trim().min(1, 'validation.required').pipe(schema);

/** Today as YYYY-MM-DD in UTC. */
export function isoDay(now: Date): string {
  return now.toISOString().slice(0, 10);
}

/**
 * POST /api/verification/{type}/submit. The number is kept without spaces and dashes, in
 * capitals. The rules that depend on today's date are `documentDateIssues` (the core's clock
 * decides them, not the caller's); `verificationSubmitSchema(today)` is both, for the browser.
 */
/** A document number as stored and looked up: no spaces or dashes, upper case. */
export const normalizeDocumentNumber = (value: string) => value.replace(/[\s-]/g, '').toUpperCase();

export const ZVerificationSubmit = z
  .object({
    id: ZVerificationId,
    number: z
      .string({ error: 'validation.required' })
      .transform(normalizeDocumentNumber)
      .pipe(z.string().min(1, 'validation.required').regex(DOCUMENT_NUMBER, 'verification.number_invalid')),
    issuing_country: required(ZCountry),
    issue_date: ZDate,
    expiry_date: ZDate,
    first_name: required(ZName),
    last_name: required(ZName),
    middle_name: z
      .string()
      .trim()
      .optional()
      .transform((value) => value || undefined)
      .pipe(ZName.optional()),
    birth_date: required(ZBirthDate),
  })
  .superRefine((body, ctx) => {
    if (body.expiry_date <= body.issue_date) ctx.addIssue({ code: 'custom', path: ['expiry_date'], message: 'verification.expiry_before_issue' });
    if (body.issue_date < body.birth_date) ctx.addIssue({ code: 'custom', path: ['issue_date'], message: 'verification.issued_before_birth' });
  });
export type TVerificationSubmit = z.infer<typeof ZVerificationSubmit>;

/** An expired document, or one issued in the future, on `today` (YYYY-MM-DD): field → message key. */
export function documentDateIssues(body: Pick<TVerificationSubmit, 'issue_date' | 'expiry_date'>, today: string): Record<string, string> {
  const issues: Record<string, string> = {};
  if (body.issue_date > today) issues.issue_date = 'verification.issued_in_future';
  if (body.expiry_date < today) issues.expiry_date = 'verification.expired';
  return issues;
}

export function verificationSubmitSchema(today: string) {
  return ZVerificationSubmit.superRefine((body, ctx) => {
    for (const [path, message] of Object.entries(documentDateIssues(body, today))) ctx.addIssue({ code: 'custom', path: [path], message });
  });
}

export const ZVerificationFile = z.object({
  id: z.string(),
  side: z.enum(VERIFICATION_SIDES),
  mime: z.string(),
  size: z.number().int(),
  /** Where the owner reads it (through the BFF, private). */
  url: z.string(),
  reject_reason: z.enum(REJECT_REASONS).nullable(),
  reject_note: z.string().nullable(),
});
export type TVerificationFile = z.infer<typeof ZVerificationFile>;

/** A document's typed data as submitted, but its number (masked for the customer, whole for a reviewer). */
export const ZDocumentData = z.object({
  issuing_country: z.string(),
  issue_date: z.string(),
  expiry_date: z.string(),
  first_name: z.string(),
  last_name: z.string(),
  middle_name: z.string().nullable(),
  birth_date: z.string(),
});

export const ZVerificationSubmission = z.object({
  id: z.string(),
  type: z.enum(VERIFICATION_TYPES),
  status: z.enum(VERIFICATION_STATUSES),
  retry_allowed: z.boolean(),
  created_at: z.string(),
  submitted_at: z.string().nullable(),
  decided_at: z.string().nullable(),
  decision_note: z.string().nullable(),
  required_sides: z.array(z.enum(VERIFICATION_SIDES)),
  /** What the user may upload now: every side of a draft, only the rejected ones on retry. */
  uploadable_sides: z.array(z.enum(VERIFICATION_SIDES)),
  document: ZDocumentData.extend({ number_masked: z.string() }).nullable(),
  files: z.array(ZVerificationFile),
});
export type TVerificationSubmission = z.infer<typeof ZVerificationSubmission>;

export const ZVerificationLimit = z.object({
  level: z.number().int(),
  operation: z.enum(LIMIT_OPERATIONS),
  currency: z.string(),
  /** Major units as a decimal string, like every amount on the wire. */
  per_24h: z.string(),
  per_30d: z.string(),
});
export type TVerificationLimit = z.infer<typeof ZVerificationLimit>;

/** GET /api/verification, and the `verification` of every answer of /api/verification/*. */
export const ZVerificationState = z.object({
  level: z.number().int(),
  /** The submission that matters now: the open one, else the approved one, else the latest. */
  current: ZVerificationSubmission.nullable(),
  /** Per document type: the status of its latest submission, or null if never tried. */
  types: z.record(z.enum(VERIFICATION_TYPES), z.enum(VERIFICATION_STATUSES).nullable()),
  limits: z.array(ZVerificationLimit),
});
export type TVerificationState = z.infer<typeof ZVerificationState>;

/** Every answer of /api/verification and /api/verification/{type}/*. */
export const ZVerificationResponse = ZOk.extend({ user: ZUser, verification: ZVerificationState });

/** "AB1234567" → "••••4567": only the last four characters are ever kept in clear or shown. */
export function maskDocumentNumber(tail: string): string {
  return `••••${tail}`;
}
