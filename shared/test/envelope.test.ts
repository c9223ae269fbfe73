import { describe, expect, it } from 'vitest';
import { ZApiError, ZEnvelope, ZMenuResponse, ZNotification } from '../src/index.ts';

const notification = {
  notification_id: 7,
  display: 'modal',
  type: 'success',
  title: 'Готово',
  text: '<b>Обмен</b> выполнен',
  buttons: [{ url: '/history/exchange', title: 'История' }],
  closable: true,
};

const fullEnvelope = {
  user: { is_authenticated: true, account_id: 100_123, need_set_password: false, locale: 'ru', email: 'a@b.test' },
  site_settings: { logo_url: '/logo.svg', auth_type: 'password', site_blocked: false },
  wallets: [{ number: 'W-1', currency: 'BTC', logo: '/btc.svg', balance: '0.00100000', last_exchange: true }],
  total_balance: { currency: 'USD', amount: '12.50', logo: '/usd.svg' },
  unread_msgs: { private: 1, support: 0 },
  notifications: [notification],
  fv: 'abc123',
  status: 'redirect',
  redirect_url: '/exchanges',
  rates: [{ pair: 'BTC/USDT' }],
};

describe('ZEnvelope', () => {
  it('accepts a full envelope and keeps the call-specific keys', () => {
    const parsed = ZEnvelope.parse(fullEnvelope);
    expect(parsed).toEqual(fullEnvelope);
    expect((parsed as Record<string, unknown>).rates).toEqual([{ pair: 'BTC/USDT' }]);
  });

  it('accepts an empty body and a body with only fv', () => {
    expect(ZEnvelope.safeParse({}).success).toBe(true);
    expect(ZEnvelope.safeParse({ fv: 'x' }).success).toBe(true);
  });

  it('accepts wallets as a list of name/value pairs', () => {
    expect(ZEnvelope.safeParse({ wallets: [{ name: 'BTC', value: '1' }] }).success).toBe(true);
  });

  it('accepts an anonymous user', () => {
    const user = { is_authenticated: false, account_id: null, need_set_password: false, locale: 'en' };
    expect(ZEnvelope.safeParse({ user }).success).toBe(true);
  });

  it.each(['warning', 'info', 'error', ''])('rejects the notification type %j', (type) => {
    expect(ZNotification.safeParse({ ...notification, type }).success).toBe(false);
    expect(ZEnvelope.safeParse({ notifications: [{ ...notification, type }] }).success).toBe(false);
  });

  it('accepts each notification type and display the spec names', () => {
    for (const type of ['danger', 'success', 'secondary']) {
      for (const display of ['inner', 'modal']) {
        expect(ZNotification.safeParse({ ...notification, type, display }).success, `${type}/${display}`).toBe(true);
      }
    }
  });

  it('rejects a bad notification display and a button without url', () => {
    expect(ZNotification.safeParse({ ...notification, display: 'popup' }).success).toBe(false);
    expect(ZNotification.safeParse({ ...notification, buttons: [{ title: 'x' }] }).success).toBe(false);
  });

  it('rejects a bad locale, auth type, unread counter and wallet list', () => {
    expect(ZEnvelope.safeParse({ user: { ...fullEnvelope.user, locale: 'de' } }).success).toBe(false);
    expect(ZEnvelope.safeParse({ site_settings: { ...fullEnvelope.site_settings, auth_type: 'oauth' } }).success).toBe(false);
    expect(ZEnvelope.safeParse({ unread_msgs: { private: -1, support: 0 } }).success).toBe(false);
    expect(ZEnvelope.safeParse({ wallets: [{ currency: 'BTC' }] }).success).toBe(false);
    expect(ZEnvelope.safeParse({ fv: 1 }).success).toBe(false);
  });
});

describe('ZApiError', () => {
  it('accepts the error shape with optional field errors', () => {
    expect(ZApiError.safeParse({ status: 'error', code: 'validation', message: 'Проверьте', fields: { email: 'bad' } }).success).toBe(true);
  });

  it('rejects another status or a missing message', () => {
    expect(ZApiError.safeParse({ status: 'ok', code: 'x', message: 'y' }).success).toBe(false);
    expect(ZApiError.safeParse({ status: 'error', code: 'x' }).success).toBe(false);
  });
});

describe('ZMenuResponse', () => {
  it('accepts menus grouped by kind and footer images', () => {
    const item = { url: 'terms', title: 'Terms', order: 1 };
    const body = {
      menus: { header_menu: [item], footer_menu: [item], main_menu: [{ ...item, icon_url: '/i.svg' }] },
      footer_images: [{ name: 'bank', ext: 'svg', src: '/image/footer_logos/bank.svg' }],
    };
    expect(ZMenuResponse.safeParse(body).success).toBe(true);
    expect(ZMenuResponse.safeParse({ ...body, footer_images: [{ name: 'bank' }] }).success).toBe(false);
  });
});
