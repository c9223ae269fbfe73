import { ZEnvelope, type TEnvelope, type TWallet } from '@obmen/shared/envelope';
import { resolveRedirect } from '@obmen/shared/routes';
import { RELOAD_GUARD_MS } from '@obmen/shared/constants';
import { $user } from '../stores/user.ts';
import { $siteSettings } from '../stores/site.ts';
import { $totalBalance, $wallets } from '../stores/wallets.ts';
import { $unreadMsgs } from '../stores/messages.ts';
import { $notifications } from '../stores/notifications.ts';
import { $frontendVersion, $newFrontendVersion } from '../stores/version.ts';

const SET_PASSWORD_PATH = '/settings/change-password';
const SET_PASSWORD_FLAG = 'obmen.set_password_redirected';
const RELOAD_FLAG = 'obmen.fv_reload_at';

/** Small seams so tests can run this outside a browser. */
export type TBrowser = {
  navigate(url: string): void;
  reload(): void;
  pathname(): string;
  storage: Pick<Storage, 'getItem' | 'setItem'>;
  now(): number;
  /** Has the reader typed or chosen anything on this page since it loaded? */
  editing(): boolean;
};

// Any input on the page (a field typed in, a box ticked) makes a reload a loss for the reader.
let edited = false;
if (typeof document !== 'undefined') document.addEventListener('input', () => (edited = true), { capture: true, once: true });

export const browser: TBrowser = {
  navigate: (url) => window.location.assign(url),
  reload: () => window.location.reload(),
  pathname: () => window.location.pathname,
  get storage() {
    return window.sessionStorage;
  },
  now: () => Date.now(),
  editing: () => edited,
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
    else if (known !== body.fv) {
      // A stale page reloads (spec §4), unless the reader is half-way through a form: then the
      // update banner offers it. The guard stops a loop when the server flips between builds.
      const last = Number(env.storage.getItem(RELOAD_FLAG) ?? 0);
      if (!env.editing() && env.now() - last > RELOAD_GUARD_MS) {
        env.storage.setItem(RELOAD_FLAG, String(env.now()));
        env.reload();
        return true;
      }
      $newFrontendVersion.set(body.fv);
    }
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
