import type { AstroGlobal } from 'astro';
import { OPS_COOKIE } from '@obmen/shared';

export const OPS_LOGIN_PATH = '/ops/login';

/**
 * A back-office page without the ops cookie has nothing to show: the sign-in instead (a
 * customer's session counts for nothing here). Only pages may redirect, so each calls this.
 */
export function opsSignInRedirect(astro: AstroGlobal): Response | null {
  return astro.cookies.get(OPS_COOKIE)?.value ? null : astro.redirect(OPS_LOGIN_PATH);
}
