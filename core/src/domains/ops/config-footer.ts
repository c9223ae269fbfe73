import { ZOpsFooterLogoFields } from '@obmen/shared';
import type { Db, Queryable } from '../../db/index.ts';
import { AppError, notFound } from '../../errors.ts';
import type { TFileStorage } from '../../storage/index.ts';
import { removeFiles, storeFiles } from '../../storage/files.ts';
import { checkFile } from '../../storage/inspect.ts';
import type { TReceivedUpload } from '../../storage/upload.ts';
import { parseInput } from '../../validation.ts';
import { writeAudit } from '../audit/service.ts';
import { footerImageSrc, removeFooterImage, setFooterImage } from '../content/service.ts';
import { auditedActor, type TOpsActor } from './customers.ts';
import { operatorActor } from './service.ts';

/*
 * Footer logos from /ops/config/footer: a picture is sniffed by its bytes and re-encoded by the
 * upload pipeline (storage/inspect.ts: the same caps and work queue as identity documents), stored,
 * and registered in the footer as `footer:set` registers a site file. Everyone loads it from
 * GET /api/site/logos/{file_id} (content/service.ts `sendFooterLogo`); replacing or removing it
 * deletes the old picture after the commit.
 */

const LOGO_TYPES = ['image/png', 'image/jpeg', 'image/webp'] as const;

type TFooterRow = { name: string; ext: string; url: string | null; order: number; file_key: string | null; file_id: string | null };

const rowOf = async (db: Queryable, name: string, lock = false) =>
  (
    await db.query<TFooterRow>(`SELECT name, ext, url, position AS order, file_key, file_id FROM footer_images WHERE name = $1${lock ? ' FOR UPDATE' : ''}`, [
      name,
    ])
  )[0] ?? null;

/** What the audit trail keeps of an image (never its storage key). */
const audited = (row: TFooterRow | null) => row && { name: row.name, ext: row.ext, url: row.url, order: row.order, file_id: row.file_id };

export async function footerConfig(db: Queryable) {
  const rows = await db.query<TFooterRow>('SELECT name, ext, url, position AS order, file_key, file_id FROM footer_images ORDER BY position, name');
  return {
    images: rows.map((row) => ({
      name: row.name,
      ext: row.ext,
      src: footerImageSrc(row),
      ...(row.url ? { url: row.url } : {}),
      order: row.order,
      uploaded: row.file_id !== null,
    })),
  };
}

/** An uploaded logo under its name (replacing the image of that name), audited with before and after. */
export async function uploadFooterLogo(db: Db, storage: TFileStorage, actor: TOpsActor, upload: Pick<TReceivedUpload, 'fields' | 'files' | 'signal'>) {
  const fields = parseInput(ZOpsFooterLogoFields, upload.fields);
  const [file, ...more] = upload.files;
  if (!file || more.length || file.field !== 'file') throw new AppError('validation', { fields: { file: 'validation.required' } });
  const checked = await checkFile(file, { owner: operatorActor(actor.operator), signal: upload.signal }, LOGO_TYPES);
  const [stored] = await storeFiles(storage, 'footer-logos', [checked]);
  const key = stored!.key;
  let replaced: string | null = null;
  try {
    await db.transaction(async (tx) => {
      const before = await rowOf(tx, fields.name, true);
      replaced = before?.file_key ?? null;
      await setFooterImage(
        tx,
        {
          name: fields.name,
          ext: checked.ext as 'png',
          url: fields.url || null,
          order: fields.order === undefined ? (before?.order ?? 0) : Number(fields.order),
        },
        { key, id: key.slice(key.lastIndexOf('/') + 1) },
      );
      await writeAudit(tx, {
        ...auditedActor(actor),
        action: 'config.footer_logo',
        subject: `footer_image:${fields.name}`,
        before: audited(before),
        after: audited(await rowOf(tx, fields.name)),
      });
    });
  } catch (err) {
    await removeFiles(storage, [key]);
    throw err;
  }
  if (replaced) await removeFiles(storage, [replaced]);
  return footerConfig(db);
}

/** Takes an image out of the footer (`footer:remove`), audited; an uploaded picture is deleted after the commit. */
export async function removeFooterLogo(db: Db, storage: TFileStorage, actor: TOpsActor, name: string) {
  const before = await db.transaction(async (tx) => {
    const row = await rowOf(tx, name, true);
    if (!row || !(await removeFooterImage(tx, name))) throw notFound();
    await writeAudit(tx, {
      ...auditedActor(actor),
      action: 'config.footer_remove',
      subject: `footer_image:${name}`,
      before: audited(row),
      after: null,
    });
    return row;
  });
  if (before.file_key) await removeFiles(storage, [before.file_key]);
  return footerConfig(db);
}
