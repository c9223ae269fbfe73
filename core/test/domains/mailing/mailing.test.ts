import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENGINES, build } from '../../helpers.ts';
import { call } from '../../auth-helpers.ts';
import { createFixtureUser, type TFixtureUser } from '../../fixtures.ts';
import { queueMail } from '../../../src/mail/outbox.ts';
import { mayMail, unsubscribeToken } from '../../../src/mail/preferences.ts';

const PUBLIC_URL = 'https://obmen.test';
const ALL_ON = { news: true, referral: true, chat_digest: true, deposits: true, withdrawals: true, transfers: true, cards: true };

describe.each(ENGINES)('mail preferences and one-click unsubscribe (%s)', (engine) => {
  let ctx: Awaited<ReturnType<typeof build>>;
  let user: TFixtureUser;

  beforeAll(async () => {
    ctx = await build(engine, { PUBLIC_URL });
    user = await createFixtureUser(ctx.db);
  });
  afterAll(() => ctx.close());

  const outbox = async (to: string) =>
    ctx.db.query<{ kind: string; text_body: string; headers: Record<string, string> | null }>(
      'SELECT kind, text_body, headers FROM mail_outbox WHERE lower(to_address) = lower($1) ORDER BY id',
      [to],
    );
  const invite = (to: string) =>
    queueMail(ctx.db, { kind: 'referral_invite', to, locale: 'en', vars: { name: 'Ann', link: `${PUBLIC_URL}/?ref=X` }, publicUrl: PUBLIC_URL });

  it('needs a signed-in user', async () => {
    expect((await call(ctx.app, '/api/config/mailing')).statusCode).toBe(401);
    expect((await call(ctx.app, '/api/config/mailing', { payload: { news: false } })).statusCode).toBe(401);
  });

  it('answers every optional mail on by default, and keeps what is changed (JSON and form data)', async () => {
    const first = await call(ctx.app, '/api/config/mailing', { token: user.token });
    expect(first.json()).toEqual({ status: 'ok', mailing: { ...ALL_ON }, anti_phishing_code: null });
    const json = await call(ctx.app, '/api/config/mailing', { token: user.token, locale: 'en', payload: { news: false } });
    expect(json.json()).toMatchObject({ status: 'ok', message: 'Mail preferences saved', mailing: { ...ALL_ON, news: false } });
    const form = await call(ctx.app, '/api/config/mailing', {
      token: user.token,
      payload: 'chat_digest=off&news=on',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(form.json().mailing).toEqual({ ...ALL_ON, chat_digest: false });
    expect((await call(ctx.app, '/api/config/mailing', { token: user.token })).json().mailing).toEqual({ ...ALL_ON, chat_digest: false });
  });

  it('refuses a value that is not a switch, changing nothing', async () => {
    const res = await call(ctx.app, '/api/config/mailing', { token: user.token, payload: { news: 'maybe' } });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ code: 'validation', fields: { news: expect.any(String) } });
    expect((await call(ctx.app, '/api/config/mailing', { token: user.token })).json().mailing.news).toBe(true);
  });

  it('puts the signed link and the one-click headers on optional mails; security mails have neither', async () => {
    const to = 'nobody-yet@example.com';
    expect(await invite(to)).toBe(true);
    const [mail] = await outbox(to);
    expect(mail!.text_body).toMatch(new RegExp(`${PUBLIC_URL}/unsubscribe\\?t=[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]{24}`));
    expect(mail!.headers).toEqual({
      'List-Unsubscribe': expect.stringMatching(new RegExp(`^<${PUBLIC_URL}/api/mail/unsubscribe\\?t=.+>$`)),
      'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click',
    });
    await queueMail(ctx.db, { kind: 'password_changed', to, locale: 'en', vars: { account_id: 1, reset_link: 'x' } });
    const [, security] = await outbox(to);
    expect(security!.headers).toBeNull();
    expect(security!.text_body).not.toContain('/unsubscribe');
  });

  it('an account that switched a topic off gets none of its mails, but every security mail', async () => {
    const other = await createFixtureUser(ctx.db);
    await call(ctx.app, '/api/config/mailing', { token: other.token, payload: { referral: false } });
    expect(
      await queueMail(ctx.db, {
        kind: 'referral_paid',
        to: other.email,
        locale: 'en',
        vars: { amount: '1', currency: 'USDT', link: 'x' },
        publicUrl: PUBLIC_URL,
      }),
    ).toBe(false);
    expect(await queueMail(ctx.db, { kind: 'password_changed', to: other.email, locale: 'en', vars: { account_id: 1, reset_link: 'x' } })).toBe(true);
    expect((await outbox(other.email)).map((mail) => mail.kind)).toEqual(['password_changed']);
  });

  it('the link names the address (masked) and the topic; opening it changes nothing; its button unsubscribes', async () => {
    const to = 'Someone.Else@Example.com';
    const token = await unsubscribeToken(ctx.db, to, 'referral');
    const look = await call(ctx.app, `/api/mail/unsubscribe?t=${token}`);
    expect(look.json()).toEqual({ status: 'ok', topic: 'referral', address: 's***@example.com', unsubscribed: false });
    expect(await mayMail(ctx.db, to, 'referral')).toBe(true);
    const done = await call(ctx.app, `/api/mail/unsubscribe?t=${token}`, { method: 'POST', locale: 'en' });
    expect(done.json()).toMatchObject({ unsubscribed: true, message: expect.stringContaining('not send') });
    expect(await mayMail(ctx.db, 'someone.else@example.com', 'referral')).toBe(false);
    expect(await mayMail(ctx.db, to, 'news')).toBe(true);
    expect(await invite(to)).toBe(false);
    expect((await call(ctx.app, `/api/mail/unsubscribe?t=${token}`)).json().unsubscribed).toBe(true);
  });

  it('a mail client one-click POST (RFC 8058) sets the account switch, no sign-in needed', async () => {
    const other = await createFixtureUser(ctx.db);
    const token = await unsubscribeToken(ctx.db, other.email, 'news');
    const res = await call(ctx.app, `/api/mail/unsubscribe?t=${token}`, {
      method: 'POST',
      payload: 'List-Unsubscribe=One-Click',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(res.statusCode).toBe(200);
    expect((await call(ctx.app, '/api/config/mailing', { token: other.token })).json().mailing).toEqual({ ...ALL_ON, news: false });
    // The account's switch, not the address list: switching it on again in settings works.
    await call(ctx.app, '/api/config/mailing', { token: other.token, payload: { news: true } });
    expect(await mayMail(ctx.db, other.email, 'news')).toBe(true);
  });

  it('refuses a forged, altered or malformed link, changing nothing', async () => {
    const token = await unsubscribeToken(ctx.db, 'victim@example.com', 'referral');
    const [payload, signature] = token.split('.') as [string, string];
    const otherPayload = Buffer.from('referral:someone@example.com').toString('base64url');
    const flipped = `${signature.slice(0, -1)}${signature.endsWith('A') ? 'B' : 'A'}`;
    for (const bad of [`${otherPayload}.${signature}`, `${payload}.${flipped}`, 'nonsense', `${payload}.`]) {
      const res = await call(ctx.app, `/api/mail/unsubscribe?t=${encodeURIComponent(bad)}`, { method: 'POST', locale: 'en' });
      expect(res.statusCode, bad).toBe(400);
      expect(res.json().code).toBe('unsubscribe_link_invalid');
    }
    expect(await mayMail(ctx.db, 'victim@example.com', 'referral')).toBe(true);
    expect(await mayMail(ctx.db, 'someone@example.com', 'referral')).toBe(true);
  });
});
