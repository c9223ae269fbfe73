import { createWriteStream } from 'node:fs';
import { pipeline } from 'node:stream/promises';
import { z } from 'zod';
import { REJECT_REASONS, VERIFICATION_PAGES, VERIFICATION_SIDES, translate, type TLocale, type TVerificationSide } from '@obmen/shared';
import type { Queryable } from '../../db/index.ts';
import { queueMail } from '../../mail/outbox.ts';
import { insertNotification } from '../notifications/service.ts';
import { currentFiles, describeFile, VERIFICATION_COLUMNS, type TFileRow, type TVerificationContext, type TVerificationRow } from './service.ts';
import { writeAudit } from '../audit/service.ts';

/*
 * What operators do with submissions (through the CLI, verification/commands.ts). Every look at
 * personal data and every decision is written to operator_audit, in the same transaction as
 * the decision.
 */

export type TQueueItem = { id: string; type: string; account_id: number; submitted_at: string; files: number; resubmitted: boolean };

/** Waiting submissions, oldest first. */
export async function listQueue(db: Queryable, operator: string, limit = 50): Promise<TQueueItem[]> {
  const rows = await db.query<TQueueItem>(
    `SELECT v.public_id::text AS id, v.type, u.account_id,
       to_char(v.submitted_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') AS submitted_at,
       (SELECT count(*)::int FROM verification_files f WHERE f.verification_id = v.id AND f.superseded_at IS NULL) AS files,
       EXISTS (SELECT 1 FROM verification_files f WHERE f.verification_id = v.id AND f.superseded_at IS NOT NULL) AS resubmitted
     FROM verifications v JOIN users u ON u.id = v.user_id
     WHERE v.status = 'submitted' ORDER BY v.submitted_at, v.id LIMIT $1`,
    [limit],
  );
  await writeAudit(db, { actor: operator, action: 'verification.queue', details: { shown: rows.map((row) => row.id) }, outcome: 'viewed' });
  return rows;
}

async function findSubmission(db: Queryable, publicId: string, lock = false) {
  if (!z.uuid().safeParse(publicId).success) throw new Error(`not a submission id: ${publicId}`);
  const [row] = await db.query<TVerificationRow & { account_id: number; email: string; locale: TLocale }>(
    `SELECT ${VERIFICATION_COLUMNS}, u.account_id, u.email, u.locale FROM verifications v JOIN users u ON u.id = v.user_id
     WHERE v.public_id = $1::uuid ${lock ? 'FOR UPDATE OF v' : ''}`,
    [publicId],
  );
  if (!row) throw new Error(`no submission ${publicId}`);
  return row;
}

/** One submission in full: the document number decrypted, its files (ids to fetch with verification:file). */
export async function showSubmission(ctx: TVerificationContext, operator: string, publicId: string) {
  const row = await findSubmission(ctx.db, publicId);
  const files = await currentFiles(ctx.db, row.id);
  await writeAudit(ctx.db, { actor: operator, action: 'verification.show', subject: publicId, outcome: 'viewed' });
  return {
    id: row.public_id,
    account_id: row.account_id,
    type: row.type,
    status: row.status,
    submitted_at: row.submitted_at,
    decided_at: row.decided_at,
    document: row.number_enc
      ? {
          number: await ctx.cipher.decrypt(row.number_enc),
          issuing_country: row.issuing_country,
          issue_date: row.issue_date,
          expiry_date: row.expiry_date,
          first_name: row.first_name,
          last_name: row.last_name,
          middle_name: row.middle_name,
          birth_date: row.birth_date,
        }
      : null,
    files: files.map(describeFile),
  };
}

