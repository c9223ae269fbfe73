import {
  REQUIRED_SIDES,
  VERIFICATION_TYPES,
  ZVerificationId,
  ZVerificationSide,
  isoDay,
  maskDocumentNumber,
  documentDateIssues,
  type TVerificationSubmit,
  type TRejectReason,
  type TVerificationSide,
  type TVerificationState,
  type TVerificationStatus,
  type TVerificationSubmission,
  type TVerificationType,
  type TI18nKey,
} from '@obmen/shared';
import type { Db, Queryable } from '../../db/index.ts';
import type { FastifyReply } from 'fastify';
import { AppError, notFoundOf } from '../../errors.ts';
import { parseInput } from '../../validation.ts';
import type { TFileStorage } from '../../storage/index.ts';
import { consumeRateLimit } from '../../rate-limit.ts';
import { checkFiles } from '../../storage/inspect.ts';
import { removeFiles, sendStoredFile, storeFiles } from '../../storage/files.ts';
import type { TReceivedUpload } from '../../storage/upload.ts';
import type { TDocumentCipher } from './cipher.ts';
import { listLimits } from '../limits/service.ts';

export type TVerificationContext = {
  db: Db;
  storage: TFileStorage;
  cipher: TDocumentCipher;
  /** The site's address, for links in mails. */
  publicUrl: string;
  /** The clock that decides whether a document has expired (tests inject one). */
  now: () => Date;
};

/** Storage prefix of identity documents. */
const KEY_PREFIX = 'kyc';

const draftUnknown = () => new AppError('not_found', { key: 'verification.draft_unknown' });
const conflict = (key: TI18nKey, vars: Record<string, string> = {}) => new AppError('verification_state', { key, vars });

export type TVerificationRow = {
  id: string;
  public_id: string;
  user_id: string;
  type: TVerificationType;
  status: TVerificationStatus;
  retry_allowed: boolean;
  number_enc: Buffer | null;
  number_tail: string | null;
  issuing_country: string | null;
  issue_date: string | null;
  expiry_date: string | null;
  first_name: string | null;
  last_name: string | null;
  middle_name: string | null;
  birth_date: string | null;
  decision_note: string | null;
  created_at: string;
  submitted_at: string | null;
  decided_at: string | null;
};

export type TFileRow = {
  id: string;
  public_id: string;
  verification_id: string;
  side: TVerificationSide;
  storage_key: string;
  mime: string;
  size: number;
  reencoded: boolean;
  reject_reason: TRejectReason | null;
  reject_note: string | null;
};

const TS = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') AS ${column.split('.').pop()}`;
export const VERIFICATION_COLUMNS = `v.id::text, v.public_id::text, v.user_id::text, v.type, v.status, v.retry_allowed, v.number_enc, v.number_tail,
  v.issuing_country, to_char(v.issue_date, 'YYYY-MM-DD') AS issue_date, to_char(v.expiry_date, 'YYYY-MM-DD') AS expiry_date,
  v.first_name, v.last_name, v.middle_name, to_char(v.birth_date, 'YYYY-MM-DD') AS birth_date, v.decision_note,
  ${TS('v.created_at')}, ${TS('v.submitted_at')}, ${TS('v.decided_at')}`;
const FILE_COLUMNS = `f.id::text, f.public_id::text, f.verification_id::text, f.side, f.storage_key, f.mime, f.size, f.reencoded, f.reject_reason, f.reject_note`;

/** A submission's files that count now (replaced ones stay for the record only). */
export async function currentFiles(db: Queryable, verificationId: string): Promise<TFileRow[]> {
  return db.query<TFileRow>(
    `SELECT ${FILE_COLUMNS} FROM verification_files f WHERE f.verification_id = $1 AND f.superseded_at IS NULL ORDER BY array_position(ARRAY['front','back','selfie'], f.side)`,
    [verificationId],
  );
}

/**
 * Sides the user may upload now: any of a draft's; on a retry, the sides rejected at the last
 * decision (their replacement may be replaced again until the user submits).
 */
