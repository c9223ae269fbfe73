import { z } from 'zod';
import { ZLocale } from './envelope.ts';

/* Content calls (spec §7 Client): menus, articles, and the version the BFF polls. */

export const MENU_NAMES = ['header_menu', 'footer_menu', 'main_menu'] as const;
export type TMenuName = (typeof MENU_NAMES)[number];

export const ARTICLE_NAME = /^[a-z0-9][a-z0-9_-]{0,63}$/;

/** POST /api/content/menu {list}: which menus to answer. */
export const ZMenuListBody = z.object({ list: z.array(z.enum(MENU_NAMES)).min(1).max(MENU_NAMES.length) });

/** GET /api/content/article/{name} */
export const ZArticleParams = z.object({ name: z.string().regex(ARTICLE_NAME) });

export const ZArticle = z.object({
  name: z.string(),
  locale: ZLocale,
  title: z.string(),
  /** Sanitised HTML. */
  body_html: z.string(),
  updated_at: z.string(),
});
export type TArticle = z.infer<typeof ZArticle>;

export const ZArticleResponse = z.object({ article: ZArticle });

/** An opaque string that changes whenever public content changes (the BFF drops its page cache). */
export const ZContentVersion = z.object({ version: z.string() });
