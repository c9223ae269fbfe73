import { ZSiteSettings } from '@obmen/shared';
import { getSiteSettings, setSiteSetting } from '../domains/site/service.ts';
import type { TCommand } from './command.ts';

/** Site settings operator commands. */
export const SITE_COMMANDS: Record<string, TCommand> = {
  settings: (db) => getSiteSettings(db),
  'settings:set': async (db, [key, value]) => {
    const keys = Object.keys(ZSiteSettings.shape);
    if (!key || !keys.includes(key) || value === undefined) throw new Error(`usage: settings:set <${keys.join('|')}> <json value>`);
    await setSiteSetting(db, key as keyof typeof ZSiteSettings.shape, JSON.parse(value));
    return getSiteSettings(db);
  },
  'site:block': async (db) => {
    await setSiteSetting(db, 'site_blocked', true);
    return getSiteSettings(db);
  },
  'site:unblock': async (db) => {
    await setSiteSetting(db, 'site_blocked', false);
    return getSiteSettings(db);
  },
};
