import { ZSiteSettings, type TLocale, type TSiteSettings } from '@obmen/shared';
import type { Queryable } from '../../db/index.ts';
import { keptUntilContentChanges } from '../content/service.ts';

export const DEFAULT_SITE_SETTINGS: TSiteSettings = {
  logo_url: '/image/logo.svg',
  auth_type: 'password',
  site_blocked: false,
};

export function getSiteSettings(db: Queryable): Promise<TSiteSettings> {
  return keptUntilContentChanges(db, 'site_settings', () => readSiteSettings(db));
}

async function readSiteSettings(db: Queryable): Promise<TSiteSettings> {
  const rows = await db.query<{ key: string; value: unknown }>('SELECT key, value FROM site_settings');
  const stored = Object.fromEntries(rows.map((row) => [row.key, row.value]));
  return ZSiteSettings.parse({ ...DEFAULT_SITE_SETTINGS, ...stored });
}

export async function setSiteSetting<K extends keyof TSiteSettings>(db: Queryable, key: K, value: TSiteSettings[K]): Promise<void> {
  ZSiteSettings.shape[key].parse(value);
  await db.query(
    `INSERT INTO site_settings (key, value) VALUES ($1, $2::jsonb)
     ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value, updated_at = now()`,
    [key, JSON.stringify(value)],
  );
}

/** A signed-in user's language (POST /api/lang). */
export async function setUserLocale(db: Queryable, userId: string, locale: TLocale): Promise<void> {
  await db.query('UPDATE users SET locale = $2, updated_at = now() WHERE id = $1 AND locale IS DISTINCT FROM $2', [userId, locale]);
}