/** Writes one file of a submission to `outPath` for the operator to look at. */
export async function saveFile(ctx: TVerificationContext, operator: string, filePublicId: string, outPath: string) {
  if (!z.uuid().safeParse(filePublicId).success) throw new Error(`not a file id: ${filePublicId}`);
  const [file] = await ctx.db.query<TFileRow & { submission: string }>(
    `SELECT f.storage_key, f.mime, f.size, v.public_id::text AS submission FROM verification_files f
     JOIN verifications v ON v.id = f.verification_id WHERE f.public_id = $1::uuid`,
    [filePublicId],
  );
  if (!file) throw new Error(`no file ${filePublicId}`);
  const object = await ctx.storage.get(file.storage_key);
  if (!object) throw new Error(`file ${filePublicId} is missing from storage`);
  await writeAudit(ctx.db, { actor: operator, action: 'verification.file', subject: file.submission, details: { file: filePublicId }, outcome: 'viewed' });
  await pipeline(object.body, createWriteStream(outPath, { mode: 0o600, flags: 'wx' }));
  return { saved: outPath, mime: file.mime, size: file.size };
}

export const ZRejection = z.object({
  files: z
    .array(z.object({ side: z.enum(VERIFICATION_SIDES), reason: z.enum(REJECT_REASONS), note: z.string().trim().max(500).optional() }))
    .min(1, 'name at least one rejected file')
    .refine((files) => files.every((file) => file.reason !== 'other' || file.note), 'reason "other" needs a note')
    .refine((files) => new Set(files.map((file) => file.side)).size === files.length, 'each side once'),
  retry: z.boolean(),
  note: z.string().trim().max(1000).optional(),
});
export type TRejection = z.infer<typeof ZRejection>;

/** Approves a waiting submission: level 1, the proven fields copied to the account, the user told. */
export async function approveSubmission(ctx: Pick<TVerificationContext, 'db' | 'publicUrl'>, operator: string, publicId: string) {
  return ctx.db.transaction(async (tx) => {
    const row = await findSubmission(tx, publicId, true);
    if (row.status !== 'submitted') throw new Error(`submission ${publicId} is ${row.status}, not waiting`);
    await tx.query(`UPDATE verifications SET status = 'approved', decided_at = now(), decided_by = $2 WHERE id = $1`, [row.id, operator]);
    await tx.query(
      `UPDATE users SET verification_level = 1, first_name = $2, last_name = $3, middle_name = $4, birth_date = $5::date, country = $6, updated_at = now() WHERE id = $1`,
      [row.user_id, row.first_name, row.last_name, row.middle_name, row.birth_date, row.issuing_country],
    );
    await tellUser(tx, ctx.publicUrl, row, 'approved', {});
    await writeAudit(tx, { actor: operator, action: 'verification.approve', subject: publicId });
    return { approved: publicId, account_id: row.account_id, level: 1 };
  });
}

/** Rejects a waiting submission, each named file with a reason from the catalogue. */
export async function rejectSubmission(ctx: Pick<TVerificationContext, 'db' | 'publicUrl'>, operator: string, publicId: string, input: TRejection) {
  const rejection = ZRejection.parse(input);
  return ctx.db.transaction(async (tx) => {
    const row = await findSubmission(tx, publicId, true);
    if (row.status !== 'submitted') throw new Error(`submission ${publicId} is ${row.status}, not waiting`);
    const files = await currentFiles(tx, row.id);
    for (const rejected of rejection.files) {
      const file = files.find((existing) => existing.side === rejected.side);
      if (!file) throw new Error(`submission ${publicId} has no ${rejected.side} file`);
      await tx.query('UPDATE verification_files SET reject_reason = $2, reject_note = $3 WHERE id = $1', [file.id, rejected.reason, rejected.note ?? null]);
    }
    await tx.query(`UPDATE verifications SET status = 'rejected', retry_allowed = $2, decided_at = now(), decided_by = $3, decision_note = $4 WHERE id = $1`, [
      row.id,
      rejection.retry,
      operator,
      rejection.note ?? null,
    ]);
    const reasons = rejection.files
      .map(
        (file) =>
          `${translate(row.locale, `verification.side.${file.side}`)}: ${translate(row.locale, `verification.reason.${file.reason}`)}${file.note ? ` (${file.note})` : ''}`,
      )
      .join('\n');
    await tellUser(tx, ctx.publicUrl, row, rejection.retry ? 'rejected_retry' : 'rejected_final', { reasons });
    await writeAudit(tx, { actor: operator, action: 'verification.reject', subject: publicId, details: rejection });
    return { rejected: publicId, account_id: row.account_id, retry: rejection.retry, files: rejection.files.map((file) => file.side as TVerificationSide) };
  });
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
