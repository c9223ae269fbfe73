// Business constants of spec §9. Everything time-like is in milliseconds.
export const TOAST_DELAY_MS = 2000;
export const PAYMENT_POPUP_LIFETIME_MS = 12_000;
export const RELOAD_GUARD_MS = 60_000;
export const FETCH_DELAY_MS = 200;
export const IDLE_PREFETCH_TIMEOUT_MS = 2000;
export const PREFETCH_SKIPPED_CONNECTIONS = ['slow-2g', '2g'] as const;
export const PROGRESS_BAR_DURATION_MS = 5000;
export const PROGRESS_BAR_THROTTLE_MS = 200;

export const LOCALES = ['ru', 'en'] as const;
export type TLocale = (typeof LOCALES)[number];
export const DEFAULT_LOCALE: TLocale = 'ru';
export const LOCALE_COOKIE = 'i18n_redirected';
export const LOCALE_COOKIE_MAX_AGE_S = 365 * 24 * 60 * 60;

/** The largest request body the API takes (core and BFF alike): 413 beyond. */
export const API_BODY_LIMIT_BYTES = 1024 * 1024;

export const SESSION_COOKIE = 'remember_token';
/** core → BFF only; the BFF strips it before the browser sees the response. */
export const SESSION_TOKEN_HEADER = 'x-obmen-session-token';
/**
 * core → BFF only, on a 404 of a path no route serves (not a missing entity): the BFF counts it
 * against its per-client 404 limit (NOT_FOUND_PER_MINUTE) and strips it.
 */
export const ROUTE_NOT_FOUND_HEADER = 'x-obmen-route-not-found';

/** What a missing translation is reported as (spec §8). */
export const MISSING_KEY_MESSAGE = 'Missing i18n key';

export const AVATAR_MIN = 1;
export const AVATAR_MAX = 15;
/** The tutorial's steps, numbered from 1 (each has its `tutorial.step_N.*` texts). */
export const TUTORIAL_STEP_NUMBERS = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14] as const;
export const TUTORIAL_STEPS = TUTORIAL_STEP_NUMBERS.length;

export const BREAKPOINTS = { xs: 300, md: 768, lg: 992, xl: 1200 } as const;
export const PRIMARY_COLOR = '#4d8887';
export const THEME = 'nord_frost';

export function isLocale(value: unknown): value is TLocale {
  return typeof value === 'string' && (LOCALES as readonly string[]).includes(value);
}
