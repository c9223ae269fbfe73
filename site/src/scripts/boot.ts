/**
 * The one script every page loads: no framework, a few KB. It seeds the stores from the
 * server's state, wires the header (burger, language, account id) and reports errors.
 */
import { LOCALE_COOKIE_MAX_AGE_S, TOAST_DELAY_MS, isLocale, type TLocale } from '@obmen/shared/constants';
import type { TBalance, TChatMessageEvent, TNotification, TSiteSettings, TUnreadMsgs, TUser, TWallet } from '@obmen/shared';
import { clientMessage, setClientMessages } from '../lib/client-i18n.ts';
import { TIME_ZONE_COOKIE, displayAmount, isZeroAmount } from '@obmen/shared/format';
import { reportFrontError } from '../lib/logger.ts';
import { $frontendVersion } from '../stores/version.ts';
import { $totalBalance, $wallets } from '../stores/wallets.ts';
import { $chatMessageEvent, $chatRead, $unreadMsgs } from '../stores/messages.ts';
import { unreadPopupHiddenOn } from '@obmen/shared/chat-text';
import { REALTIME_EVENT } from '../lib/realtime.ts';
import { $user } from '../stores/user.ts';
import { $siteSettings } from '../stores/site.ts';
import { $notifications } from '../stores/notifications.ts';
import { $toasts, showToast } from '../stores/toasts.ts';
import { initProgressBar } from './progress.ts';
import { initPrefetch } from './prefetch.ts';
import { initChunkReload } from './reload-guard.ts';
import { initNotifications } from './notifications.ts';
import { initLive } from './live.ts';
import { initStatusEvents } from './status.ts';
import { initThemeSwitch } from './theme.ts';
import { initInstallable } from './installable.ts';

/** Written by the root layout from the core's own answers. */
type TPageState = {
  locale: string;
  fv: string;
  messages: Record<string, string>;
  user: TUser;
  site_settings: TSiteSettings;
  total_balance: TBalance | null;
  wallets: TWallet[];
  unread_msgs: TUnreadMsgs | null;
  notifications: TNotification[];
};

/** The /api client (and zod with it) loads only when a page first calls the server. */
const loadApi = () => import('../lib/api.ts');

function readState(): TPageState | null {
  const element = document.getElementById('obmen-state');
  if (!element?.textContent) return null;
  return JSON.parse(element.textContent) as TPageState;
}

function initStores(state: TPageState) {
  const locale: TLocale = isLocale(state.locale) ? state.locale : 'ru';
  setClientMessages(state.messages, locale);
  // Server-rendered state is the core's own answer: trusted as is, unlike later /api answers.
  $frontendVersion.set(state.fv);
  $user.set(state.user);
  $siteSettings.set(state.site_settings);
  $wallets.set(state.wallets);
  $totalBalance.set(state.total_balance);
  if (state.unread_msgs) $unreadMsgs.set(state.unread_msgs);
  $notifications.set(state.notifications);
}

function initErrorReporting() {
  window.addEventListener('error', (event) => {
    reportFrontError({ type: 'window', message: event.message, stack: (event.error as Error | undefined)?.stack ?? '' });
  });
  window.addEventListener('unhandledrejection', (event) => {
    const reason = event.reason as Error | undefined;
    reportFrontError({ type: 'unhandledrejection', message: reason?.message ?? String(event.reason), stack: reason?.stack ?? '' });
  });
}

function initBurger() {
  const menu = document.getElementById('mobile-menu');
  const open = document.querySelector<HTMLButtonElement>('[data-testid="burger-open"]');
  if (!menu || !open) return;
  // Open, the menu is the page: what lies behind is inert (no focus, no clicks), focus starts
  // on its close button and returns to the burger when it closes.
  const behind = () =>
    [...document.body.children].filter(
      (element): element is HTMLElement =>
        element instanceof HTMLElement &&
        element !== menu &&
        element.tagName !== 'SCRIPT' &&
        element.tagName !== 'DIALOG' &&
        !element.classList.contains('toasts'),
    );
  const setOpen = (isOpen: boolean) => {
    const wasOpen = !menu.hidden;
    menu.hidden = !isOpen;
    open.setAttribute('aria-expanded', String(isOpen));
    document.body.style.overflow = isOpen ? 'hidden' : '';
    for (const element of behind()) element.inert = isOpen;
    if (isOpen) menu.querySelector<HTMLElement>('[data-testid="burger-close"]')?.focus();
    else if (wasOpen) open.focus();
  };
  open.addEventListener('click', () => setOpen(true));
  menu.querySelector('[data-testid="burger-close"]')?.addEventListener('click', () => setOpen(false));
  // It closes on route change: any link followed from inside it, back/forward cache restores too.
  menu.addEventListener('click', (event) => {
    if ((event.target as Element).closest('a[href]')) setOpen(false);
  });
  window.addEventListener('pageshow', () => setOpen(false));
  document.addEventListener('keydown', (event) => {
    if (event.key === 'Escape' && !menu.hidden) setOpen(false);
  });
}

