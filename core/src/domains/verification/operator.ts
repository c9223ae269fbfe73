import { createWriteStream } from 'node:fs';
import { pipeline } from 'node:stream/promises';
import { z } from 'zod';
import {
  KYC_ADULT_YEARS,
  VERIFICATION_PAGES,
  ZKycRejectedFiles,
  isoDay,
  translate,
  type TLocale,
  type TOpsKycReview,
  type TVerificationSide,
} from '@obmen/shared';
import type { Queryable } from '../../db/index.ts';
import { AppError, notFoundOf } from '../../errors.ts';
import { queueMail } from '../../mail/outbox.ts';
import { insertNotification } from '../notifications/service.ts';
import {
  currentFiles,
  describeFile,
  documentFields,
  VERIFICATION_COLUMNS,
  type TFileRow,
  type TVerificationContext,
  type TVerificationRow,
} from './service.ts';
import { writeAudit } from '../audit/service.ts';

/*
 * What operators do with submissions, from the back office (domains/ops/kyc.ts) and the command
 * line (cli/verification.ts) alike. Every look at personal data and every decision is written to
 * the audit trail, in the same transaction as the decision.
 */

/** Who acts, for the audit trail: `operator:<id>:<email>` from the back office, `cli:<name>` from the shell. */
export type TAuditBy = { actor: string; requestId?: string; ip?: string };

const audit = (db: Queryable, by: TAuditBy, entry: Omit<Parameters<typeof writeAudit>[1], 'actor' | 'requestId' | 'ip'>) =>
  writeAudit(db, { ...entry, actor: by.actor, requestId: by.requestId ?? null, ip: by.ip ?? null });

export type TQueueItem = { id: string; type: TOpsKycReview['type']; account_id: number; submitted_at: string; files: number; resubmitted: boolean };

/** Waiting submissions, oldest first. */
export async function listQueue(db: Queryable, by: TAuditBy, limit = 50): Promise<TQueueItem[]> {
  const rows = await db.query<TQueueItem>(
    `SELECT v.public_id::text AS id, v.type, u.account_id,
       to_char(v.submitted_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') AS submitted_at,
       (SELECT count(*)::int FROM verification_files f WHERE f.verification_id = v.id AND f.superseded_at IS NULL) AS files,
       EXISTS (SELECT 1 FROM verification_files f WHERE f.verification_id = v.id AND f.superseded_at IS NOT NULL) AS resubmitted
     FROM verifications v JOIN users u ON u.id = v.user_id
     WHERE v.status = 'submitted' ORDER BY v.submitted_at, v.id LIMIT $1`,
    [limit],
  );
  await audit(db, by, { action: 'verification.queue', details: { shown: rows.map((row) => row.id) }, outcome: 'viewed' });
  return rows;
}

type TSubmission = TVerificationRow & { account_id: number; email: string; locale: TLocale; number_hash: Buffer | null };

async function findSubmission(db: Queryable, publicId: string, lock = false): Promise<TSubmission> {
  if (!z.uuid().safeParse(publicId).success) throw notFoundOf('document');
  const [row] = await db.query<TSubmission>(
    `SELECT ${VERIFICATION_COLUMNS}, v.number_hash, u.account_id, u.email, u.locale FROM verifications v JOIN users u ON u.id = v.user_id
     WHERE v.public_id = $1::uuid ${lock ? 'FOR UPDATE OF v' : ''}`,
    [publicId],
  );
  if (!row) throw notFoundOf('document');
  return row;
}

/** A submission waiting for a decision, else 404 (none) or 409 (decided already). */
export async function findWaiting(db: Queryable, publicId: string, lock = false): Promise<TSubmission> {
  const row = await findSubmission(db, publicId, lock);
  if (row.status !== 'submitted') throw new AppError('verification_state', { key: 'ops.kyc.not_waiting' });
  return row;
}

/** Whole years from `birth` (YYYY-MM-DD) to `today`. */
function yearsBetween(birth: string, today: string): number {
  const years = Number(today.slice(0, 4)) - Number(birth.slice(0, 4));
  return today.slice(5) < birth.slice(5) ? years - 1 : years;
}

/**
 * One submission for review: the typed data with the number decrypted, the checks the core can
 * make on its clock (expiry, age, the same number on another account), the current files. A
 * view of personal data: audited.
 */
