import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { build, ENGINES } from '../helpers.ts';
import { call } from '../auth-helpers.ts';
import { createFixtureUser, fund, type TFixtureUser } from '../fixtures.ts';
import { writeMoneyMails } from '../../src/mail/money.ts';
import { queueMail } from '../../src/mail/outbox.ts';
import { loadPaymentProviders } from '../../src/providers/index.ts';
import { bankReceived } from '../../src/providers/sandbox/payments.ts';
import { rejectWithdrawal } from '../../src/domains/payments/withdrawal-states.ts';
import { newTotpSecret, totpCode } from '../../src/domains/security/totp.ts';

const PUBLIC_URL = 'https://obmen.test';
const NOW = new Date('2026-11-27T10:00:00Z');

describe.each(ENGINES)('money mails and the anti-phishing code (%s)', (engine) => {
  let ctx: Awaited<ReturnType<typeof build>>;
  let ann: TFixtureUser;
  let bob: TFixtureUser;
  let keys = 0;
  const providers = loadPaymentProviders({ NODE_ENV: 'test' });

  beforeAll(async () => {
    ctx = await build(engine, { PUBLIC_URL }, { now: () => NOW });
    ann = await createFixtureUser(ctx.db, { firstName: 'Anna', lastName: 'Ivanova' });
    bob = await createFixtureUser(ctx.db);
    await ctx.db.query(`UPDATE users SET verification_level = 1, locale = 'ru' WHERE id = $1`, [bob.id]);
    await ctx.db.query('UPDATE users SET verification_level = 1 WHERE id = $1', [ann.id]);
    await fund(ctx.db, ann.id, 'USDT', 100_000_000n);
    await fund(ctx.db, bob.id, 'RUB', 10_000_000n);
    // Every withdrawal waits for an operator here, so a test can reject it.
    await ctx.db.query('DELETE FROM withdraw_auto_approval');
  });
  afterAll(() => ctx.close());

  const mails = (to: string, kind: string) =>
    ctx.db.query<{ subject: string; text_body: string; html_body: string; locale: string }>(
      'SELECT subject, text_body, html_body, locale FROM mail_outbox WHERE lower(to_address) = lower($1) AND kind = $2 ORDER BY id',
      [to, kind],
    );
  const owed = async () => (await ctx.db.query<{ n: number }>('SELECT count(*)::int AS n FROM money_mail_queue'))[0]!.n;
  const transfer = (from: TFixtureUser, to: TFixtureUser, amount: string) =>
    call(ctx.app, '/api/transfer', {
      token: from.token,
      locale: 'en',
      payload: { account_id: String(to.accountId), currency: 'USDT', amount },
      headers: { 'idempotency-key': `money-mail-${engine}-${++keys}` },
    });
  const antiPhishing = (user: TFixtureUser, body: object, locale: 'ru' | 'en' = 'en') =>
    call(ctx.app, '/api/config/anti_phishing', { token: user.token, locale, payload: body });

  it('a transfer owes its recipient one mail, written in their language with the sender masked, once, by whichever writer takes it', async () => {
    expect((await transfer(ann, bob, '12.5')).statusCode).toBe(200);
    expect(await owed()).toBe(1);
    // Two writers at once (two cores' jobs): the row goes to one of them.
    const written = await Promise.all([writeMoneyMails(ctx.db, PUBLIC_URL), writeMoneyMails(ctx.db, PUBLIC_URL)]);
    expect(written.reduce((a, b) => a + b, 0)).toBe(1);
    expect(await owed()).toBe(0);
    const [mail, more] = await mails(bob.email, 'transfer_received');
    expect(more).toBeUndefined();
    expect(mail).toMatchObject({ locale: 'ru', subject: 'Вам перевод: 12,50\u00a0USDT' });
    expect(mail!.text_body).toContain(`Вы получили 12,50\u00a0USDT от пользователя Anna I. (${ann.accountId}).`);
    expect(mail!.text_body).toContain(`${PUBLIC_URL}/history/transfer`);
    // An optional mail: it carries its unsubscribe link; the sender is told nothing.
    expect(mail!.text_body).toContain(`${PUBLIC_URL}/unsubscribe?t=`);
    expect(await mails(ann.email, 'transfer_received')).toEqual([]);
  });

  it('a kind switched off is owed but not written; a withdrawal requested is written whatever the switches say', async () => {
    const off = await call(ctx.app, '/api/config/mailing', { token: bob.token, payload: { transfers: false, withdrawals: false } });
    expect(off.json().mailing).toMatchObject({ transfers: false, withdrawals: false, deposits: true });
    expect((await transfer(ann, bob, '1')).statusCode).toBe(200);
    expect(await writeMoneyMails(ctx.db, PUBLIC_URL)).toBe(1);
    expect(await mails(bob.email, 'transfer_received')).toHaveLength(1);

    const asked = await call(ctx.app, '/api/withdraw/form/sandbox-card', {
      token: bob.token,
      locale: 'en',
      payload: { currency: 'RUB', amount: '1000', card_number: '4111 1111 1111 1111', card_holder: 'IVAN PETROV' },
      headers: { 'idempotency-key': `money-mail-${engine}-${++keys}` },
    });
    expect(asked.statusCode, asked.body).toBe(200);
    const id = asked.json().withdrawal.id;
    expect(asked.json().withdrawal.state).toBe('requested');
    expect(await rejectWithdrawal(ctx.db, id, 'the card is not the holder', 'ops:test', NOW)).toMatchObject({ state: 'rejected' });
    expect(await owed()).toBe(2);
    expect(await writeMoneyMails(ctx.db, PUBLIC_URL)).toBe(2);
    const [requested] = await mails(bob.email, 'withdrawal_requested');
    expect(requested!.subject).toBe('Заявка на вывод: 1000,00\u00a0RUB');
    expect(requested!.text_body).not.toContain('/unsubscribe?t=');
    // Failed or rejected: owed, but this kind is switched off.
    expect(await mails(bob.email, 'withdrawal_failed')).toEqual([]);
  });

  it('a deposit credited is written with what reached the wallet and the fee', async () => {
    const opened = await call(ctx.app, '/api/deposit/integration_json', {
      token: bob.token,
      locale: 'en',
      payload: { ps: 'sandbox-bank', currency: 'RUB', amount: '5000' },
    });
    expect(opened.statusCode, opened.body).toBe(200);
    const { payment } = opened.json();
    const paid = await bankReceived(ctx.db, providers, { reference: payment.bank.reference, amount: '5000', currency: 'RUB', payer: 'Bob', now: NOW });
    expect(paid.result).toBe('credited');
    await writeMoneyMails(ctx.db, PUBLIC_URL);
    const [mail] = await mails(bob.email, 'deposit_credited');
    expect(mail!.subject).toContain(payment.receive.replace('.', ','));
    expect(mail!.text_body).toContain(`${PUBLIC_URL}/history/deposit`);
  });

  it('the anti-phishing code is set, refused when malformed, shown first in every later mail, and told by a security mail', async () => {
    const bad = await antiPhishing(ann, { anti_phishing_code: 'ab' });
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toMatchObject({ code: 'validation', fields: { anti_phishing_code: expect.stringContaining('4 to 32') } });
    const ru = await antiPhishing(ann, { anti_phishing_code: '<script>' }, 'ru');
    expect(ru.json().fields.anti_phishing_code).toContain('От 4 до 32');
    expect((await call(ctx.app, '/api/config/mailing', { token: ann.token })).json().anti_phishing_code).toBeNull();

    const set = await antiPhishing(ann, { anti_phishing_code: '  синий кит 42 ' });
    expect(set.statusCode, set.body).toBe(200);
    expect(set.json()).toEqual({ status: 'ok', message: 'Anti-phishing code saved', anti_phishing_code: 'синий кит 42' });
    expect((await call(ctx.app, '/api/config/mailing', { token: ann.token })).json().anti_phishing_code).toBe('синий кит 42');
    const [told] = await mails(ann.email, 'anti_phishing_changed');
    expect(told!.text_body.split('\n')[0]).toBe('Your anti-phishing code: “синий кит 42”. A mail without it, or with another code, is not from us.');
    expect(told!.html_body).toContain('<p>Your anti-phishing code: “синий кит 42”.');

    // Any mail to the address after: a security mail and a money mail alike.
    await queueMail(ctx.db, { kind: 'password_changed', to: ann.email, locale: 'en', vars: {} });
    expect((await mails(ann.email, 'password_changed'))[0]!.text_body).toMatch(/^Your anti-phishing code: “синий кит 42”/);
    await fund(ctx.db, bob.id, 'USDT', 5_000_000n);
    expect((await transfer(bob, ann, '2')).statusCode).toBe(200);
    await writeMoneyMails(ctx.db, PUBLIC_URL);
    expect((await mails(ann.email, 'transfer_received'))[0]!.text_body).toMatch(/^Your anti-phishing code: “синий кит 42”/);
    // Others' mails do not carry it.
    expect((await mails(bob.email, 'transfer_received'))[0]!.text_body).not.toContain('синий кит');

    const removed = await antiPhishing(ann, { anti_phishing_code: '' });
    expect(removed.json().anti_phishing_code).toBeNull();
    await queueMail(ctx.db, { kind: 'password_changed', to: ann.email, locale: 'en', vars: {} });
    expect((await mails(ann.email, 'password_changed'))[1]!.text_body).not.toContain('anti-phishing');
  });

  it('with 2FA on, changing the code takes a code of the second factor, and a wrong one changes nothing', async () => {
    const secret = newTotpSecret();
    await ctx.db.query('INSERT INTO user_totp (user_id, secret, enabled_at, last_step) VALUES ($1, $2, now(), 0)', [bob.id, secret]);
    const without = await antiPhishing(bob, { anti_phishing_code: 'green apple' });
    expect(without.statusCode).toBe(400);
    expect(without.json()).toMatchObject({ code: 'second_factor_required' });
    const wrong = await antiPhishing(bob, { anti_phishing_code: 'green apple', code: '000000' });
    expect(wrong.json().code).toBe('second_factor_invalid');
    expect((await call(ctx.app, '/api/config/mailing', { token: bob.token })).json().anti_phishing_code).toBeNull();
    const right = await antiPhishing(bob, { anti_phishing_code: 'green apple', code: totpCode(secret, NOW.getTime()) });
    expect(right.statusCode, right.body).toBe(200);
    expect(right.json().anti_phishing_code).toBe('green apple');
  });

  it('needs a signed-in user', async () => {
    expect((await call(ctx.app, '/api/config/anti_phishing', { payload: { anti_phishing_code: 'green apple' } })).statusCode).toBe(401);
  });
});