function initLanguageSwitch(current: string) {
  for (const button of document.querySelectorAll<HTMLButtonElement>('[data-lang]')) {
    button.addEventListener('click', async () => {
      const lang = button.dataset.lang;
      // Spec §4: choosing the active locale only refreshes.
      if (lang === current || !isLocale(lang)) return window.location.reload();
      button.disabled = true;
      try {
        const { api, CALLS } = await loadApi();
        await api(CALLS['POST /api/lang'], { body: { lang } });
        window.location.reload();
      } catch (err) {
        button.disabled = false;
        showToast((err as Error).message, 'danger');
      }
    });
  }
}

/**
 * Tells the server the reader's time zone, so the next page prints times in it on both sides
 * (until then the server and the islands print UTC, and say so).
 */
function initTimeZone() {
  const zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
  const cookie = `${TIME_ZONE_COOKIE}=${zone}`;
  if (!zone || document.cookie.split('; ').includes(cookie)) return;
  const secure = window.location.protocol === 'https:' ? '; secure' : '';
  document.cookie = `${cookie}; path=/; max-age=${LOCALE_COOKIE_MAX_AGE_S}; samesite=lax${secure}`;
}

function initAccountId() {
  for (const button of document.querySelectorAll<HTMLButtonElement>('[data-account-id]')) {
    button.addEventListener('click', async () => {
      try {
        await navigator.clipboard.writeText(button.dataset.accountId ?? '');
        showToast(clientMessage('copied-toast'), 'success', TOAST_DELAY_MS);
      } catch (err) {
        reportFrontError({ type: 'window', message: `clipboard: ${(err as Error).message}` });
      }
    });
  }
}

function initLogout() {
  const dialog = document.getElementById('logout-dialog') as HTMLDialogElement | null;
  if (!dialog) return;
  // A native modal dialog keeps focus inside and closes on Escape; closing returns focus to
  // whatever opened it (the burger menu's item stays reachable: the dialog is above it).
  let opener: HTMLElement | null = null;
  for (const trigger of document.querySelectorAll<HTMLElement>('[data-logout]')) {
    trigger.addEventListener('click', () => {
      opener = trigger;
      dialog.showModal();
      dialog.querySelector<HTMLElement>('[data-logout-cancel]')?.focus();
    });
  }
  dialog.addEventListener('close', () => opener?.focus());
  dialog.querySelector('[data-logout-cancel]')?.addEventListener('click', () => dialog.close());
  const confirm = dialog.querySelector<HTMLButtonElement>('[data-logout-confirm]');
  confirm?.addEventListener('click', async () => {
    confirm.disabled = true;
    try {
      const { api, CALLS } = await loadApi();
      await api(CALLS['POST /api/auth/logout'], { body: {} });
      window.location.assign('/');
    } catch (err) {
      confirm.disabled = false;
      showToast((err as Error).message, 'danger');
    }
  });
}

function initLiveHeader() {
  $totalBalance.subscribe((balance) => {
    if (!balance) return;
    const amount = `${displayAmount(balance.amount, document.documentElement.lang as TLocale)} ${balance.currency}`;
    for (const element of document.querySelectorAll('[data-balance-amount]')) element.textContent = amount;
  });
  // The wallet lists (sidebar, burger menu): amounts and the last-exchange highlight follow $wallets.
  $wallets.subscribe((wallets) => {
    const byCode = new Map(wallets.map((wallet) => [wallet.currency, wallet]));
    for (const link of document.querySelectorAll<HTMLElement>('[data-wallet-currency]')) {
      const wallet = byCode.get(link.dataset.walletCurrency ?? '');
      if (!wallet) continue;
      link.dataset.balance = wallet.balance;
      const amount = link.querySelector('[data-wallet-amount]');
      if (amount) amount.textContent = displayAmount(wallet.balance, document.documentElement.lang as TLocale);
      const held = link.querySelector<HTMLElement>('[data-wallet-held]');
      const heldAmount = held?.querySelector('[data-wallet-held-amount]');
      if (held && heldAmount && wallet.held !== undefined) {
        held.hidden = isZeroAmount(wallet.held);
        heldAmount.textContent = displayAmount(wallet.held, document.documentElement.lang as TLocale);
      }
      link.closest('[data-wallet-item]')?.classList.toggle('last', wallet.last_exchange);
    }
  });
  $unreadMsgs.subscribe((unread) => {
    const total = unread.private + unread.support;
    for (const element of document.querySelectorAll<HTMLElement>('[data-unread-count]')) {
      element.textContent = String(total);
      element.hidden = total === 0;
    }
  });
}