export async function reviewSubmission(
  ctx: TVerificationContext,
  by: TAuditBy,
  publicId: string,
): Promise<Omit<TOpsKycReview, 'claim' | 'files'> & { files: TFileRow[] }> {
  const row = await findSubmission(ctx.db, publicId);
  if (!row.number_enc) throw notFoundOf('document');
  const number = await ctx.cipher.decrypt(row.number_enc);
  const hash = row.number_hash ?? (await ctx.cipher.lookupHash(number));
  const duplicates = await ctx.db.query<{ account_id: number; status: TVerificationRow['status'] }>(
    `SELECT u.account_id, v.status FROM verifications v JOIN users u ON u.id = v.user_id
     WHERE v.number_hash = $1 AND v.user_id <> $2 ORDER BY v.id`,
    [hash, row.user_id],
  );
  const today = isoDay(ctx.now());
  const age = yearsBetween(row.birth_date!, today);
  await audit(ctx.db, by, { action: 'verification.show', subject: publicId, outcome: 'viewed' });
  return {
    id: row.public_id,
    account_id: row.account_id,
    type: row.type,
    status: row.status,
    submitted_at: row.submitted_at,
    waiting_ms: row.submitted_at && row.status === 'submitted' ? Math.max(0, ctx.now().getTime() - Date.parse(row.submitted_at)) : 0,
    document: { number, ...documentFields(row) },
    checks: { expired: row.expiry_date! < today, age_years: age, adult: age >= KYC_ADULT_YEARS, duplicates },
    files: await currentFiles(ctx.db, row.id),
  };
}

/** One submission in full for the command line: the review with each file's id (to fetch with kyc:file). */
export async function showSubmission(ctx: TVerificationContext, by: TAuditBy, publicId: string) {
  const review = await reviewSubmission(ctx, by, publicId);
  return { ...review, files: review.files.map(describeFile) };
}

/**
 * A file of a submission for the reviewer's eyes: where it is stored, the look audited first.
 * Any file id that is not a submission's answers 404.
 */
export async function reviewFile(db: Queryable, by: TAuditBy, filePublicId: string): Promise<TFileRow & { submission: string }> {
  if (!z.uuid().safeParse(filePublicId).success) throw notFoundOf('document');
  const [file] = await db.query<TFileRow & { submission: string }>(
    `SELECT f.public_id::text, f.side, f.storage_key, f.mime, f.size, f.reencoded, v.public_id::text AS submission FROM verification_files f
     JOIN verifications v ON v.id = f.verification_id WHERE f.public_id = $1::uuid AND v.status <> 'draft'`,
    [filePublicId],
  );
  if (!file) throw notFoundOf('document');
  await audit(db, by, { action: 'verification.file', subject: file.submission, details: { file: filePublicId, side: file.side }, outcome: 'viewed' });
  return file;
}

/** Writes one file of a submission to `outPath` for the operator to look at (the command line's view). */
export async function saveFile(ctx: TVerificationContext, by: TAuditBy, filePublicId: string, outPath: string) {
  const file = await reviewFile(ctx.db, by, filePublicId);
  const object = await ctx.storage.get(file.storage_key);
  if (!object) throw notFoundOf('document');
  await pipeline(object.body, createWriteStream(outPath, { mode: 0o600, flags: 'wx' }));
  return { saved: outPath, mime: file.mime, size: file.size };
}

/** The command line's rejection: the back office's files and note, and whether the customer may retry. */
export const ZRejection = z.object({
  files: ZKycRejectedFiles,
  retry: z.boolean(),
  note: z.string().trim().max(1000).optional(),
});
export type TRejection = z.infer<typeof ZRejection>;

type TDecisionContext = Pick<TVerificationContext, 'db' | 'publicUrl'>;

