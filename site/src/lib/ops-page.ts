import type { AstroGlobal } from 'astro';
import { OPS_COOKIE, OPS_LOGIN_PATH, type TLocale } from '@obmen/shared';
import type { TTranslate } from './i18n.ts';
import { OPS_MESSAGE_PREFIXES, pickMessages } from './messages.ts';

/**
 * A back-office page without the ops cookie has nothing to show: the sign-in instead (a
 * customer's session counts for nothing here). Only pages may redirect, so each calls this.
 */
export function opsSignInRedirect(astro: Pick<AstroGlobal, 'cookies' | 'redirect'>): Response | null {
  return astro.cookies.get(OPS_COOKIE)?.value ? null : astro.redirect(OPS_LOGIN_PATH);
}

/**
 * What a signed-in back-office page hands its island: the sign-in redirect when there is no ops
 * cookie (`away`, to return), else the locale, time zone and the ops messages.
 */
export function opsPage(
  astro: Pick<AstroGlobal, 'cookies' | 'redirect'> & { locals: { t: TTranslate; locale: TLocale; timeZone: string } },
  prefixes: readonly string[] = OPS_MESSAGE_PREFIXES,
) {
  const { t, locale, timeZone } = astro.locals;
  return { away: opsSignInRedirect(astro), t, island: { locale, timeZone, messages: pickMessages(locale, prefixes) } };
}
