import { describe, expect, it } from 'vitest';
import { ROUTES, isSafeRedirect, matchRoute, resolveRedirect } from '../src/index.ts';

/** Every route of spec §2, with concrete paths and the route name each must resolve to. */
const SPEC_PATHS: Array<[path: string, name: string]> = [
  ['/', 'index'],
  ['/local/healthcheck', 'local-healthcheck'],
  ['/login', 'index-login'],
  ['/signup', 'index-signup'],
  ['/forgot-password', 'index-forgot-password'],
  ['/reset-password', 'index-reset-password'],
  ['/cards', 'index-cards'],
  ['/cards/list', 'index-cards-list'],
  ['/cards/my', 'index-cards-my'],
  ['/cards/order/confirm', 'index-cards-order-confirm'],
  ['/cards/my/4111', 'index-cards-my-card'],
  ['/cards/order', 'index-cards-order-id'],
  ['/cards/order/17', 'index-cards-order-id'],
  ['/chat', 'index-chat'],
  ['/chat/support', 'index-chat-support'],
  ['/chat/private', 'index-chat-private-id'],
  ['/chat/private/42', 'index-chat-private-id'],
  ['/deposit', 'index-deposit'],
  ['/deposit/form', 'index-deposit-form-id-form'],
  ['/deposit/form/3', 'index-deposit-form-id-form'],
  ['/deposit/form/3/card', 'index-deposit-form-id-form'],
  ['/exchanges', 'index-exchanges'],
  ['/exchange/all', 'index-exchange-all'],
  ['/exchange/all/BTC', 'index-exchange-all-currency'],
  ['/exchange', 'index-exchange-src-dst'],
  ['/exchange/BTC', 'index-exchange-src-dst'],
  ['/exchange/BTC/USDT', 'index-exchange-src-dst'],
  ['/history', 'index-history'],
  ['/history/deposit', 'index-history-deposit'],
  ['/history/exchange', 'index-history-exchange'],
  ['/history/payment', 'index-history-payment'],
  ['/history/referral', 'index-history-referral'],
  ['/history/transfer', 'index-history-transfer'],
  ['/history/withdraw', 'index-history-withdraw'],
  ['/purchase', 'index-purchase'],
  ['/purchase/form', 'index-purchase-form-id-form'],
  ['/purchase/form/8/sbp', 'index-purchase-form-id-form'],
  ['/referral', 'index-referral'],
  ['/settings', 'index-settings'],
  ['/settings/bind-email', 'index-settings-bind-email'],
  ['/settings/privacy', 'index-settings-privacy'],
  ['/settings/api', 'index-settings-api'],
  ['/settings/sign-in-report', 'index-settings-sign-in-report'],
  ['/settings/change-password', 'index-settings-change-password'],
  ['/settings/drivers_license', 'index-settings-drivers_license'],
  ['/settings/id_card', 'index-settings-id_card'],
  ['/settings/mail', 'index-settings-mail'],
  ['/settings/passport', 'index-settings-passport'],
  ['/settings/personal', 'index-settings-personal'],
  ['/settings/verification', 'index-settings-verification'],
  ['/settings/verification_success', 'index-settings-verification_success'],
  ['/transfer', 'index-transfer'],
  ['/withdraw', 'index-withdraw'],
  ['/withdraw/book', 'index-withdraw-book'],
  ['/withdraw/form', 'index-withdraw-form-id-form'],
  ['/withdraw/form/2/usdt-trc20', 'index-withdraw-form-id-form'],
  ['/article', 'index-article-name'],
  ['/article/terms', 'index-article-name'],
  ['/support', 'index-support'],
  ['/unsubscribe', 'index-unsubscribe'],
  ['/offline', 'index-offline'],
];

describe('matchRoute', () => {
  it.each(SPEC_PATHS)('%s resolves to %s', (path, name) => {
    expect(matchRoute(path)?.name).toBe(name);
  });

  it('accepts a trailing slash', () => {
    expect(matchRoute('/login/')?.name).toBe('index-login');
    expect(matchRoute('/exchange/BTC/USDT/')?.name).toBe('index-exchange-src-dst');
  });

  it('covers the whole route table (every table entry is reached by a spec path)', () => {
    const reached = new Set(SPEC_PATHS.map(([, name]) => name));
    expect(ROUTES.map((route) => route.name).filter((name) => !reached.has(name))).toEqual([]);
  });

  it('has unique route names', () => {
    const names = ROUTES.map((route) => route.name);
    expect(new Set(names).size).toBe(names.length);
  });

  it('keeps the spec named routes', () => {
    const names = new Set(ROUTES.map((route) => route.name));
    for (const name of [
      'index-login',
      'index-signup',
      'index-article-name',
      'index-exchanges',
      'index-exchange-src-dst',
      'index-chat-support',
      'index-support',
    ]) {
      expect(names, name).toContain(name);
    }
  });

  it.each([
    '/no-such-page',
    '/en',
    '/en/login',
    '/ru/exchanges',
    '/login/extra',
    '/cards/unknown',
    '/cards/my/1/2',
    '/chat/private/1/2',
    '/deposit/form/1/2/3',
    '/exchange/a/b/c',
    '/exchange/all/BTC/USDT',
    '/history/unknown',
    '/settings/unknown',
    '/article/a/b',
    '/local',
    '/local/healthcheck/x',
    '/api/health',
    'login',
    '',
  ])('does not match the unknown path %j', (path) => {
    expect(matchRoute(path)).toBeUndefined();
  });
});

const BASE = 'https://obmen.test';
/** What a browser does with the URL: where would it land? */
function landsOnSameOrigin(url: string): boolean {
  return new URL(url, BASE).origin === BASE;
}

describe('isSafeRedirect / resolveRedirect', () => {
  it.each(['/exchanges', '/exchange/BTC/USDT?amount=1', '/settings/change-password', '/article/terms#top', '/'])('allows the same-site path %j', (url) => {
    expect(isSafeRedirect(url)).toBe(true);
    expect(resolveRedirect(url)).toBe(url === '/' ? '/exchanges' : url);
  });

  it('maps "/" to /exchanges (spec §4)', () => {
    expect(resolveRedirect('/')).toBe('/exchanges');
  });

  it.each([
    '//evil.com',
    '//evil.com/exchanges',
    'https://evil.com',
    'http://evil.com/',
    'javascript:alert(1)',
    'evil.com',
    '/\\evil.com',
    '/\\/evil.com',
    '/exchanges\r\nSet-Cookie: a=b',
    '/exchanges\nLocation: //evil.com',
    '/\r/evil.com',
    '',
  ])('refuses %j', (url) => {
    expect(isSafeRedirect(url)).toBe(false);
    expect(resolveRedirect(url)).toBeNull();
  });

  // Browsers drop tabs and newlines inside a URL before parsing it, so "/\t/evil.com" is
  // "//evil.com" to them: every URL the check lets through must stay on our origin.
  it.each(['//evil.com', '/\\evil.com', '/\t/evil.com', '/\t\\evil.com', '/\n/evil.com', '/\r\n/evil.com', '/%2F/evil.com', '/ /evil.com', '/./evil.com'])(
    'anything it allows stays on the same origin: %j',
    (url) => {
      expect(!isSafeRedirect(url) || landsOnSameOrigin(url), `${JSON.stringify(url)} is allowed and leaves the site`).toBe(true);
    },
  );
});
