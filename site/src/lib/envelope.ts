import { ZEnvelope, type TEnvelope, type TWallet } from '@obmen/shared/envelope';
import { resolveRedirect } from '@obmen/shared/routes';
import { $user } from '../stores/user.ts';
import { $siteSettings } from '../stores/site.ts';
import { $totalBalance, $wallets } from '../stores/wallets.ts';
import { $unreadMsgs } from '../stores/messages.ts';
import { $notifications } from '../stores/notifications.ts';
import { $frontendVersion, $newFrontendVersion } from '../stores/version.ts';

const SET_PASSWORD_PATH = '/settings/change-password';
const SET_PASSWORD_FLAG = 'obmen.set_password_redirected';

/** Small seams so tests can run this outside a browser. */
export type TBrowser = {
  navigate(url: string): void;
  pathname(): string;
  storage: Pick<Storage, 'getItem' | 'setItem'>;
};

export const browser: TBrowser = {
  navigate: (url) => window.location.assign(url),
  pathname: () => window.location.pathname,
  get storage() {
    return window.sessionStorage;
  },
};

/** Applies every global key of an /api answer (spec §7) to the stores; returns whether it navigated away. */
export function applyEnvelope(raw: unknown, env: TBrowser = browser): boolean {
  const parsed = ZEnvelope.safeParse(raw);
  if (!parsed.success) return false;
  const body: TEnvelope = parsed.data;
  if (body.site_settings) $siteSettings.set(body.site_settings);
  if (body.user) $user.set(body.user);
  if (body.wallets) $wallets.set(body.wallets.filter((wallet): wallet is TWallet => 'currency' in wallet));
  if (body.total_balance) $totalBalance.set(body.total_balance);
  if (body.unread_msgs) $unreadMsgs.set(body.unread_msgs);
  if (body.notifications && body.notifications.length > 0) $notifications.set(body.notifications);

  if (body.fv) {
    const known = $frontendVersion.get();
    if (!known) $frontendVersion.set(body.fv);
    // A stale page offers to reload (the update banner) rather than reloading under the reader,
    // who may be half-way through a form.
    else if (known !== body.fv) $newFrontendVersion.set(body.fv);
  }

  if (body.status === 'redirect' && body.redirect_url) {
    const target = resolveRedirect(body.redirect_url);
    if (target) {
      env.navigate(target);
      return true;
    }
  }

  const user = $user.get();
  const settings = $siteSettings.get();
  if (user?.is_authenticated && user.need_set_password && settings?.auth_type === 'password') {
    // Spec §4: sent there once, not on every answer.
    if (!env.storage.getItem(SET_PASSWORD_FLAG) && env.pathname() !== SET_PASSWORD_PATH) {
      env.storage.setItem(SET_PASSWORD_FLAG, '1');
      env.navigate(SET_PASSWORD_PATH);
      return true;
    }
  }
  return false;
}
