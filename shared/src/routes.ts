/**
 * The route table of spec §2. Patterns use `:param` for a required and `:param?` for an
 * optional segment. `name` follows the spec's named routes where it gives one.
 */
export type TRoute = { name: string; path: string; auth?: boolean };

/** The offline page: the service worker keeps it, one copy per language (`?lang=`). */
export const OFFLINE_PATH = '/offline';

export const ROUTES: readonly TRoute[] = [
  { name: 'index', path: '/' },
  { name: 'local-healthcheck', path: '/local/healthcheck' },
  { name: 'index-login', path: '/login' },
  { name: 'index-signup', path: '/signup' },
  { name: 'index-forgot-password', path: '/forgot-password' },
  { name: 'index-reset-password', path: '/reset-password' },
  { name: 'index-cards', path: '/cards', auth: true },
  { name: 'index-cards-list', path: '/cards/list', auth: true },
  { name: 'index-cards-my', path: '/cards/my', auth: true },
  { name: 'index-cards-order-confirm', path: '/cards/order/confirm', auth: true },
  { name: 'index-cards-my-card', path: '/cards/my/:card', auth: true },
  { name: 'index-cards-order-id', path: '/cards/order/:id?', auth: true },
  { name: 'index-chat', path: '/chat', auth: true },
  { name: 'index-chat-support', path: '/chat/support', auth: true },
  { name: 'index-chat-private-id', path: '/chat/private/:id?', auth: true },
  { name: 'index-deposit', path: '/deposit', auth: true },
  { name: 'index-deposit-form-id-form', path: '/deposit/form/:id?/:form?', auth: true },
  { name: 'index-exchanges', path: '/exchanges' },
  { name: 'index-exchange-all', path: '/exchange/all', auth: true },
  { name: 'index-exchange-all-currency', path: '/exchange/all/:currency', auth: true },
  { name: 'index-exchange-src-dst', path: '/exchange/:src?/:dst?' },
  { name: 'index-history', path: '/history', auth: true },
  { name: 'index-history-deposit', path: '/history/deposit', auth: true },
  { name: 'index-history-exchange', path: '/history/exchange', auth: true },
  { name: 'index-history-payment', path: '/history/payment', auth: true },
  { name: 'index-history-referral', path: '/history/referral', auth: true },
  { name: 'index-history-transfer', path: '/history/transfer', auth: true },
  { name: 'index-history-withdraw', path: '/history/withdraw', auth: true },
  { name: 'index-purchase', path: '/purchase', auth: true },
  { name: 'index-purchase-form-id-form', path: '/purchase/form/:id?/:form?', auth: true },
  { name: 'index-referral', path: '/referral', auth: true },
  { name: 'index-settings', path: '/settings', auth: true },
  { name: 'index-settings-bind-email', path: '/settings/bind-email', auth: true },
  { name: 'index-settings-privacy', path: '/settings/privacy', auth: true },
  { name: 'index-settings-api', path: '/settings/api', auth: true },
  { name: 'index-settings-sign-in-report', path: '/settings/sign-in-report' },
  { name: 'index-settings-change-password', path: '/settings/change-password', auth: true },
  { name: 'index-settings-drivers_license', path: '/settings/drivers_license', auth: true },
  { name: 'index-settings-id_card', path: '/settings/id_card', auth: true },
  { name: 'index-settings-mail', path: '/settings/mail', auth: true },
  { name: 'index-settings-passport', path: '/settings/passport', auth: true },
  { name: 'index-settings-personal', path: '/settings/personal', auth: true },
  { name: 'index-settings-verification', path: '/settings/verification', auth: true },
  { name: 'index-settings-verification_success', path: '/settings/verification_success', auth: true },
  { name: 'index-support', path: '/support', auth: true },
  { name: 'index-transfer', path: '/transfer', auth: true },
  // Beyond the spec: where an optional mail's unsubscribe link lands (no sign-in).
  { name: 'index-unsubscribe', path: '/unsubscribe' },
  // Beyond the spec: what the service worker shows when a page cannot be reached (no sign-in).
  { name: 'index-offline', path: '/offline' },
  { name: 'index-withdraw', path: '/withdraw', auth: true },
  { name: 'index-withdraw-book', path: '/withdraw/book', auth: true },
  { name: 'index-withdraw-form-id-form', path: '/withdraw/form/:id?/:form?', auth: true },
  { name: 'index-article-name', path: '/article/:name?' },
];

function toRegExp(path: string): RegExp {
  const source = path
    .split('/')
    .filter(Boolean)
    .map((segment) => {
      if (!segment.startsWith(':')) return '/' + segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      return segment.endsWith('?') ? '(?:/[^/]+)?' : '/[^/]+';
    })
    .join('');
  return new RegExp('^' + (source || '/') + '/?$');
}

const COMPILED = ROUTES.map((route) => ({ route, pattern: toRegExp(route.path) }));

export function matchRoute(pathname: string): TRoute | undefined {
  return COMPILED.find(({ pattern }) => pattern.test(pathname))?.route;
}

/**
 * Same-site relative paths only: the defence against open redirects. Browsers drop tabs and
 * newlines inside URLs and treat a backslash like "/", so "/\t/evil.com" would leave the site: any
 * control character or backslash is refused, then the resolved origin must stay ours.
 */
export function isSafeRedirect(url: string): boolean {
  if (!url.startsWith('/') || /[\u0000-\u001f\u007f\\]/.test(url)) return false;
  const base = 'https://obmen.invalid';
  try {
    return new URL(url, base).origin === base;
  } catch {
    return false;
  }
}

/** Spec §4: a redirect to "/" goes to /exchanges. */
export function resolveRedirect(url: string): string | null {
  if (!isSafeRedirect(url)) return null;
  return url === '/' ? '/exchanges' : url;
}
