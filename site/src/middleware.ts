import { STATUS_CODES } from 'node:http';
import { defineMiddleware } from 'astro:middleware';
import { DEFAULT_TIME_ZONE, TIME_ZONE_COOKIE, validTimeZone } from '@obmen/shared/format';
import { THEME_COOKIE, themeOf } from '@obmen/shared/theme';
import { OFFLINE_PATH } from '@obmen/shared/routes';
import {
  LOCALE_COOKIE,
  REFERRAL_COOKIE,
  SESSION_CLEARED,
  SESSION_COOKIE,
  SESSION_STATE_HEADER,
  pickLocale,
  readReferralCode,
  referralCookie,
  sessionCookieOfAnswer,
  type TChatListResponse,
  type TMenuResponse,
} from '@obmen/shared';
import { callCore, callCoreWithHeaders } from './lib/core.ts';
import { AnswerMismatchError, CALLS, type TAnswer } from '@obmen/shared/calls';
import { getT } from './lib/i18n.ts';
import { fillDevServerLocals } from './lib/dev-locals.ts';

const MAINTENANCE_PATH = '/maintenance';

type TCheck = TAnswer<(typeof CALLS)['GET /api/auth/check']>;

/** A contract drift is a bug to see, not a reason to answer as if the core were down or the call optional. */
function rethrowMismatch(err: unknown): void {
  if (err instanceof AnswerMismatchError) throw err;
}

/**
 * The back office's pages (/ops, /ops/login, /ops/enrol) render as for a visitor without a
 * session: a customer's session is never used, renewed or cleared there; the operator's own
 * cookie goes to /api/ops only (the BFF's proxy).
 */
function isOpsPage(pathname: string): boolean {
  return pathname === '/ops' || pathname.startsWith('/ops/');
}

/**
 * The offline page is fetched by the service worker for its cache, in each language (`?lang=`),
 * and shown to whoever is offline later: it never carries anyone's session.
 */
function withoutSession(pathname: string): boolean {
  return isOpsPage(pathname) || pathname === OFFLINE_PATH;
}

/**
 * A page that sets `Astro.response.status` keeps the default status text "OK" ("HTTP/1.1 404
 * OK"): the status line gets the text of its code.
 */
function withStatusText(response: Response): Response {
  if (response.status === 200 || response.statusText !== 'OK') return response;
  return new Response(response.body, { status: response.status, statusText: STATUS_CODES[response.status] ?? '', headers: response.headers });
}

/** Adds a Set-Cookie to the page's answer (a redirect's headers may be immutable: copy it then). */
function withSetCookie(response: Response, cookie: string): Response {
  try {
    response.headers.append('set-cookie', cookie);
    return response;
  } catch {
    const copy = new Response(response.body, response);
    copy.headers.append('set-cookie', cookie);
    return copy;
  }
}

/**
 * Any landing page with `?ref=CODE`: the code goes into a first-party cookie for 30
 * days, which the BFF forwards to the core on sign-up calls. First touch wins: a browser that
 * holds a code keeps it; a signed-in visitor has signed up already.
 */
function referralToRemember(url: URL, cookie: string | undefined, signedIn: boolean): string | null {
  if (signedIn || readReferralCode(cookie)) return null;
  return readReferralCode(url.searchParams.get('ref'));
}

/** Everything the root layout needs, fetched once per page from the core, in parallel. */
export const onRequest = defineMiddleware(async (context, next) => {
  const locals = context.locals;
  // A rewrite (to the maintenance page) runs the middleware again: the core was asked already,
  // and asking a failed core again would double the visitor's wait.
  if (locals.layoutLoaded) return next();
  locals.layoutLoaded = true;
  // Rendered by the Astro dev server (`pnpm dev`), not inside the BFF.
  if (locals.core === undefined) fillDevServerLocals(locals, context.request);
  locals.timeZone = validTimeZone(context.cookies.get(TIME_ZONE_COOKIE)?.value) ?? DEFAULT_TIME_ZONE;
  locals.theme = themeOf(context.cookies.get(THEME_COOKIE)?.value);
  const offline = context.url.pathname === OFFLINE_PATH;
  const cookieLocale = (offline ? context.url.searchParams.get('lang') : null) ?? context.cookies.get(LOCALE_COOKIE)?.value;
  const token = withoutSession(context.url.pathname) ? undefined : context.cookies.get(SESSION_COOKIE)?.value;
  let locale = pickLocale(cookieLocale);
  const call = { locale, token };
  let check: TCheck;
  let menu: TMenuResponse;
  let checkHeaders: Record<string, string | string[] | undefined>;
  let chats: TChatListResponse | null;
  try {
    [{ body: check, headers: checkHeaders }, menu, chats] = await Promise.all([
      callCoreWithHeaders(locals, CALLS['GET /api/auth/check'], call),
      callCore(locals, CALLS['GET /api/content/menu'], call),
      // The chat sidebar (account pages, burger menu): only a visitor with a session has chats.
      token
        ? callCore(locals, CALLS['GET /api/chat/list'], call).catch((err: unknown) => {
            rethrowMismatch(err);
            return null;
          })
        : Promise.resolve(null),
    ]);
  } catch (err) {
    rethrowMismatch(err);
    // The core is down or too slow: one honest, localized page (503), not a stack trace.
    locals.log.error({ path: context.url.pathname, err: String(err) }, 'core unavailable for page');
    locals.locale = locale;
    locals.t = getT(locale);
    locals.unavailable = true;
    return withStatusText(await (context.url.pathname === MAINTENANCE_PATH ? next() : context.rewrite(MAINTENANCE_PATH)));
  }
  // Pages talk to the core directly, so they do what the BFF's proxy does for /api (a page is
  // often the first request of the day); spec §4: an unauthenticated answer clears the cookie too.
  const setCookie = sessionCookieOfAnswer(checkHeaders, {
    sentCookie: token !== undefined,
    dead: checkHeaders[SESSION_STATE_HEADER] === SESSION_CLEARED || !check.user.is_authenticated,
    secure: locals.https,
  });
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
  if (chats && check.user.is_authenticated) locals.chats = chats.chats;
  if (check.notifications) locals.notifications = check.notifications;
  if (check.wallets) locals.wallets = check.wallets;
  const blocked = check.site_settings.site_blocked && context.url.pathname !== MAINTENANCE_PATH;
  const response = withStatusText(blocked ? await context.rewrite(MAINTENANCE_PATH) : await next());
  const withSession = setCookie ? withSetCookie(response, setCookie) : response;
  const ref = referralToRemember(context.url, context.cookies.get(REFERRAL_COOKIE)?.value, check.user.is_authenticated);
  return ref ? withSetCookie(withSession, referralCookie(ref, locals.https)) : withSession;
});
