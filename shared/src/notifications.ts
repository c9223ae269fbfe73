import { z } from 'zod';

/*
 * Notifications (spec §3, §4). The shape the client receives is ZNotification in envelope.ts
 * (the `notifications` envelope key); this module holds the inputs and the rules both sides
 * share: displays, types, button URLs and the close call.
 */

export const NOTIFICATION_DISPLAYS = ['inner', 'modal'] as const;
export type TNotificationDisplay = (typeof NOTIFICATION_DISPLAYS)[number];
export const NOTIFICATION_TYPES = ['danger', 'success', 'secondary'] as const;
export type TNotificationType = (typeof NOTIFICATION_TYPES)[number];

export const NOTIFICATION_TITLE_MAX = 200;
/** HTML before sanitising. */
export const NOTIFICATION_TEXT_MAX = 10_000;
export const NOTIFICATION_BUTTONS_MAX = 4;
export const NOTIFICATION_BUTTON_TITLE_MAX = 60;

/**
 * A button may lead to a page of this site (a path: "/deposit", "/article/fees?x=1") or to an
 * https address. Refused: other schemes (javascript:, data:, http:), protocol-relative "//host"
 * and "/\host" (browsers read both as another host), whitespace and control characters.
 */
export function isSafeButtonUrl(url: string): boolean {
  if (url.length === 0 || url.length > 2048) return false;
  if (/[\s\u0000-\u001f\u007f-\u009f\\]/.test(url)) return false;
  if (url.startsWith('/')) return !url.startsWith('//');
  if (!/^https:\/\//i.test(url)) return false;
  try {
    const parsed = new URL(url);
    return parsed.protocol === 'https:' && parsed.hostname.length > 0 && parsed.username === '' && parsed.password === '';
  } catch {
    return false;
  }
}

export const ZNotificationButtonInput = z.object({
  url: z.string().refine(isSafeButtonUrl, 'notify.bad_button_url'),
  title: z.string().trim().min(1).max(NOTIFICATION_BUTTON_TITLE_MAX),
});
export type TNotificationButtonInput = z.infer<typeof ZNotificationButtonInput>;

/** POST /api/notify/close {id}: the notification_id the client was given. */
export const ZNotifyCloseBody = z.object({ id: z.coerce.number().int().positive().max(Number.MAX_SAFE_INTEGER) });
export type TNotifyCloseBody = z.infer<typeof ZNotifyCloseBody>;

/**
 * The answer to POST /api/notify/close. `remembered`: the close is stored for the signed-in
 * user (every device, every reload). Anonymous visitors get `remembered: false`: the site keeps
 * their closes in localStorage (NOTIFICATIONS_CLOSED_STORAGE_KEY).
 */
export const ZNotifyCloseResponse = z.object({
  status: z.literal('ok'),
  id: z.number().int(),
  remembered: z.boolean(),
});
export type TNotifyCloseResponse = z.infer<typeof ZNotifyCloseResponse>;

/** localStorage key under which the site keeps an anonymous visitor's closed notification ids. */
export const NOTIFICATIONS_CLOSED_STORAGE_KEY = 'obmen.closed_notifications';