/** Approves a waiting submission inside the caller's transaction: level 1, the proven fields copied to the account, the user told. */
export async function approveIn(tx: Queryable, publicUrl: string, by: TAuditBy, publicId: string) {
  const row = await findWaiting(tx, publicId, true);
  await tx.query(`UPDATE verifications SET status = 'approved', decided_at = now(), decided_by = $2 WHERE id = $1`, [row.id, by.actor]);
  await tx.query(
    `UPDATE users SET verification_level = 1, first_name = $2, last_name = $3, middle_name = $4, birth_date = $5::date, country = $6, updated_at = now() WHERE id = $1`,
    [row.user_id, row.first_name, row.last_name, row.middle_name, row.birth_date, row.issuing_country],
  );
  await tellUser(tx, publicUrl, row, 'approved', {});
  await audit(tx, by, { action: 'verification.approve', subject: publicId, before: { status: row.status, level: 0 }, after: { status: 'approved', level: 1 } });
  return { approved: publicId, account_id: row.account_id, level: 1 };
}

export async function approveSubmission(ctx: TDecisionContext, by: TAuditBy, publicId: string) {
  return ctx.db.transaction((tx) => approveIn(tx, ctx.publicUrl, by, publicId));
}

/** Rejects a waiting submission inside the caller's transaction, each named file with a reason from the catalogue. */
export async function rejectIn(tx: Queryable, publicUrl: string, by: TAuditBy, publicId: string, input: TRejection) {
  const rejection = ZRejection.parse(input);
  const row = await findWaiting(tx, publicId, true);
  const files = await currentFiles(tx, row.id);
  const fields: Record<string, string> = {};
  for (const rejected of rejection.files) if (!files.some((existing) => existing.side === rejected.side)) fields[rejected.side] = 'ops.kyc.no_such_file';
  if (Object.keys(fields).length) throw new AppError('validation', { fields });
  for (const rejected of rejection.files) {
    const file = files.find((existing) => existing.side === rejected.side)!;
    await tx.query('UPDATE verification_files SET reject_reason = $2, reject_note = $3 WHERE id = $1', [file.id, rejected.reason, rejected.note ?? null]);
  }
  await tx.query(`UPDATE verifications SET status = 'rejected', retry_allowed = $2, decided_at = now(), decided_by = $3, decision_note = $4 WHERE id = $1`, [
    row.id,
    rejection.retry,
    by.actor,
    rejection.note ?? null,
  ]);
  const reasons = rejection.files
    .map(
      (file) =>
        `${translate(row.locale, `verification.side.${file.side}`)}: ${translate(row.locale, `verification.reason.${file.reason}`)}${file.note ? ` (${file.note})` : ''}. ${translate(row.locale, `verification.redo.${file.reason}`)}`,
    )
    .join('\n');
  await tellUser(tx, publicUrl, row, rejection.retry ? 'rejected_retry' : 'rejected_final', { reasons });
  await audit(tx, by, {
    action: 'verification.reject',
    subject: publicId,
    details: rejection,
    reasonCode: rejection.files.map((file) => file.reason).join(','),
    reasonText: rejection.note ?? null,
    before: { status: row.status },
    after: { status: 'rejected', retry: rejection.retry },
  });
  return { rejected: publicId, account_id: row.account_id, retry: rejection.retry, files: rejection.files.map((file) => file.side as TVerificationSide) };
}

export async function rejectSubmission(ctx: TDecisionContext, by: TAuditBy, publicId: string, input: TRejection) {
  return ctx.db.transaction((tx) => rejectIn(tx, ctx.publicUrl, by, publicId, input));
}

/** A mail and an in-app notification in the user's language, in the decision's transaction. */
async function tellUser(
  tx: Queryable,
  publicUrl: string,
  row: TVerificationRow & { email: string; locale: TLocale },
  outcome: 'approved' | 'rejected_retry' | 'rejected_final',
  vars: Record<string, string>,
) {
  const page =
    outcome === 'approved' ? '/settings/verification_success' : outcome === 'rejected_retry' ? VERIFICATION_PAGES[row.type] : '/settings/verification';
  await queueMail(tx, { kind: `verification_${outcome}`, to: row.email, locale: row.locale, vars: { ...vars, link: `${publicUrl}${page}` } });
  await insertNotification(tx, {
    userId: row.user_id,
    display: 'inner',
    type: outcome === 'approved' ? 'success' : 'danger',
    texts: [
      {
        locale: row.locale,
        title: translate(row.locale, `verification.notice.${outcome}.title`),
        text: translate(row.locale, `verification.notice.${outcome}.text`),
        buttons: [{ url: page, title: translate(row.locale, `verification.notice.${outcome}.button`) }],
      },
    ],
  });
}