async function uploadableSides(db: Queryable, row: TVerificationRow): Promise<TVerificationSide[]> {
  if (row.status === 'draft') return [...REQUIRED_SIDES[row.type]];
  if (row.status !== 'rejected' || !row.retry_allowed) return [];
  const rows = await db.query<{ side: TVerificationSide }>(
    `SELECT DISTINCT f.side FROM verification_files f JOIN verifications v ON v.id = f.verification_id
     WHERE f.verification_id = $1 AND f.reject_reason IS NOT NULL AND (f.superseded_at IS NULL OR f.superseded_at >= v.decided_at)`,
    [row.id],
  );
  return REQUIRED_SIDES[row.type].filter((side) => rows.some((r) => r.side === side));
}

function toSubmission(row: TVerificationRow, files: TFileRow[], uploadable: TVerificationSide[]): TVerificationSubmission {
  return {
    id: row.public_id,
    type: row.type,
    status: row.status,
    retry_allowed: row.retry_allowed,
    created_at: row.created_at,
    submitted_at: row.submitted_at,
    decided_at: row.decided_at,
    decision_note: row.decision_note,
    required_sides: [...REQUIRED_SIDES[row.type]],
    uploadable_sides: uploadable,
    document: row.number_tail !== null && row.status !== 'draft' ? { number_masked: maskDocumentNumber(row.number_tail), ...documentFields(row) } : null,
    files: files.map((file) => ({ ...describeFile(file), url: `/api/verification/file/${file.public_id}` })),
  };
}

/** The typed fields of a submitted document, as its owner and the reviewer both see them (the number apart). */
export function documentFields(row: TVerificationRow) {
  return {
    issuing_country: row.issuing_country!,
    issue_date: row.issue_date!,
    expiry_date: row.expiry_date!,
    first_name: row.first_name!,
    last_name: row.last_name!,
    middle_name: row.middle_name,
    birth_date: row.birth_date!,
  };
}

/** A file as its owner and the operator both see it (the owner's page adds where to fetch it). */
export function describeFile(file: TFileRow) {
  return { id: file.public_id, side: file.side, mime: file.mime, size: file.size, reject_reason: file.reject_reason, reject_note: file.reject_note };
}

/** GET /api/verification: level, the submission that matters now, each type's status, limits. */
export async function getVerificationState(db: Queryable, userId: string): Promise<TVerificationState> {
  const [user] = await db.query<{ verification_level: number }>('SELECT verification_level FROM users WHERE id = $1', [userId]);
  const rows = await db.query<TVerificationRow>(`SELECT ${VERIFICATION_COLUMNS} FROM verifications v WHERE v.user_id = $1 ORDER BY v.id DESC`, [userId]);
  const isOpen = (row: TVerificationRow) => row.status === 'draft' || row.status === 'submitted' || (row.status === 'rejected' && row.retry_allowed);
  const current = rows.find(isOpen) ?? rows.find((row) => row.status === 'approved') ?? rows[0] ?? null;
  const types = Object.fromEntries(
    VERIFICATION_TYPES.map((type) => [type, rows.find((row) => row.type === type)?.status ?? null]),
  ) as TVerificationState['types'];
  return {
    level: user?.verification_level ?? 0,
    current: current ? toSubmission(current, await currentFiles(db, current.id), await uploadableSides(db, current)) : null,
    types,
    limits: await listLimits(db),
  };
}

/**
 * GET /api/verification/{type}/new: the account's open submission of this type (the same one
 * every time), or a new draft. Refused: an open one of another type, one waiting for review,
 * identity already verified, a final rejection.
 */
export async function openDraft(db: Db, userId: string, type: TVerificationType): Promise<TVerificationState> {
  await db.transaction(async (tx) => {
    // The user row is the lock that makes "one open submission" hold under concurrent calls.
    await tx.query('SELECT 1 FROM users WHERE id = $1 FOR UPDATE', [userId]);
    const rows = await tx.query<TVerificationRow>(`SELECT ${VERIFICATION_COLUMNS} FROM verifications v WHERE v.user_id = $1 ORDER BY v.id DESC`, [userId]);
    if (rows.some((row) => row.status === 'approved')) throw conflict('verification.already_approved');
    const open = rows.find((row) => row.status === 'draft' || row.status === 'submitted' || (row.status === 'rejected' && row.retry_allowed));
    if (open) {
      if (open.type !== type) throw conflict('verification.other_open', { type: open.type });
      if (open.status === 'submitted') throw conflict('verification.waiting');
      return;
    }
    if (rows[0]?.status === 'rejected') throw conflict('verification.retry_not_allowed');
    await tx.query('INSERT INTO verifications (user_id, type) VALUES ($1, $2)', [userId, type]);
  });
  return getVerificationState(db, userId);
}

