import { parseArgs } from 'node:util';
import { DEFAULT_LOCALE, LOCALES, NOTIFICATION_DISPLAYS, NOTIFICATION_TYPES, type TLocale } from '@obmen/shared';
import { deleteNotification, listNotifications, sendNotification, userIdOfAccount, type TSendNotification } from '../domains/notifications/service.ts';
import type { TCommand } from './command.ts';
import { readArticleFile } from './content.ts';

const SEND_USAGE = `usage: notify:send (--user <account_id> | --all) --display ${NOTIFICATION_DISPLAYS.join('|')} --type ${NOTIFICATION_TYPES.join('|')}
    --title <text> [--text <html> | --text-file <file.html|file.md>] [--button <url>,<title>]...
    [--locale ru|en]  the language of --title/--text/--button (default ${DEFAULT_LOCALE})
    [--title-en <text> --text-en <html> --button-en <url>,<title> ...]  another language (also -ru)
    [--not-closable] [--expires <ISO date | 30m | 12h | 7d>]
  A viewer gets the text of their language, else ${DEFAULT_LOCALE}'s, else any.
  Button urls: a site path (/deposit) or https://…; the text is sanitised HTML.`;

/** "2026-12-01T00:00:00Z", or a duration from now: 30m, 12h, 7d. */
export function parseExpiry(value: string, now = Date.now()): Date {
  const duration = /^(\d+)\s*([mhd])$/.exec(value.trim());
  if (duration) {
    const unit = { m: 60_000, h: 3_600_000, d: 86_400_000 }[duration[2] as 'm' | 'h' | 'd'];
    return new Date(now + Number(duration[1]) * unit);
  }
  const date = new Date(value);
  if (Number.isNaN(date.getTime())) throw new Error(`--expires: not a date or duration: ${value}`);
  return date;
}

/** "url,title": the first comma splits (titles may hold commas, urls rarely need one). */
function parseButton(value: string): { url: string; title: string } {
  const comma = value.indexOf(',');
  if (comma < 1) throw new Error(`--button wants <url>,<title>, got: ${value}`);
  return { url: value.slice(0, comma).trim(), title: value.slice(comma + 1).trim() };
}

const localeOptions = Object.fromEntries(
  LOCALES.flatMap((locale) => [
    [`title-${locale}`, { type: 'string' as const }],
    [`text-${locale}`, { type: 'string' as const }],
    [`text-file-${locale}`, { type: 'string' as const }],
    [`button-${locale}`, { type: 'string' as const, multiple: true as const }],
  ]),
);

export const NOTIFY_COMMANDS: Record<string, TCommand> = {
  'notify:send': async (db, argv) => {
    const { values } = parseArgs({
      args: argv,
      strict: true,
      options: {
        user: { type: 'string' },
        all: { type: 'boolean' },
        display: { type: 'string' },
        type: { type: 'string' },
        title: { type: 'string' },
        text: { type: 'string' },
        'text-file': { type: 'string' },
        button: { type: 'string', multiple: true },
        locale: { type: 'string' },
        'not-closable': { type: 'boolean' },
        expires: { type: 'string' },
        ...localeOptions,
      },
    });
    const get = (name: string) => (values as Record<string, unknown>)[name];
    if (Boolean(values.user) === Boolean(values.all)) throw new Error(`${SEND_USAGE}\n(give exactly one of --user and --all)`);
    let userId: string | null = null;
    if (values.user) {
      if (!/^\d{8}$/.test(values.user)) throw new Error('--user wants an 8-digit account id');
      userId = await userIdOfAccount(db, Number(values.user));
      if (!userId) throw new Error(`no user with account id ${values.user}`);
    }
    const baseLocale = (values.locale ?? DEFAULT_LOCALE) as TLocale;
    if (!(LOCALES as readonly string[]).includes(baseLocale)) throw new Error('--locale must be ru or en');

    const texts: TSendNotification['texts'] = [];
    const baseButtons = (values.button ?? []).map(parseButton);
    for (const locale of LOCALES) {
      const isBase = locale === baseLocale;
      const title = (get(`title-${locale}`) as string | undefined) ?? (isBase ? values.title : undefined);
      const textFile = (get(`text-file-${locale}`) as string | undefined) ?? (isBase ? values['text-file'] : undefined);
      const text = (get(`text-${locale}`) as string | undefined) ?? (isBase ? values.text : undefined);
      const ownButtons = get(`button-${locale}`) as string[] | undefined;
      if (title === undefined) {
        if (text !== undefined || textFile !== undefined || ownButtons) throw new Error(`--text/--button for ${locale} need a title too`);
        continue;
      }
      texts.push({
        locale,
        title,
        text: textFile ? await readArticleFile(textFile) : (text ?? ''),
        // A language without buttons of its own shows the main language's.
        buttons: ownButtons ? ownButtons.map(parseButton) : baseButtons,
      });
    }
    if (!texts.length) throw new Error(`${SEND_USAGE}\n(a --title is required)`);
    const id = await sendNotification(db, {
      userId,
      display: values.display as TSendNotification['display'],
      type: values.type as TSendNotification['type'],
      closable: !values['not-closable'],
      expiresAt: values.expires ? parseExpiry(values.expires) : null,
      texts,
    });
    return { sent: id, to: values.user ? `account ${values.user}` : 'everyone', locales: texts.map((t) => t.locale) };
  },
  'notify:list': (db, [limit]) => listNotifications(db, limit && /^\d+$/.test(limit) ? Number(limit) : 50),
  'notify:delete': async (db, [id]) => {
    if (!id || !/^\d+$/.test(id)) throw new Error('usage: notify:delete <notification_id>');
    if (!(await deleteNotification(db, Number(id)))) throw new Error(`no notification ${id}`);
    return { deleted: Number(id) };
  },
};

export { SEND_USAGE as NOTIFY_SEND_USAGE };
