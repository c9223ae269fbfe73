/**
 * The reader's colour theme (design "Look"): light, dark, or the system's (`prefers-color-scheme`).
 * The header's switch writes the choice into a cookie so the server renders the page in it from
 * the first byte: `<html data-theme="light|dark">`; "system" (or no cookie) leaves the attribute
 * off, and the stylesheet's `color-scheme: light dark` lets the browser pick.
 */
export const THEMES = ['light', 'dark', 'system'] as const;
export type TTheme = (typeof THEMES)[number];
export const THEME_COOKIE = 'theme';
export const THEME_COOKIE_MAX_AGE_S = 365 * 24 * 60 * 60;
/** The core's sandbox pages get the choice from the BFF in this header (the core reads no cookies). */
export const THEME_HEADER = 'x-obmen-theme';
/** The browser's bar colour per scheme (`<meta name="theme-color" media=…>`, the web app manifest). */
export const THEME_COLORS = { light: '#4d8887', dark: '#2e3440' } as const;

export function isTheme(value: unknown): value is TTheme {
  return typeof value === 'string' && (THEMES as readonly string[]).includes(value);
}

/** What a cookie (or header) value chooses: anything but the three names is no choice at all. */
export function themeOf(value: unknown): TTheme {
  return isTheme(value) ? value : 'system';
}

/** The `data-theme` attribute of <html> for a cookie value: none for "system", a bad value or no cookie. */
export function themeAttribute(value: unknown): 'light' | 'dark' | undefined {
  const theme = themeOf(value);
  return theme === 'system' ? undefined : theme;
}
