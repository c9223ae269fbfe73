import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SMTPServer } from 'smtp-server';
import type { AddressInfo } from 'node:net';
import { ENGINES, build } from '../helpers.ts';
import { DEMO, call, freshEmail, lastMailTo, linkToken, signUp } from '../auth-helpers.ts';
import { renderMail } from '../../src/mail/outbox.ts';

/** The development helpers answer loopback clients only (the BFF forwards its client's address). */
const LOOPBACK = '127.0.0.1';

/** Delivery runs after the answer (the request never waits for SMTP): poll the outbox. */
async function waitForRow<T>(read: () => Promise<T | undefined>, done: (row: T) => boolean, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const row = await read();
    if (row && done(row)) return row;
    if (Date.now() > deadline) throw new Error(`timed out; last ${JSON.stringify(row)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

type TReceived = { from: string; to: string[]; raw: string };

/** A real SMTP server on 127.0.0.1:<random> that keeps what it receives. */
async function startSmtp() {
  const received: TReceived[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData(stream, session, done) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        received.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((rcpt) => rcpt.address),
          raw: Buffer.concat(chunks).toString('utf8'),
        });
        done();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.server.address() as AddressInfo).port;
  return { url: `smtp://127.0.0.1:${port}`, received, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

describe('mail rendering', () => {
  it('renders in the locale, with clickable links and escaped HTML', () => {
    const vars = { link: 'http://localhost:3000/login?token=abc&x=1', minutes: '<b>15</b>' };
    const en = renderMail({ kind: 'sign_in', locale: 'en', vars });
    expect(en.subject).toBe('Your Obmen sign-in link');
    expect(en.text).toContain('http://localhost:3000/login?token=abc&x=1');
    expect(en.text).toContain('expires in <b>15</b> minutes');
    expect(en.text).toContain('— The Obmen team');
    expect(en.html).toContain('<a href="http://localhost:3000/login?token=abc&#38;x=1">http://localhost:3000/login?token=abc&#38;x=1</a>');
    expect(en.html).toContain('expires in &#60;b&#62;15&#60;/b&#62; minutes');
    expect(en.html).not.toContain('<b>');
    const ru = renderMail({ kind: 'sign_in', locale: 'ru', vars });
    expect(ru.subject).toBe('Ссылка для входа в Obmen');
    expect(ru.html).toContain('<html lang="ru">');
  });
});

describe.each(ENGINES)('mail on %s', (engine) => {
  describe('without SMTP: the outbox and the dev mailbox', () => {
    let ctx: Awaited<ReturnType<typeof build>>;
    beforeAll(async () => {
      ctx = await build(engine, { PUBLIC_URL: 'https://obmen.example/' });
    });
    afterAll(() => ctx.close());

    it('lists mails newest first with their links, filtered by address', async () => {
      const email = freshEmail('mailbox');
      await call(ctx.app, '/api/auth/login', { payload: { email }, locale: 'en' });
      await call(ctx.app, '/api/auth/login', { payload: { email } });
      const res = await call(ctx.app, `/api/dev/mailbox?to=${encodeURIComponent(email.toUpperCase())}`, { ip: LOOPBACK });
      expect(res.statusCode).toBe(200);
      expect(res.headers['cache-control']).toBe('no-store');
      const { mails } = res.json();
      expect(mails).toHaveLength(2);
      expect(mails[0]).toMatchObject({ kind: 'sign_in', to: email, locale: 'ru', subject: 'Ссылка для входа в Obmen', sent_at: null });
      expect(mails[1]).toMatchObject({ locale: 'en', subject: 'Your Obmen sign-in link' });
      expect(mails[0].links).toHaveLength(1);
      expect(mails[0].links[0]).toMatch(/^https:\/\/obmen\.example\/login\?token=[A-Za-z0-9_-]{43}$/);
      expect(mails[0].html).toContain(`<a href="${mails[0].links[0]}">`);
      expect(mails[0].created_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
      const all = await call(ctx.app, '/api/dev/mailbox?limit=1', { ip: LOOPBACK });
      expect(all.json().mails).toHaveLength(1);
    });

    it('mails a known user in the account language, whatever the browser language', async () => {
      const email = freshEmail('lang');
      await signUp(ctx.app, ctx.db, email, 'english password', 'en');
      await call(ctx.app, '/api/auth/reset', { payload: { email }, locale: 'ru' });
      const mail = await lastMailTo(ctx.db, email);
      expect(mail).toMatchObject({ kind: 'reset', locale: 'en', subject: 'Reset your Obmen password' });
      expect(mail.text_body).toContain('https://obmen.example/reset-password?token=');
    });

    it('switches the auth type for e2e (dev only)', async () => {
      const res = await call(ctx.app, '/api/dev/auth_type', { ip: LOOPBACK, payload: { auth_type: 'email' } });
      expect(res.json()).toEqual({ status: 'ok', auth_type: 'email' });
      expect((await call(ctx.app, '/api/auth/check')).json().site_settings.auth_type).toBe('email');
      await call(ctx.app, '/api/dev/auth_type', { ip: LOOPBACK, payload: { auth_type: 'password' } });
      expect((await call(ctx.app, '/api/dev/auth_type', { ip: LOOPBACK, payload: { auth_type: 'nope' } })).statusCode).toBe(400);
    });
  });

  describe('in production', () => {
    let ctx: Awaited<ReturnType<typeof build>>;
    beforeAll(async () => {
      ctx = await build(engine, { NODE_ENV: 'production' });
    });
    afterAll(() => ctx.close());

    it('has no dev mailbox, no auth-type switch and no demo account', async () => {
      expect((await call(ctx.app, '/api/dev/mailbox', { ip: LOOPBACK })).statusCode).toBe(404);
      expect((await call(ctx.app, '/api/dev/auth_type', { ip: LOOPBACK, payload: { auth_type: 'email' } })).statusCode).toBe(404);
      expect(await ctx.db.query('SELECT 1 FROM users WHERE email = $1', [DEMO.email])).toEqual([]);
      expect((await call(ctx.app, '/api/auth/login_by_password', { payload: DEMO })).statusCode).toBe(401);
    });
  });

  describe('with SMTP_URL', () => {
    let smtp: Awaited<ReturnType<typeof startSmtp>>;
    let ctx: Awaited<ReturnType<typeof build>>;
    beforeAll(async () => {
      smtp = await startSmtp();
      ctx = await build(engine, { SMTP_URL: smtp.url, MAIL_FROM: 'Obmen <robot@obmen.example>' });
    });
    afterAll(async () => {
      await ctx.close();
      await smtp.close();
    });

    it('delivers outbox mails over SMTP once and marks them sent', async () => {
      const email = freshEmail('smtp');
      await call(ctx.app, '/api/auth/login', { payload: { email }, locale: 'en' });
      const row = await waitForRow(
        async () =>
          (
            await ctx.db.query<{ sent: boolean; attempts: number }>('SELECT sent_at IS NOT NULL AS sent, attempts FROM mail_outbox WHERE to_address = $1', [
              email,
            ])
          )[0],
        (found) => found.sent,
      );
      expect(row).toEqual({ sent: true, attempts: 1 });
      const mine = smtp.received.filter((mail) => mail.to.includes(email));
      expect(mine).toHaveLength(1);
      expect(mine[0]!.from).toBe('robot@obmen.example');
      expect(mine[0]!.raw).toContain('Subject: Your Obmen sign-in link');
      expect(mine[0]!.raw).toContain('Content-Type: text/html');
      // The link in the delivered mail signs in.
      const token = linkToken(await lastMailTo(ctx.db, email));
      expect(mine[0]!.raw.replace(/=\r?\n/g, '')).toContain(token);
    });

    it('keeps a mail for a later attempt when the SMTP server is down', async () => {
      await smtp.close();
      const email = freshEmail('smtp-down');
      await call(ctx.app, '/api/auth/login', { payload: { email } });
      const row = await waitForRow(
        async () =>
          (
            await ctx.db.query<{ sent: boolean; attempts: number; error: boolean; later: boolean }>(
              `SELECT sent_at IS NOT NULL AS sent, attempts, last_error IS NOT NULL AS error, next_attempt_at > now() AS later
               FROM mail_outbox WHERE to_address = $1`,
              [email],
            )
          )[0],
        (found) => found.error,
      );
      expect(row).toEqual({ sent: false, attempts: 1, error: true, later: true });
    });
  });
});
