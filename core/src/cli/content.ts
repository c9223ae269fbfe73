import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { isLocale } from '@obmen/shared';
import {
  FOOTER_IMAGE_EXTS,
  MENU_NAMES,
  getContentVersion,
  getMenus,
  listArticles,
  listFooterImages,
  markdownToHtml,
  removeArticle,
  removeFooterImage,
  removeMenuItem,
  saveArticle,
  setFooterImage,
  setMenuItem,
  type TMenuName,
} from '../domains/content/service.ts';
import type { TCommand } from './command.ts';

/*
 * Operator commands for content (core/src/cli.ts runs them). Every change bumps the content
 * version in its own transaction (core/sql/functions/bump_content_version.sql), so BFF page caches drop within a second.
 */

const isMenu = (value: unknown): value is TMenuName => (MENU_NAMES as readonly unknown[]).includes(value);

function toInt(value: string | undefined, name: string): number | undefined {
  if (value === undefined) return undefined;
  if (!/^-?\d+$/.test(value)) throw new Error(`--${name} must be a whole number`);
  return Number(value);
}

/** Markdown files (.md) become HTML first; either way the sanitiser has the last word. */
export async function readArticleFile(file: string): Promise<string> {
  const text = await readFile(file, 'utf8');
  return /\.(md|markdown)$/i.test(file) ? markdownToHtml(text) : text;
}

export const CONTENT_COMMANDS: Record<string, TCommand> = {
  'menu:list': async (db, [locale]) => getMenus(db, isLocale(locale) ? locale : 'ru'),
  'menu:set': async (db, argv) => {
    const usage = `usage: menu:set <ru|en> <${MENU_NAMES.join('|')}> <url> <title> [--order N] [--icon /path-or-https-url]`;
    const { values, positionals } = parseArgs({ args: argv, allowPositionals: true, options: { order: { type: 'string' }, icon: { type: 'string' } } });
    const [locale, menu, url, title] = positionals;
    if (!isLocale(locale) || !isMenu(menu) || !url || !title || positionals.length > 4) throw new Error(usage);
    const order = toInt(values.order, 'order');
    return setMenuItem(db, { locale, menu, url, title, ...(order === undefined ? {} : { order }), icon_url: values.icon ?? null });
  },
  'menu:remove': async (db, [locale, menu, url]) => {
    if (!isLocale(locale) || !isMenu(menu) || !url) throw new Error(`usage: menu:remove <ru|en> <${MENU_NAMES.join('|')}> <url>`);
    if (!(await removeMenuItem(db, locale, menu, url))) throw new Error(`no item ${url} in ${locale} ${menu}`);
    return { removed: url, locale, menu };
  },
  'footer:set': async (db, argv) => {
    const usage = `usage: footer:set <name> <${FOOTER_IMAGE_EXTS.join('|')}> [--url /path-or-https-url] [--order N]  (file: site/public/image/footer_logos/<name>.<ext>)`;
    const { values, positionals } = parseArgs({ args: argv, allowPositionals: true, options: { url: { type: 'string' }, order: { type: 'string' } } });
    const [name, ext] = positionals;
    if (!name || !ext || positionals.length > 2) throw new Error(usage);
    const order = toInt(values.order, 'order');
    return setFooterImage(db, { name, ext: ext as (typeof FOOTER_IMAGE_EXTS)[number], url: values.url ?? null, ...(order === undefined ? {} : { order }) });
  },
  'footer:remove': async (db, [name]) => {
    if (!name) throw new Error('usage: footer:remove <name>');
    if (!(await removeFooterImage(db, name))) throw new Error(`no footer image ${name}`);
    return { removed: name };
  },
  'footer:list': (db) => listFooterImages(db),
  'article:set': async (db, [name, locale, title, file]) => {
    if (!name || !isLocale(locale) || !title || !file) throw new Error('usage: article:set <name> <ru|en> <title> <file.html|file.md>');
    const saved = await saveArticle(db, { name, locale, title, body_html: await readArticleFile(file) });
    return { saved: saved.name, locale: saved.locale, title: saved.title, bytes: Buffer.byteLength(saved.body_html), updated_at: saved.updated_at };
  },
  'article:remove': async (db, [name, locale]) => {
    if (!name || (locale !== undefined && !isLocale(locale))) throw new Error('usage: article:remove <name> [ru|en]');
    const removed = await removeArticle(db, name, locale);
    if (!removed) throw new Error(`no article ${name}${locale ? ` (${locale})` : ''}`);
    return { removed: name, rows: removed };
  },
  'article:list': (db) => listArticles(db),
  'content:version': async (db) => ({ version: await getContentVersion(db, new Date()) }),
};
