import type { TFooterImage, TLocale, TMenuItem, TMenuResponse, TMenus } from '@obmen/shared';
import type { Queryable } from '../../db/index.ts';
import { notFound } from '../../errors.ts';

export const MENU_NAMES = ['header_menu', 'footer_menu', 'main_menu'] as const;
export type TMenuName = (typeof MENU_NAMES)[number];

export async function getMenus(db: Queryable, locale: TLocale, only: readonly TMenuName[] = MENU_NAMES): Promise<TMenuResponse> {
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

export async function listFooterImages(db: Queryable): Promise<TFooterImage[]> {
  const rows = await db.query<{ name: string; ext: string; url: string | null }>(
    'SELECT name, ext, url FROM footer_images ORDER BY position, name',
  );
  return rows.map((row) => (row.url ? { name: row.name, ext: row.ext, url: row.url } : { name: row.name, ext: row.ext }));
}

export type TArticle = { name: string; locale: TLocale; title: string; body_html: string; updated_at: string };

export async function getArticle(db: Queryable, name: string, locale: TLocale): Promise<TArticle> {
  const [article] = await db.query<TArticle>(
    `SELECT name, locale, title, body_html, to_char(updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') AS updated_at
     FROM articles WHERE name = $1 AND locale = $2`,
    [name, locale],
  );
  if (!article) throw notFound();
  return article;
}

/** Articles are stored as HTML; the caller is an operator, and rendering sanitises anyway. */
export async function saveArticle(db: Queryable, article: Omit<TArticle, 'updated_at'>): Promise<void> {
  await db.query(
    `INSERT INTO articles (name, locale, title, body_html) VALUES ($1, $2, $3, $4)
     ON CONFLICT (name, locale) DO UPDATE SET title = EXCLUDED.title, body_html = EXCLUDED.body_html, updated_at = now()`,
    [article.name, article.locale, article.title, article.body_html],
  );
}