/** The user's submission by its public id and type, locked; someone else's is not found. */
async function lockOwn(tx: Queryable, userId: string, type: TVerificationType, publicId: string): Promise<TVerificationRow> {
  const [row] = await tx.query<TVerificationRow>(
    `SELECT ${VERIFICATION_COLUMNS} FROM verifications v WHERE v.public_id = $1::uuid AND v.user_id = $2 AND v.type = $3 FOR UPDATE`,
    [publicId, userId, type],
  );
  if (!row) throw draftUnknown();
  return row;
}

function assertEditable(row: TVerificationRow): void {
  if (row.status === 'approved') throw conflict('verification.already_approved');
  if (row.status === 'submitted') throw conflict('verification.read_only');
  if (row.status === 'rejected' && !row.retry_allowed) throw conflict('verification.retry_not_allowed');
}

/** Which side each file of the form is: file0 ↔ side0, … Every file needs one, each side once. */
function sidesOf(upload: TReceivedUpload): Map<string, TVerificationSide> {
  const sides = new Map<string, TVerificationSide>();
  const fields: Record<string, string> = {};
  const seen = new Set<string>();
  for (const file of upload.files) {
    const index = /^file(\d)$/.exec(file.field)?.[1];
    if (index === undefined) {
      fields[file.field] = 'verification.file_field_invalid';
      continue;
    }
    const side = ZVerificationSide.safeParse(upload.fields[`side${index}`]);
    if (!side.success) fields[`side${index}`] = 'verification.side_invalid';
    else if (seen.has(side.data)) fields[`side${index}`] = 'verification.side_twice';
    else {
      seen.add(side.data);
      sides.set(file.field, side.data);
    }
  }
  if (!upload.files.length) fields.file0 = 'files.none';
  if (Object.keys(fields).length) throw new AppError('validation', { fields });
  return sides;
}

/**
 * POST /api/verification/{type}/upload: checks every file (type by bytes, re-encoding), stores
 * them, then records them on the draft in one transaction, replacing the file of the same side.
 * On a retry only rejected sides are taken, and the rejected file stays on record. Any refusal
 * stores and changes nothing.
 */
export async function uploadVerificationFiles(
  ctx: TVerificationContext,
  userId: string,
  type: TVerificationType,
  upload: TReceivedUpload,
): Promise<TVerificationState> {
  await consumeRateLimit(ctx.db, 'upload_user', userId);
  const publicId = parseInput(ZVerificationId, upload.fields.id);
  const sides = sidesOf(upload);
  // Refuse early (before any image work) what the state refuses anyway; checked again under the lock.
  const before = await lockOwn(ctx.db, userId, type, publicId);
  assertEditable(before);
  assertSidesAllowed(before, await uploadableSides(ctx.db, before), [...sides.values()]);

  const checked = await checkFiles(upload.files, { owner: userId, signal: upload.signal });
  const stored = await storeFiles(ctx.storage, KEY_PREFIX, checked);
  let replacedKeys: string[] = [];
  try {
    replacedKeys = await ctx.db.transaction(async (tx) => {
      const row = await lockOwn(tx, userId, type, publicId);
      assertEditable(row);
      assertSidesAllowed(row, await uploadableSides(tx, row), [...sides.values()]);
      const files = await currentFiles(tx, row.id);
      const gone: string[] = [];
      for (const file of stored) {
        const side = sides.get(file.field)!;
        const old = files.find((existing) => existing.side === side);
        // A file nobody reviewed is simply replaced; a rejected one stays on record.
        if (old && !old.reject_reason) {
          await tx.query('DELETE FROM verification_files WHERE id = $1', [old.id]);
          gone.push(old.storage_key);
        } else if (old) {
          await tx.query('UPDATE verification_files SET superseded_at = now() WHERE id = $1', [old.id]);
        }
        await tx.query('INSERT INTO verification_files (verification_id, side, storage_key, mime, size, reencoded) VALUES ($1, $2, $3, $4, $5, $6)', [
          row.id,
          side,
          file.key,
          file.mime,
          file.size,
          file.reencoded,
        ]);
      }
      return gone;
    });
  } catch (err) {
    await removeFiles(
      ctx.storage,
      stored.map((file) => file.key),
    );
    throw err;
  }
  await removeFiles(ctx.storage, replacedKeys);
  return getVerificationState(ctx.db, userId);
}

