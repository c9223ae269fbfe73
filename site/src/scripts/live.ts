/**
 * What the realtime socket shows beyond the stores: the payment popup (spec §3/§4), the
 * rates notice for the pair page's chart (`obmen:rates` on window),
 * and browser notifications for new chat messages while the tab is hidden (spec §8).
 */
import { AVATAR_MAX, AVATAR_MIN, PAYMENT_POPUP_LIFETIME_MS } from '@obmen/shared/constants';
import type { TFeedItem, TRealtimeEvent } from '@obmen/shared/realtime';
import type { TChatMessageEvent } from '@obmen/shared/chat';
import { displayAmount } from '@obmen/shared/format';
import type { TLocale } from '@obmen/shared/constants';
import { clientMessage } from '../lib/client-i18n.ts';
import { RATES_EVENT, REALTIME_EVENT, startRealtime } from '../lib/realtime.ts';

/** At most this many popups on screen; the oldest goes first. */
const POPUPS_MAX = 3;

export function randomAvatar(random: () => number = Math.random): number {
  return AVATAR_MIN + Math.floor(random() * (AVATAR_MAX - AVATAR_MIN + 1));
}

export function randomPopupId(): string {
  return crypto.randomUUID();
}

/** The popup's text: no name, the amount as the server rounded it, in the page's locale. */
export function popupText(item: TFeedItem, locale: TLocale): string {
  const amount = `${displayAmount(item.amount, locale, 0)}\u00a0${item.currency}`;
  return item.kind === 'exchange' && item.to ? clientMessage('popup.exchanged', { amount, to: item.to }) : clientMessage('popup.transferred', { amount });
}

function showPaymentPopup(item: TFeedItem, locale: TLocale) {
  const host = document.getElementById('payment-popups');
  if (!host) return;
  const avatar = randomAvatar();
  const popup = document.createElement('div');
  popup.className = 'payment-popup';
  popup.dataset.testid = 'payment-popup';
  popup.dataset.popupId = randomPopupId();
  popup.dataset.avatar = String(avatar);
  const badge = document.createElement('span');
  badge.className = 'payment-popup-avatar';
  badge.setAttribute('aria-hidden', 'true');
  badge.style.setProperty('--avatar-hue', String((avatar * 24) % 360));
  badge.textContent = String(avatar);
  const text = document.createElement('span');
  text.textContent = popupText(item, locale);
  popup.append(badge, text);
  host.append(popup);
  while (host.children.length > POPUPS_MAX) host.firstElementChild?.remove();
  window.setTimeout(() => popup.remove(), PAYMENT_POPUP_LIFETIME_MS);
}

const ASKED_FLAG = 'obmen.notifications_asked';

/**
 * Asks for browser notifications once, politely: after the user's own first chat message (its
 * `chat.message` event, author "me"). A refusal only logs a warning (spec §8).
 */
export async function askNotificationPermission(): Promise<void> {
  if (!('Notification' in window) || Notification.permission !== 'default' || localStorage.getItem(ASKED_FLAG)) return;
  localStorage.setItem(ASKED_FLAG, '1');
  const answer = await Notification.requestPermission();
  if (answer === 'denied') console.warn('Browser notifications are disabled: permission denied.');
}

let warnedDenied = false;

/** A `chat.message` event: the user's own first message asks for permission; others notify a hidden tab. */
function onChatMessage(event: TRealtimeEvent) {
  if (event.type !== 'chat.message' || !('Notification' in window)) return;
  const { chat, message } = (event.payload ?? {}) as Partial<TChatMessageEvent>;
  if (!message) return;
  if (message.author === 'me') return void askNotificationPermission();
  if (!document.hidden) return;
  if (Notification.permission === 'denied') {
    if (!warnedDenied) console.warn('Browser notifications are disabled: permission denied.');
    warnedDenied = true;
    return;
  }
  if (Notification.permission !== 'granted') return;
  // Shown as text by the browser, never as HTML.
  const note = new Notification(clientMessage('popup.new_message'), { body: message.text.slice(0, 140), tag: 'obmen-chat' });
  const url = chat === 'support' ? '/chat/support' : typeof chat === 'number' ? `/chat/private/${chat}` : null;
  note.onclick = () => {
    window.focus();
    if (url) window.location.assign(url);
  };
}

/** Signed-in pages: one socket, the popup, browser notifications. */
export function initLive(accountId: number | null, locale: TLocale) {
  if (accountId === null || typeof WebSocket === 'undefined') return;
  window.addEventListener(REALTIME_EVENT, (event) => onChatMessage((event as CustomEvent<TRealtimeEvent>).detail));
  startRealtime({
    accountId,
    onFeed: (item) => showPaymentPopup(item, locale),
    onRates: () => window.dispatchEvent(new Event(RATES_EVENT)),
    onResync: () => void import('../lib/api.ts').then(({ refetchAuthState }) => refetchAuthState()).catch(() => {}),
    onSessionEnded: () => void import('../lib/api.ts').then(({ refetchAuthState }) => refetchAuthState()).catch(() => {}),
  });
}
