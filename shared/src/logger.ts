import { z } from 'zod';

/*
 * The front-end logger (spec §8): POST /api/logger/front, owned by the BFF and never forwarded
 * to the core. The site sends one report per error, JSON (fetch, or navigator.sendBeacon with
 * a Blob of type application/json); text/plain bodies holding the same JSON are accepted too.
 */

export const FRONT_LOG_PATH = '/api/logger/front';

export const FRONT_LOG_TYPES = ['react', 'window', 'unhandledrejection', 'i18n', 'chunk', 'other'] as const;
export type TFrontLogType = (typeof FRONT_LOG_TYPES)[number];

/** The whole request body; bigger bodies are refused with 413. */
export const FRONT_LOG_BODY_LIMIT = 16 * 1024;

/** Longer fields are cut, not refused: a report of an error with a long stack is still useful. */
export const FRONT_LOG_LIMITS = { message: 2000, stack: 8000, url: 2048, user_agent: 512, time: 64 } as const;

const cut = (max: number) => z.string().transform((value) => (value.length > max ? value.slice(0, max) : value));

export const ZFrontLog = z.object({
  type: z.enum(FRONT_LOG_TYPES),
  message: z.string().min(1).pipe(cut(FRONT_LOG_LIMITS.message)),
  stack: cut(FRONT_LOG_LIMITS.stack).optional(),
  url: cut(FRONT_LOG_LIMITS.url),
  user_agent: cut(FRONT_LOG_LIMITS.user_agent),
  /** The browser's clock, ISO 8601 (new Date().toISOString()); logged as given, never trusted. */
  time: cut(FRONT_LOG_LIMITS.time),
});
/** What the site sends. */
export type TFrontLogInput = z.input<typeof ZFrontLog>;
export type TFrontLog = z.infer<typeof ZFrontLog>;
