import { z } from 'zod';
import { REJECT_REASONS, VERIFICATION_SIDES, VERIFICATION_STATUSES, VERIFICATION_TYPES, ZDocumentData, ZVerificationFile } from './verification.ts';

/*
 * Identity review in the back office (/api/ops/kyc): the queue of submitted verifications with
 * their waiting time against the target, claims, the review of one submission (typed data,
 * checks, files), the decisions, and each file's image for the reviewer.
 */

/** The claims queue of identity review (core/src/domains/ops/claims.ts). */
export const OPS_KYC_QUEUE = 'kyc';
/** An operator is of age at 18: the age check the review shows. */
export const KYC_ADULT_YEARS = 18;

export const ZOpsKycParams = z.object({ id: z.uuid({ error: 'api.document_not_found' }) });

const ZClaimHolder = z.object({ email: z.string(), mine: z.boolean(), lapses_at: z.string() });

export const ZOpsKycQueueItem = z.object({
  id: z.string(),
  type: z.enum(VERIFICATION_TYPES),
  account_id: z.number().int(),
  submitted_at: z.string(),
  waiting_ms: z.number().int(),
  overdue: z.boolean(),
  files: z.number().int(),
  /** Sent again after a rejection. */
  resubmitted: z.boolean(),
  claim: ZClaimHolder.nullable(),
});
export type TOpsKycQueueItem = z.infer<typeof ZOpsKycQueueItem>;

/** GET /api/ops/kyc: waiting submissions, oldest first. */
export const ZOpsKycQueueResponse = z.object({ status: z.literal('ok'), target_ms: z.number().int(), items: z.array(ZOpsKycQueueItem) });

/** POST /api/ops/kyc/{id}/claim */
export const ZOpsKycClaimResponse = z.object({ status: z.literal('ok'), claim: ZClaimHolder });

/** A file as the reviewer sees it: its `url` is GET /api/ops/kyc/file/{id} (kyc.view_documents, step-up, audited). */
export const ZOpsKycFile = ZVerificationFile;
export type TOpsKycFile = z.infer<typeof ZOpsKycFile>;

export const ZOpsKycReview = z.object({
  id: z.string(),
  account_id: z.number().int(),
  type: z.enum(VERIFICATION_TYPES),
  status: z.enum(VERIFICATION_STATUSES),
  submitted_at: z.string().nullable(),
  waiting_ms: z.number().int(),
  /** The number in full: the review is a view of personal data (step-up, audited). */
  document: ZDocumentData.extend({ number: z.string() }),
  /** What the core checked already, on its own clock. */
  checks: z.object({
    expired: z.boolean(),
    age_years: z.number().int(),
    adult: z.boolean(),
    /** Other accounts that sent the same document number (by the keyed hash). */
    duplicates: z.array(z.object({ account_id: z.number().int(), status: z.enum(VERIFICATION_STATUSES) })),
  }),
  files: z.array(ZOpsKycFile),
  claim: ZClaimHolder.nullable(),
});
export type TOpsKycReview = z.infer<typeof ZOpsKycReview>;

/** GET /api/ops/kyc/{id} */
export const ZOpsKycReviewResponse = z.object({ status: z.literal('ok'), review: ZOpsKycReview });

/** Each rejected file with its reason from the catalogue; `other` needs a note. */
export const ZKycRejectedFiles = z
  .array(
    z.object({
      side: z.enum(VERIFICATION_SIDES, { error: 'verification.side_invalid' }),
      reason: z.enum(REJECT_REASONS, { error: 'ops.kyc.reason_unknown' }),
      note: z.string().trim().max(500, 'validation.too_long').optional(),
    }),
  )
  .min(1, 'ops.kyc.files_none')
  .refine((files) => files.every((file) => file.reason !== 'other' || file.note), 'ops.kyc.note_needed')
  .refine((files) => new Set(files.map((file) => file.side)).size === files.length, 'verification.side_twice');

/** POST /api/ops/kyc/{id}/reject: the customer may send the rejected files again. */
export const ZOpsKycRejectBody = z.object({ files: ZKycRejectedFiles, note: z.string().trim().max(1000, 'validation.too_long').optional() });
export type TOpsKycRejectBody = z.infer<typeof ZOpsKycRejectBody>;

/** The answer of a decision (approve, reject). */
export const ZOpsKycDecisionResponse = z.object({ status: z.literal('ok'), verification_status: z.enum(VERIFICATION_STATUSES) });
