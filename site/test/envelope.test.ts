import { beforeEach, describe, expect, it } from 'vitest';
import { applyEnvelope, type TBrowser } from '../src/lib/envelope.ts';
import { $user } from '../src/stores/user.ts';
import { $siteSettings } from '../src/stores/site.ts';
import { $totalBalance, $wallets } from '../src/stores/wallets.ts';
import { $unreadMsgs } from '../src/stores/messages.ts';
import { $notifications } from '../src/stores/notifications.ts';
import { $frontendVersion, $newFrontendVersion } from '../src/stores/version.ts';

function fakeBrowser(pathname = '/exchanges', state = { editing: false, now: 1_000_000 }) {
  const store = new Map<string, string>();
  const calls = { navigated: [] as string[], reloads: 0 };
  const env: TBrowser = {
    navigate: (url) => void calls.navigated.push(url),
    reload: () => void calls.reloads++,
    pathname: () => pathname,
    storage: { getItem: (key) => store.get(key) ?? null, setItem: (key, value) => void store.set(key, value) },
    now: () => state.now,
    editing: () => state.editing,
  };
  return { env, calls, state };
}

const signedIn = { is_authenticated: true, account_id: 1234567, need_set_password: false, locale: 'ru' as const };
const settings = { logo_url: '/image/logo.svg', auth_type: 'password' as const, site_blocked: false };

describe('applyEnvelope', () => {
  beforeEach(() => {
    $user.set(null);
    $siteSettings.set(null);
    $wallets.set([]);
    $totalBalance.set(null);
    $unreadMsgs.set({ private: 0, support: 0 });
    $notifications.set([]);
    $frontendVersion.set('');
    $newFrontendVersion.set('');
  });

  it('applies every global key to its store', () => {
    const { env } = fakeBrowser();
    applyEnvelope(
      {
        user: signedIn,
        site_settings: settings,
        wallets: [{ number: 'W1', currency: 'BTC', logo: '/b.svg', balance: '0.5', last_exchange: true }],
        total_balance: { currency: 'USD', amount: '100.00', logo: '/u.svg' },
        unread_msgs: { private: 2, support: 1 },
        notifications: [{ notification_id: 1, display: 'inner', type: 'success', title: 'Hi', text: '<b>x</b>', buttons: [], closable: true }],
      },
      env,
    );
    expect($user.get()).toEqual(signedIn);
    expect($siteSettings.get()).toEqual(settings);
    expect($wallets.get()[0]?.currency).toBe('BTC');
    expect($totalBalance.get()?.amount).toBe('100.00');
    expect($unreadMsgs.get()).toEqual({ private: 2, support: 1 });
    expect($notifications.get()).toHaveLength(1);
  });

  it('keeps notifications when an answer carries an empty list', () => {
    const { env } = fakeBrowser();
    const note = { notification_id: 1, display: 'modal', type: 'danger', title: 'T', text: 't', buttons: [], closable: false };
    applyEnvelope({ notifications: [note] }, env);
    applyEnvelope({ notifications: [] }, env);
    expect($notifications.get()).toHaveLength(1);
  });

  it('signs the user out when an answer says so', () => {
    const { env } = fakeBrowser();
    applyEnvelope({ user: signedIn }, env);
    applyEnvelope({ user: { is_authenticated: false, account_id: null, need_set_password: false, locale: 'ru' } }, env);
    expect($user.get()?.is_authenticated).toBe(false);
  });

  it('follows a same-site redirect and sends "/" to /exchanges', () => {
    const { env, calls } = fakeBrowser();
    expect(applyEnvelope({ status: 'redirect', redirect_url: '/' }, env)).toBe(true);
    applyEnvelope({ status: 'redirect', redirect_url: '/history/exchange' }, env);
    expect(calls.navigated).toEqual(['/exchanges', '/history/exchange']);
  });

  it('never follows an off-site redirect', () => {
    const { env, calls } = fakeBrowser();
    for (const url of ['https://evil.example/', '//evil.example', '/\\evil.example', 'javascript:alert(1)']) {
      expect(applyEnvelope({ status: 'redirect', redirect_url: url }, env)).toBe(false);
    }
    expect(calls.navigated).toEqual([]);
  });

  it('reloads on a newer front-end version, at most once a minute; while the reader types, the banner offers it', () => {
    const { env, calls, state } = fakeBrowser();
    expect(applyEnvelope({ fv: 'build-1' }, env)).toBe(false);
    expect(applyEnvelope({ fv: 'build-1' }, env)).toBe(false);
    expect($frontendVersion.get()).toBe('build-1');
    expect(calls.reloads).toBe(0);
    expect(applyEnvelope({ fv: 'build-2' }, env)).toBe(true);
    expect(calls.reloads).toBe(1);
    expect($newFrontendVersion.get()).toBe('');
    // The server flips between builds: no reload loop within the guard; the banner instead.
    state.now += 30_000;
    expect(applyEnvelope({ fv: 'build-2' }, env)).toBe(false);
    expect(calls.reloads).toBe(1);
    expect($newFrontendVersion.get()).toBe('build-2');
    // A form being filled in is never reloaded away.
    $newFrontendVersion.set('');
    state.now += 120_000;
    state.editing = true;
    expect(applyEnvelope({ fv: 'build-3' }, env)).toBe(false);
    expect(calls.reloads).toBe(1);
    expect($newFrontendVersion.get()).toBe('build-3');
    expect(calls.navigated).toEqual([]);
  });

  it('sends a password-less user to set a password once, only when auth_type is password', () => {
    const { env, calls } = fakeBrowser('/exchanges');
    applyEnvelope({ site_settings: { ...settings, auth_type: 'email' }, user: { ...signedIn, need_set_password: true } }, env);
    expect(calls.navigated).toEqual([]);
    applyEnvelope({ site_settings: settings, user: { ...signedIn, need_set_password: true } }, env);
    applyEnvelope({ user: { ...signedIn, need_set_password: true } }, env);
    expect(calls.navigated).toEqual(['/settings/change-password']);
  });

  it('ignores a body that is not an envelope', () => {
    const { env } = fakeBrowser();
    expect(applyEnvelope({ user: { is_authenticated: 'yes' } }, env)).toBe(false);
    expect($user.get()).toBeNull();
  });
});
