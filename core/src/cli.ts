/**
 * Operator commands, run against the same database as the core:
 *   node core/src/cli.ts settings                       show site settings
 *   node core/src/cli.ts settings:set <key> <json>      e.g. auth_type '"email"', site_blocked true
 *   node core/src/cli.ts article:set <name> <locale> <title> <file.html>
 *   node core/src/cli.ts menu:list <locale>
 * DATABASE_URL / DATA_DIR select the database as for the server.
 */
import { readFile } from 'node:fs/promises';
import { ZSiteSettings, isLocale } from '@obmen/shared';
import { loadConfig } from './config.ts';
import { openDb, type Db } from './db/index.ts';
import { migrate } from './db/migrate.ts';
import { getSiteSettings, setSiteSetting } from './domains/site/service.ts';
import { getMenus, saveArticle } from './domains/content/service.ts';

type TCommand = (db: Db, args: string[]) => Promise<unknown>;

const COMMANDS: Record<string, TCommand> = {
  settings: (db) => getSiteSettings(db),
  'settings:set': async (db, [key, value]) => {
    const keys = Object.keys(ZSiteSettings.shape);
    if (!key || !keys.includes(key) || value === undefined) throw new Error(`usage: settings:set <${keys.join('|')}> <json value>`);
    await setSiteSetting(db, key as keyof typeof ZSiteSettings.shape, JSON.parse(value));
    return getSiteSettings(db);
  },
  'article:set': async (db, [name, locale, title, file]) => {
    if (!name || !isLocale(locale) || !title || !file) throw new Error('usage: article:set <name> <ru|en> <title> <file.html>');
    await saveArticle(db, { name, locale, title, body_html: await readFile(file, 'utf8') });
    return { saved: name, locale };
  },
  'menu:list': async (db, [locale]) => getMenus(db, isLocale(locale) ? locale : 'ru'),
};

const [name = '', ...args] = process.argv.slice(2);
const command = COMMANDS[name];
if (!command) {
  console.error(`commands: ${Object.keys(COMMANDS).join(', ')}`);
  process.exit(2);
}
const config = loadConfig();
const db = await openDb(config, { error: (obj, msg) => console.error(msg, obj) });
try {
  await migrate(db);
  console.log(JSON.stringify(await command(db, args), null, 2));
} catch (err) {
  console.error((err as Error).message);
  process.exitCode = 1;
} finally {
  await db.close();
}