/** The chat sidebar's badges: support exact from the counters, a private chat counted up by its live messages. */
function initChatBadges() {
  const setBadge = (element: HTMLElement, count: number) => {
    element.textContent = String(count);
    element.hidden = count === 0;
  };
  $unreadMsgs.subscribe((unread) => {
    for (const badge of document.querySelectorAll<HTMLElement>('[data-chat-badge="support"]')) setBadge(badge, unread.support);
  });
  // The open chat read to its end: its badge, rendered by the server before the read, goes.
  $chatRead.subscribe((read) => {
    if (read) for (const badge of document.querySelectorAll<HTMLElement>(`[data-chat-badge="${read.chat}"]`)) setBadge(badge, 0);
  });
  // The realtime client (site/src/lib/realtime.ts) dispatches every event on window; a new chat
  // message goes to the chat stores (the open chat island appends it, the badges count it).
  window.addEventListener(REALTIME_EVENT, (event) => {
    const detail = (event as CustomEvent<{ type: string; payload: unknown }>).detail;
    if (detail?.type === 'chat.message' && detail.payload && typeof detail.payload === 'object') $chatMessageEvent.set(detail.payload as TChatMessageEvent);
  });
  $chatMessageEvent.subscribe((event) => {
    if (!event || event.chat === 'support' || event.message.author !== 'other') return;
    if (window.location.pathname === `/chat/private/${event.chat}`) return;
    // A chat that was not listed yet (its first message): added after Support, like the server renders it.
    for (const list of document.querySelectorAll<HTMLElement>('[data-chat-list]')) {
      if (list.querySelector(`[data-chat-badge="${event.chat}"]`)) continue;
      const item = document.createElement('li');
      const link = document.createElement('a');
      link.href = `/chat/private/${event.chat}`;
      const title = document.createElement('span');
      title.textContent = event.title ?? String(event.chat);
      const badge = document.createElement('span');
      badge.className = 'badge';
      badge.dataset.chatBadge = String(event.chat);
      badge.textContent = '0';
      link.append(title, badge);
      item.append(link);
      list.firstElementChild?.after(item);
    }
    for (const badge of document.querySelectorAll<HTMLElement>(`[data-chat-badge="${event.chat}"]`)) setBadge(badge, Number(badge.textContent || 0) + 1);
  });
}

/**
 * Spec §4: with unread messages (private + support > 0) a popup offers the support chat (the
 * list of chats when only private ones are unread), except on exchange and chat pages. Closed, it stays away until the count grows (per browser tab).
 */
function initUnreadPopup() {
  const popup = document.querySelector<HTMLElement>('[data-unread-popup]');
  const text = popup?.querySelector<HTMLElement>('[data-unread-popup-text]');
  if (!popup || !text) return;
  const template = text.dataset.template ?? '';
  const open = popup.querySelector<HTMLAnchorElement>('[data-unread-popup-open]');
  const supportLabel = open?.textContent ?? '';
  const KEY = 'obmen-unread-dismissed';
  const dismissedAt = () => {
    try {
      return Number(sessionStorage.getItem(KEY) ?? 0);
    } catch {
      return 0;
    }
  };
  const dismiss = (total: number) => {
    try {
      sessionStorage.setItem(KEY, String(total));
    } catch {
      // Storage refused (private mode): the popup simply comes back on the next page.
    }
  };
  const hiddenHere = unreadPopupHiddenOn(window.location.pathname);
  let total = 0;
  popup.querySelector('[data-unread-popup-close]')?.addEventListener('click', () => {
    dismiss(total);
    popup.hidden = true;
  });
  $unreadMsgs.subscribe((unread) => {
    total = unread.private + unread.support;
    if (total < dismissedAt()) dismiss(total);
    text.textContent = template.replace('{{count}}', String(total));
    // Where the unread messages are: support first; only private ones open the list of chats.
    if (open) {
      const support = unread.support > 0;
      open.href = support ? '/chat/support' : '/chat';
      open.textContent = support ? supportLabel : (open.dataset.chatsLabel ?? supportLabel);
    }
    popup.hidden = hiddenHere || total === 0 || total <= dismissedAt();
  });
}

function initToasts() {
  const host = document.getElementById('toasts');
  if (!host) return;
  $toasts.subscribe((toasts) => {
    host.replaceChildren(
      ...toasts.map((toast) => {
        const element = document.createElement('div');
        element.className = `toast toast-${toast.variant}`;
        element.setAttribute('role', 'status');
        element.dataset.testid = 'toast';
        element.textContent = toast.message;
        return element;
      }),
    );
  });
}

const state = readState();
initErrorReporting();
initChunkReload();
if (state) initStores(state);
initBurger();
initLanguageSwitch(state?.locale ?? 'ru');
initThemeSwitch();
initTimeZone();
initAccountId();
initLogout();
initLiveHeader();
initChatBadges();
initStatusEvents();
initUnreadPopup();
initToasts();
initNotifications();
initProgressBar();
initPrefetch();
if (state) initInstallable(state.fv, isLocale(state.locale) ? state.locale : 'ru');
initLive(state?.user.is_authenticated ? (state.user.account_id ?? null) : null, isLocale(state?.locale) ? state.locale : 'ru');
