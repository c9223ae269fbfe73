/**
 * Operator commands, run against the same database as the core:
 *   node core/src/cli.ts settings                       show site settings
 *   node core/src/cli.ts settings:set <key> <json>      e.g. auth_type '"email"', site_blocked true
 *   node core/src/cli.ts menu:list <locale>
 * Content (domains/content/commands.ts): menu:set, menu:remove, footer:set, footer:remove,
 *   footer:list, article:set <name> <locale> <title> <file.html|file.md>, article:remove,
 *   article:list, site:block, site:unblock, content:version.
 * Notifications (domains/notifications/commands.ts): notify:send, notify:list, notify:delete.
 * Money (domains/ledger/commands.ts): rates:list [SRC/DST], rates:set <SRC> <DST> key=value…,
 *   rates:sync (from RATES_FEED_URL), transfer:set <CUR> key=value…, balance:credit|balance:debit
 *   <account_id> <CUR> <amount> <reason…>, ledger:reverse <transaction id> <reason…>, ledger:check.
 * Run a command without arguments for its usage.
 * DATABASE_URL / DATA_DIR select the database as for the server.
 */
import { z } from 'zod';
import { ZSiteSettings, isLocale } from '@obmen/shared';
import { loadConfig } from './config.ts';
import { openDb, type Db } from './db/index.ts';
import { migrate } from './db/migrate.ts';
import { getSiteSettings, setSiteSetting } from './domains/site/service.ts';
import { getMenus } from './domains/content/service.ts';
import { CONTENT_COMMANDS } from './domains/content/commands.ts';
import { NOTIFY_COMMANDS } from './domains/notifications/commands.ts';
import { MONEY_COMMANDS } from './domains/ledger/commands.ts';

type TCommand = (db: Db, args: string[]) => Promise<unknown>;

const COMMANDS: Record<string, TCommand> = {
  settings: (db) => getSiteSettings(db),
  'settings:set': async (db, [key, value]) => {
    const keys = Object.keys(ZSiteSettings.shape);
    if (!key || !keys.includes(key) || value === undefined) throw new Error(`usage: settings:set <${keys.join('|')}> <json value>`);
    await setSiteSetting(db, key as keyof typeof ZSiteSettings.shape, JSON.parse(value));
    return getSiteSettings(db);
  },
  'menu:list': async (db, [locale]) => getMenus(db, isLocale(locale) ? locale : 'ru'),
  ...CONTENT_COMMANDS,
  ...NOTIFY_COMMANDS,
  ...MONEY_COMMANDS,
};

const [name = '', ...args] = process.argv.slice(2);
const command = COMMANDS[name];
if (!command) {
  console.error(`commands: ${Object.keys(COMMANDS).join(', ')}`);
  process.exit(2);
}
const config = loadConfig();
const db = await openDb(config, { error: (obj, msg) => console.error(msg, obj), warn: (obj, msg) => console.error(msg, obj), info: () => {} });
try {
  await migrate(db);
  console.log(JSON.stringify(await command(db, args), null, 2));
} catch (err) {
  console.error(err instanceof z.ZodError ? z.prettifyError(err) : (err as Error).message);
  process.exitCode = 1;
} finally {
  await db.close();
}
