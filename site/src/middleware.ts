import { defineMiddleware } from 'astro:middleware';
import type { APIContext } from 'astro';
import { LOCALE_COOKIE, SESSION_COOKIE, SESSION_TOKEN_HEADER, SESSION_STATE_HEADER, SESSION_CLEARED, SESSION_TTL_S, pickLocale, type TMenuResponse, type TEnvelope, type TSiteSettings, type TUser } from '@obmen/shared';
import { coreGet, coreGetWithHeaders } from './lib/core.ts';
import { getT } from './lib/i18n.ts';
import { siteLog } from './lib/server-log.ts';

const MAINTENANCE_PATH = '/maintenance';

type TCheck = TEnvelope & { user: TUser; site_settings: TSiteSettings };

/**
 * Pages talk to the core directly, so they do what the BFF's proxy does for /api: a renewed
 * session token becomes the cookie again (a page is often the first request of the day).
 */
function applySessionHeaders(context: APIContext, headers: Record<string, string | string[] | undefined>) {
  const renewed = headers[SESSION_TOKEN_HEADER];
  const https = context.url.protocol === 'https:';
  if (typeof renewed === 'string') {
    context.cookies.set(SESSION_COOKIE, renewed, { path: '/', httpOnly: true, sameSite: 'lax', secure: https, maxAge: SESSION_TTL_S });
  } else if (headers[SESSION_STATE_HEADER] === SESSION_CLEARED) {
    context.cookies.delete(SESSION_COOKIE, { path: '/', httpOnly: true, sameSite: 'lax', secure: https });
  }
}

/** Everything the root layout needs, fetched once per page from the core, in parallel. */
export const onRequest = defineMiddleware(async (context, next) => {
  const locals = context.locals;
  locals.fv ??= 'dev';
  locals.log ??= siteLog;
  const cookieLocale = context.cookies.get(LOCALE_COOKIE)?.value;
  const token = context.cookies.get(SESSION_COOKIE)?.value;
  let locale = pickLocale(cookieLocale);
  const call = { locale, token, clientIp: locals.clientIp, requestId: locals.requestId };
  let check: TCheck;
  let menu: TMenuResponse;
  try {
    let checkHeaders;
    [{ body: check, headers: checkHeaders }, menu] = await Promise.all([
      coreGetWithHeaders<TCheck>('/api/auth/check', call),
      coreGet<TMenuResponse>('/api/content/menu', call),
    ]);
    applySessionHeaders(context, checkHeaders);
  } catch (err) {
    // The core is down or too slow: one honest, localized page (503), not a stack trace.
    locals.log.error({ path: context.url.pathname, err: String(err) }, 'core unavailable for page');
    locals.locale = locale;
    locals.t = getT(locale);
    locals.unavailable = true;
    return context.url.pathname === MAINTENANCE_PATH ? next() : context.rewrite(MAINTENANCE_PATH);
  }
  // Spec §4: an unauthenticated answer clears the remember_token cookie.
  if (token && !check.user.is_authenticated) context.cookies.delete(SESSION_COOKIE, { path: '/', httpOnly: true, sameSite: 'lax' });
  // A signed-in user's stored language wins over a missing cookie, never over an explicit choice.
  if (!cookieLocale && check.user.is_authenticated) locale = check.user.locale;
  locals.locale = locale;
  locals.t = getT(locale);
  locals.user = check.user;
  locals.sessionToken = check.user.is_authenticated ? token : undefined;
  locals.siteSettings = check.site_settings;
  locals.menus = menu.menus;
  locals.footerImages = menu.footer_images;
  if (check.total_balance) locals.totalBalance = check.total_balance;
  if (check.unread_msgs) locals.unreadMsgs = check.unread_msgs;
  if (check.notifications) locals.notifications = check.notifications;
  if (Array.isArray(check.wallets)) locals.wallets = check.wallets.filter((wallet) => 'currency' in wallet);
  if (check.site_settings.site_blocked && context.url.pathname !== MAINTENANCE_PATH) return context.rewrite(MAINTENANCE_PATH);
  return next();
});
