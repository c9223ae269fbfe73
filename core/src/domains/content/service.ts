import { marked } from 'marked';
import { z } from 'zod';
import {
  ARTICLE_NAME,
  LOCALES,
  MENU_NAMES,
  type TArticle,
  type TFooterImage,
  type TLocale,
  type TMenuItem,
  type TMenuName,
  type TMenuResponse,
  type TMenus,
} from '@obmen/shared';
import { statement, type Queryable } from '../../db/index.ts';
import { keptWhileCounterHolds } from '../../db/kept.ts';
import type { FastifyReply } from 'fastify';
import { notFound, notFoundOf } from '../../errors.ts';
import type { TFileStorage } from '../../storage/index.ts';
import { sanitizeForServing, sanitizeHtmlContent } from '../../lib/sanitize.ts';

export { MENU_NAMES, type TMenuName };

export const FOOTER_IMAGE_EXTS = ['svg', 'png', 'webp', 'jpg'] as const;

/** https://… only, nothing else absolute. */
function isHttpsUrl(value: string): boolean {
  if (!/^https:\/\//i.test(value) || /[\s\\]/.test(value)) return false;
  try {
    return new URL(value).protocol === 'https:';
  } catch {
    return false;
  }
}

/** A path of this site: "/image/x.svg"; never "//host" or "/\host". */
function isSitePath(value: string): boolean {
  return /^\/(?![/\\])[^\s\\]*$/.test(value);
}

/**
 * Menu item urls are site paths without the leading slash, as the spec's header links go to
 * /{url} ("exchanges", "article/fees", "logout"); footer menu urls are article names. An
 * https address is allowed for links out. No scheme, no "//", no whitespace.
 */
const ZMenuUrl = z
  .string()
  .max(200)
  .refine((url) => /^[A-Za-z0-9][A-Za-z0-9/_.~%?=&-]*$/.test(url) || isHttpsUrl(url), 'a path like "article/fees" or an https:// address');

const ZSiteOrHttpsUrl = z
  .string()
  .max(2048)
  .refine((url) => isSitePath(url) || isHttpsUrl(url), 'a path like "/image/x.svg" or an https:// address');

export const ZMenuItemInput = z.object({
  locale: z.enum(LOCALES),
  menu: z.enum(MENU_NAMES),
  url: ZMenuUrl,
  title: z.string().trim().min(1).max(100),
  order: z.number().int().min(-1_000_000).max(1_000_000).default(0),
  icon_url: ZSiteOrHttpsUrl.nullish(),
});
export type TMenuItemInput = z.input<typeof ZMenuItemInput>;

export const ZFooterImageInput = z.object({
  name: z.string().regex(/^[a-z0-9_-]{1,64}$/),
  ext: z.enum(FOOTER_IMAGE_EXTS),
  url: ZSiteOrHttpsUrl.nullish(),
  order: z.number().int().min(-1_000_000).max(1_000_000).default(0),
});
export type TFooterImageInput = z.input<typeof ZFooterImageInput>;

export const ZArticleInput = z.object({
  name: z.string().regex(ARTICLE_NAME),
  locale: z.enum(LOCALES),
  title: z.string().trim().min(1).max(200),
  body_html: z.string().max(500_000),
});
export type TArticleInput = z.input<typeof ZArticleInput>;

// ---- menus and footer images --------------------------------------------------------------

export function getMenus(db: Queryable, locale: TLocale, only: readonly TMenuName[] = MENU_NAMES): Promise<TMenuResponse> {
  return keptUntilContentChanges(db, `menus:${locale}:${only.join(',')}`, () => readMenus(db, locale, only));
}

async function readMenus(db: Queryable, locale: TLocale, only: readonly TMenuName[]): Promise<TMenuResponse> {
  const [items, images] = await Promise.all([
    db.query<{ menu: TMenuName; url: string; title: string; position: number; icon_url: string | null }>(
      `SELECT menu, url, title, position, icon_url FROM menu_items
       WHERE locale = $1 AND menu = ANY($2::text[]) ORDER BY menu, position, id`,
      [locale, only],
    ),
    listFooterImages(db),
  ]);
  const menus: TMenus = { header_menu: [], footer_menu: [], main_menu: [] };
  for (const row of items) {
    const item: TMenuItem = { url: row.url, title: row.title, order: row.position };
    if (row.icon_url) item.icon_url = row.icon_url;
    menus[row.menu].push(item);
  }
  return { menus, footer_images: images };
}

/** Adds a menu item or updates the one with the same locale, menu and url. */
export async function setMenuItem(db: Queryable, input: TMenuItemInput): Promise<TMenuItem> {
  const item = ZMenuItemInput.parse(input);
  await db.query(
    `INSERT INTO menu_items (locale, menu, url, title, position, icon_url) VALUES ($1, $2, $3, $4, $5, $6)
     ON CONFLICT (locale, menu, url) DO UPDATE SET title = EXCLUDED.title, position = EXCLUDED.position, icon_url = EXCLUDED.icon_url`,
    [item.locale, item.menu, item.url, item.title, item.order, item.icon_url ?? null],
  );
  return { url: item.url, title: item.title, order: item.order, ...(item.icon_url ? { icon_url: item.icon_url } : {}) };
}

/** Whether there was such an item. */
export async function removeMenuItem(db: Queryable, locale: TLocale, menu: TMenuName, url: string): Promise<boolean> {
  const rows = await db.query('DELETE FROM menu_items WHERE locale = $1 AND menu = $2 AND url = $3 RETURNING id', [locale, menu, url]);
  return rows.length > 0;
}

/** Where a footer image loads from: an uploaded logo through the core, else the site's own file. */
export const footerImageSrc = (row: { name: string; ext: string; file_id: string | null }) =>
  row.file_id ? `/api/site/logos/${row.file_id}` : `/image/footer_logos/${row.name}.${row.ext}`;

const footerImage = (row: { name: string; ext: string; url: string | null; file_id: string | null }): TFooterImage => ({
  name: row.name,
  ext: row.ext,
  src: footerImageSrc(row),
  ...(row.url ? { url: row.url } : {}),
});

export async function listFooterImages(db: Queryable): Promise<TFooterImage[]> {
  const rows = await db.query<{ name: string; ext: string; url: string | null; file_id: string | null }>(
    'SELECT name, ext, url, file_id FROM footer_images ORDER BY position, name',
  );
  return rows.map(footerImage);
}

/**
 * Registers a footer image: a file of the site (/image/footer_logos/{name}.{ext}, `footer:set`),
 * or an uploaded logo already in storage (`file`), which replaces whatever had the name.
 */
export async function setFooterImage(db: Queryable, input: TFooterImageInput, file: { key: string; id: string } | null = null): Promise<TFooterImage> {
  const image = ZFooterImageInput.parse(input);
  await db.query(
    `INSERT INTO footer_images (name, ext, url, position, file_key, file_id) VALUES ($1, $2, $3, $4, $5, $6)
     ON CONFLICT (name) DO UPDATE SET ext = EXCLUDED.ext, url = EXCLUDED.url, position = EXCLUDED.position,
       file_key = EXCLUDED.file_key, file_id = EXCLUDED.file_id`,
    [image.name, image.ext, image.url ?? null, image.order, file?.key ?? null, file?.id ?? null],
  );
  return footerImage({ name: image.name, ext: image.ext, url: image.url ?? null, file_id: file?.id ?? null });
}

const LOGO_TYPE: Record<string, string> = { png: 'image/png', jpg: 'image/jpeg', webp: 'image/webp' };
/** A logo's address changes with each upload, so browsers and shared caches may keep it for a year. */
const LOGO_CACHE = 'public, max-age=31536000, immutable';

/** GET /api/site/logos/{file_id}: an uploaded logo for everyone, cached for good (a new upload is a new address). */
export async function sendFooterLogo(reply: FastifyReply, db: Queryable, storage: TFileStorage, fileId: string): Promise<FastifyReply> {
  const [row] = await db.query<{ file_key: string; ext: string }>('SELECT file_key, ext FROM footer_images WHERE file_id = $1', [fileId]);
  const object = row ? await storage.get(row.file_key) : null;
  if (!row || !object) throw notFound();
  return reply
    .header('content-type', LOGO_TYPE[row.ext] ?? 'application/octet-stream')
    .header('content-length', object.size)
    .header('cache-control', LOGO_CACHE)
    .header('x-content-type-options', 'nosniff')
    .header('content-security-policy', "default-src 'none'; sandbox")
    .send(object.body);
}

export async function removeFooterImage(db: Queryable, name: string): Promise<boolean> {
  return (await db.query('DELETE FROM footer_images WHERE name = $1 RETURNING name', [name])).length > 0;
}

// ---- articles -------------------------------------------------------------------------------

/** Markdown (GitHub's flavour) to HTML, as `article:set` reads a .md file; the sanitiser runs after, on save. */
export function markdownToHtml(markdown: string): string {
  return marked.parse(markdown, { async: false, gfm: true });
}

/** What a page would serve of this HTML: stored through the sanitiser, served through it again. */
export function servedHtml(html: string): string {
  return sanitizeForServing(sanitizeHtmlContent(html));
}

const ARTICLE_COLUMNS = `name, locale, title, body_html, to_char(updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') AS updated_at`;

/** Sanitised on the way out as well: a row written around saveArticle is made safe too. */
export async function getArticle(db: Queryable, name: string, locale: TLocale): Promise<TArticle> {
  const [article] = await db.query<TArticle>(`SELECT ${ARTICLE_COLUMNS} FROM articles WHERE name = $1 AND locale = $2`, [name, locale]);
  if (!article) throw notFoundOf('article');
  return { ...article, body_html: sanitizeForServing(article.body_html) };
}

export async function listArticles(db: Queryable): Promise<Array<Omit<TArticle, 'body_html'> & { bytes: number }>> {
  return db.query(
    `SELECT name, locale, title, octet_length(body_html) AS bytes,
       to_char(updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') AS updated_at
     FROM articles ORDER BY name, locale`,
  );
}

/** Articles are stored sanitised (the allowlist of lib/sanitize.ts); returns what was stored. */
export async function saveArticle(db: Queryable, input: Omit<TArticle, 'updated_at'> | TArticleInput): Promise<TArticle> {
  const article = ZArticleInput.parse(input);
  const body = sanitizeHtmlContent(article.body_html);
  const [saved] = await db.query<TArticle>(
    `INSERT INTO articles (name, locale, title, body_html) VALUES ($1, $2, $3, $4)
     ON CONFLICT (name, locale) DO UPDATE SET title = EXCLUDED.title, body_html = EXCLUDED.body_html, updated_at = now()
     RETURNING ${ARTICLE_COLUMNS}`,
    [article.name, article.locale, article.title, body],
  );
  return saved!;
}

/** One locale, or every locale when none is given; the number of rows removed. */
export async function removeArticle(db: Queryable, name: string, locale?: TLocale): Promise<number> {
  const rows = locale
    ? await db.query('DELETE FROM articles WHERE name = $1 AND locale = $2 RETURNING name', [name, locale])
    : await db.query('DELETE FROM articles WHERE name = $1 RETURNING name', [name]);
  return rows.length;
}

// ---- content version ------------------------------------------------------------------------

const CONTENT_COUNTER = statement('content_counter', 'SELECT version::text AS version FROM content_version WHERE id');

/**
 * What `load` answers, kept until the content counter of migration 004 moves: every page asks
 * for the menus and the site settings, which change by an operator's hand. Only for what that
 * counter's triggers cover (articles, menus, footer images, site settings).
 */
export function keptUntilContentChanges<T>(db: Queryable, key: string, load: () => Promise<T>): Promise<T> {
  return keptWhileCounterHolds(db, CONTENT_COUNTER, key, load);
}

/**
 * Changes whenever anything a signed-out page shows changes: the counter that triggers bump in
 * the writing transaction (migration 004), plus the last passed expiry of a notification for
 * everyone (an expiry changes the page without any write). Opaque to callers: compare, don't parse.
 */
export async function getContentVersion(db: Queryable, now: Date): Promise<string> {
  const [row] = await db.query<{ version: string; expired: string | null }>(
    `SELECT v.version::text AS version,
       (SELECT (extract(epoch FROM max(n.expires_at)) * 1000)::bigint::text FROM notifications n
        WHERE n.user_id IS NULL AND n.expires_at IS NOT NULL AND n.expires_at <= $1) AS expired
     FROM content_version v WHERE v.id`,
    [now],
  );
  return `${row?.version ?? '0'}.${row?.expired ?? '0'}`;
}