function assertSidesAllowed(row: TVerificationRow, allowed: TVerificationSide[], sides: TVerificationSide[]): void {
  const fields: Record<string, string> = {};
  for (const side of sides) {
    if (!allowed.includes(side)) fields[side] = row.status === 'draft' ? 'verification.side_not_needed' : 'verification.side_not_rejected';
  }
  if (Object.keys(fields).length) throw new AppError('validation', { key: 'verification.sides_refused', fields });
}

/**
 * POST /api/verification/{type}/submit: the document's fields (checked by the shared schema,
 * expired documents refused) and every required side present; on a retry, every rejected file
 * replaced. The submission is read-only from here until an operator decides.
 */
export async function submitVerification(
  ctx: TVerificationContext,
  userId: string,
  type: TVerificationType,
  input: TVerificationSubmit,
): Promise<TVerificationState> {
  const dated = documentDateIssues(input, isoDay(ctx.now()));
  if (Object.keys(dated).length) throw new AppError('validation', { fields: dated });
  const sealed = await ctx.cipher.encrypt(input.number);
  const hash = await ctx.cipher.lookupHash(input.number);
  await ctx.db.transaction(async (tx) => {
    const row = await lockOwn(tx, userId, type, input.id);
    assertEditable(row);
    const files = await currentFiles(tx, row.id);
    const fields: Record<string, string> = {};
    for (const side of REQUIRED_SIDES[type]) {
      const file = files.find((existing) => existing.side === side);
      if (!file) fields[side] = 'verification.file_missing';
      else if (file.reject_reason) fields[side] = 'verification.file_still_rejected';
    }
    if (Object.keys(fields).length) throw new AppError('files_missing', { fields });
    await tx.query(
      `UPDATE verifications SET status = 'submitted', retry_allowed = false, number_enc = $2, number_tail = $3, issuing_country = $4,
         issue_date = $5::date, expiry_date = $6::date, first_name = $7, last_name = $8, middle_name = $9, birth_date = $10::date,
         submitted_at = now(), decided_at = NULL, decided_by = NULL, decision_note = NULL, number_hash = $11
       WHERE id = $1`,
      [
        row.id,
        sealed,
        input.number.slice(-4),
        input.issuing_country,
        input.issue_date,
        input.expiry_date,
        input.first_name,
        input.last_name,
        input.middle_name ?? null,
        input.birth_date,
        hash,
      ],
    );
  });
  return getVerificationState(ctx.db, userId);
}

/** GET /api/verification/file/{id}: the owner's own file; anyone else's is not found, like a missing one. */
export async function findOwnFile(db: Queryable, userId: string, filePublicId: string): Promise<TFileRow | null> {
  if (!ZVerificationId.safeParse(filePublicId).success) return null;
  const [file] = await db.query<TFileRow>(
    `SELECT ${FILE_COLUMNS} FROM verification_files f JOIN verifications v ON v.id = f.verification_id
     WHERE f.public_id = $1::uuid AND v.user_id = $2`,
    [filePublicId, userId],
  );
  return file ?? null;
}

/**
 * Streams a document file to whoever the route let through (private, never cached); 404 when
 * storage lost it. A reply is thenable (awaiting it waits for the response): check `sent`.
 */
export async function sendDocumentFile(reply: FastifyReply, storage: TFileStorage, file: Pick<TFileRow, 'storage_key' | 'mime' | 'reencoded' | 'side'>) {
  await sendStoredFile(reply, storage, {
    key: file.storage_key,
    mime: file.mime,
    reencoded: file.reencoded,
    name: `${file.side}.${file.storage_key.split('.').pop()}`,
  });
  if (!reply.sent) throw notFoundOf('document');
  return reply;
}
