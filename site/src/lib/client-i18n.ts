import { MISSING_KEY_MESSAGE, type TLocale } from '@obmen/shared/constants';
import { reportFrontError } from './logger.ts';

/** The few strings browser code needs outside React islands; the layout embeds them. */
let messages: Record<string, string> = {};
let locale: TLocale = 'ru';

export function setClientMessages(next: Record<string, string>, nextLocale: TLocale): void {
  messages = next;
  locale = nextLocale;
}

export function clientLocale(): TLocale {
  return locale;
}

export function clientMessage(key: string, vars: Record<string, string> = {}): string {
  const message = messages[key];
  if (message !== undefined) return message.replace(/\{\{(\w+)\}\}/g, (whole, name: string) => vars[name] ?? whole);
  reportFrontError({ type: 'i18n', message: MISSING_KEY_MESSAGE, stack: key });
  return key;
}

/** Keys the layout always ships to the browser. */
export const CLIENT_MESSAGE_KEYS = [
  'error.network',
  'error.generic',
  'copied-toast',
  'toast.close',
  'popup.exchanged',
  'popup.transferred',
  'popup.new_message',
] as const;
