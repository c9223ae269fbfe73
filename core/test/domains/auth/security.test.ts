import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { scryptSync, randomBytes } from 'node:crypto';
import { TOKEN_PATTERN } from '@obmen/shared';
import { ENGINES, TEST_SCRYPT_LN, build } from '../../helpers.ts';
import { DEMO, call, freshEmail, freshIp, lastMailTo, linkToken, logIn, mailsTo, sameBrowser, sessionToken, signUp } from '../../auth-helpers.ts';
import { SCRYPT_PARAMS, hashPassword, needsRehash, parseHash, setPasswordHashCost, verifyPassword } from '../../../src/domains/auth/passwords.ts';
import { loadConfig } from '../../../src/config.ts';
import { clientKey } from '@obmen/shared';
import { RATE_LIMITS } from '../../../src/rate-limit.ts';
import { PASSWORD_FAILURES_FREE } from '../../../src/domains/auth/password-failures.ts';
import { setSiteSetting } from '../../../src/domains/site/service.ts';

describe('password hashing', () => {
  // At the production cost, as a production config sets it (the test apps below lower it).
  beforeAll(() => setPasswordHashCost(loadConfig({ NODE_ENV: 'production' }).PASSWORD_SCRYPT_LN));

  it('uses scrypt at the OWASP parameters in a self-describing format', async () => {
    expect(SCRYPT_PARAMS).toEqual({ ln: 17, r: 8, p: 1 });
    const hash = await hashPassword('correct horse battery staple');
    expect(hash).toMatch(/^\$scrypt\$ln=17,r=8,p=1\$[A-Za-z0-9+/]+=*\$[A-Za-z0-9+/]+=*$/);
    const parsed = parseHash(hash)!;
    expect(parsed.salt).toHaveLength(16);
    expect(parsed.key).toHaveLength(32);
    expect(await hashPassword('correct horse battery staple')).not.toBe(hash);
    expect(await verifyPassword('correct horse battery staple', hash)).toBe(true);
    expect(await verifyPassword('correct horse battery stapl', hash)).toBe(false);
    expect(needsRehash(hash)).toBe(false);
  });

  it('compares after NFKC: composed and decomposed accents, full-width digits match', async () => {
    const hash = await hashPassword('café-pässword-12');
    expect(await verifyPassword('cafe\u0301-pa\u0308ssword-12', hash)).toBe(true);
    const wide = await hashPassword('ｐａｓｓｗｏｒｄ１２');
    expect(await verifyPassword('password12', wide)).toBe(true);
  });

  it('an unknown account or a missing password never verifies, and costs a full hash', async () => {
    const started = performance.now();
    expect(await verifyPassword('anything at all', null)).toBe(false);
    await verifyPassword('anything at all', null);
    const nullTime = (performance.now() - started) / 2;
    const hash = await hashPassword('anything at all');
    const t0 = performance.now();
    await verifyPassword('something else', hash);
    const realTime = performance.now() - t0;
    // Both are one scrypt at N=2^17: within a generous factor of each other.
    expect(nullTime).toBeGreaterThan(realTime / 4);
    expect(await verifyPassword('x', 'not a hash')).toBe(false);
  });

  it('older, weaker hashes still verify and want a rehash', async () => {
    const salt = randomBytes(16);
    const key = scryptSync('old password 1', salt, 32, { N: 2 ** 14, r: 8, p: 1 });
    const old = `$scrypt$ln=14,r=8,p=1$${salt.toString('base64')}$${key.toString('base64')}`;
    expect(await verifyPassword('old password 1', old)).toBe(true);
    expect(needsRehash(old)).toBe(true);
    // A tampered row cannot make us allocate gigabytes.
    expect(parseHash(old.replace('ln=14', 'ln=30'))).toBeNull();
  });
});

describe('client keys', () => {
  it('keys IPv4 as is, IPv4-mapped IPv6 as IPv4, and IPv6 by its /64', () => {
    expect(clientKey('203.0.113.9')).toBe('203.0.113.9');
    expect(clientKey('::ffff:203.0.113.9')).toBe('203.0.113.9');
    expect(clientKey('2001:db8:1:2:3:4:5:6')).toBe('2001:db8:1:2::/64');
    expect(clientKey('2001:0db8:0001:0002::9')).toBe('2001:db8:1:2::/64');
    expect(clientKey('2001:db8::1')).toBe('2001:db8:0:0::/64');
  });
});

describe.each(ENGINES)('account security on %s', (engine) => {
  let ctx: Awaited<ReturnType<typeof build>>;
  beforeAll(async () => {
    ctx = await build(engine);
  });
  afterAll(() => ctx.close());

  /** Fill a bucket up to its limit without spending real requests (and real scrypt time). */
  async function fillBucket(name: keyof typeof RATE_LIMITS, subject: string) {
    await ctx.db.query(
      `INSERT INTO rate_limits (key, window_start, window_seconds, hits) VALUES ($1, now(), $2, $3)
       ON CONFLICT (key) DO UPDATE SET hits = EXCLUDED.hits, window_start = now()`,
      [`${name}:${subject}`, RATE_LIMITS[name].windowS, RATE_LIMITS[name].max],
    );
  }

  function expectRateLimited(res: Awaited<ReturnType<typeof call>>, windowS: number) {
    expect(res.statusCode).toBe(429);
    const retryAfter = Number(res.headers['retry-after']);
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(windowS);
    expect(res.json()).toMatchObject({ status: 'error', code: 'rate_limited' });
    expect(res.json().message).toMatch(/Too many attempts\. Please try again in \d+ min\.|Слишком много попыток/);
  }

  describe('passwords at the edges', () => {
    it('refuses 7 characters, counting code points (7 emoji are 14 UTF-16 units)', async () => {
      for (const password of ['1234567', '😀😀😀😀😀😀😀']) {
        const res = await call(ctx.app, '/api/auth/register', { payload: { email: freshEmail(), password }, locale: 'en' });
        expect(res.statusCode).toBe(400);
        expect(res.json().fields).toEqual({ password: 'The password must be at least 8 characters long.' });
      }
    });

    it('accepts 8 Unicode characters and a 1024-character passphrase end to end; refuses 1025', async () => {
      const cjk = '密码密码密码密码';
      const cjkEmail = freshEmail('cjk');
      await signUp(ctx.app, ctx.db, cjkEmail, cjk);
      expect(await logIn(ctx.app, cjkEmail, cjk)).toMatch(TOKEN_PATTERN);

      const long = 'Длинная фраза 🔐 '.repeat(64).slice(0, 1024);
      const longEmail = freshEmail('long');
      await signUp(ctx.app, ctx.db, longEmail, long);
      expect(await logIn(ctx.app, longEmail, long)).toMatch(TOKEN_PATTERN);
      expect((await call(ctx.app, '/api/auth/login_by_password', { payload: { email: longEmail, password: long.slice(0, -1) } })).statusCode).toBe(401);

      const tooLong = await call(ctx.app, '/api/auth/register', { payload: { email: freshEmail(), password: 'x'.repeat(1025) }, locale: 'en' });
      expect(tooLong.json().fields).toEqual({ password: 'The password must be at most 1024 characters long.' });
    });

    it('a weaker stored hash is upgraded to the configured cost at the next sign-in', async () => {
      const email = freshEmail('rehash');
      await signUp(ctx.app, ctx.db, email, 'old password 1');
      const weaker = TEST_SCRYPT_LN - 2;
      const salt = randomBytes(16);
      const key = scryptSync('old password 1', salt, 32, { N: 2 ** weaker, r: 8, p: 1 });
      await ctx.db.query('UPDATE users SET password_hash = $2 WHERE email = $1', [
        email,
        `$scrypt$ln=${weaker},r=8,p=1$${salt.toString('base64')}$${key.toString('base64')}`,
      ]);
      await logIn(ctx.app, email, 'old password 1');
      const [row] = await ctx.db.query<{ password_hash: string }>('SELECT password_hash FROM users WHERE email = $1', [email]);
      expect(row?.password_hash).toMatch(new RegExp(`^\\$scrypt\\$ln=${TEST_SCRYPT_LN},r=8,p=1\\$`));
    });
  });

  describe('no user enumeration', () => {
    it('login: unknown email, wrong password and a password-less account answer identically', async () => {
      await setSiteSetting(ctx.db, 'auth_type', 'email');
      const linkOnly = freshEmail('linkonly');
      const asked = await call(ctx.app, '/api/auth/login', { payload: { email: linkOnly } });
      await call(ctx.app, `/api/auth/login/${linkToken(await lastMailTo(ctx.db, linkOnly))}`, { method: 'POST', headers: sameBrowser(asked) });
      await setSiteSetting(ctx.db, 'auth_type', 'password');

      const answers = await Promise.all(
        [
          { email: freshEmail('nobody'), password: 'some password' },
          { email: DEMO.email, password: 'some password' },
          { email: linkOnly, password: 'some password' },
        ].map((payload) => call(ctx.app, '/api/auth/login_by_password', { payload, locale: 'en' })),
      );
      for (const res of answers) {
        expect(res.statusCode).toBe(401);
        expect(res.body).toBe(answers[0]!.body);
        expect(res.headers['x-obmen-session-token']).toBeUndefined();
      }
      expect(answers[0]!.json()).toEqual({ status: 'error', code: 'invalid_credentials', message: 'Wrong email or password.' });
    });

    it('reset: known and unknown emails get the same answer; only the mail differs', async () => {
      const unknown = freshEmail('nobody');
      const known = await call(ctx.app, '/api/auth/reset', { payload: { email: DEMO.email } });
      const missing = await call(ctx.app, '/api/auth/reset', { payload: { email: unknown } });
      expect(known.statusCode).toBe(200);
      expect(missing.statusCode).toBe(200);
      expect(missing.body).toBe(known.body);
      expect(known.json()).toEqual({ status: 'ok', message: 'Проверьте почту: мы отправили инструкции по сбросу пароля.' });
      expect((await lastMailTo(ctx.db, DEMO.email)).kind).toBe('reset');
      const mail = await lastMailTo(ctx.db, unknown);
      expect(mail.kind).toBe('reset_unknown');
      expect(mail.text_body).toContain('http://localhost:3000/signup');
    });

    it('sign-up: a taken email gets the same answer, its owner a mail, and nothing changes', async () => {
      const email = freshEmail('taken');
      await signUp(ctx.app, ctx.db, email, 'owner password 1');
      const taken = await call(ctx.app, '/api/auth/register', { payload: { email: email.toUpperCase(), password: 'attacker password' } });
      const fresh = await call(ctx.app, '/api/auth/register', { payload: { email: freshEmail('new'), password: 'attacker password' } });
      expect(taken.statusCode).toBe(200);
      expect(taken.body).toBe(fresh.body);
      expect(taken.headers['x-obmen-session-token']).toBeUndefined();
      expect(fresh.headers['x-obmen-session-token']).toBeUndefined();
      const mail = await lastMailTo(ctx.db, email);
      expect(mail.kind).toBe('signup_existing');
      expect(mail.text_body).toContain('http://localhost:3000/forgot-password');
      expect(mail.text_body).not.toMatch(/confirm=/);
      expect(await logIn(ctx.app, email, 'owner password 1')).toMatch(TOKEN_PATTERN);
      expect((await call(ctx.app, '/api/auth/login_by_password', { payload: { email, password: 'attacker password' } })).statusCode).toBe(401);
    });

    it('passwordless: known and unknown emails get the same answer', async () => {
      const known = await call(ctx.app, '/api/auth/login', { payload: { email: DEMO.email } });
      const unknown = await call(ctx.app, '/api/auth/login', { payload: { email: freshEmail('nobody') } });
      expect(known.statusCode).toBe(200);
      expect(unknown.body).toBe(known.body);
    });
  });

  describe('one-time links', () => {
    it('a link only works for its own kind', async () => {
      const email = freshEmail('kinds');
      await signUp(ctx.app, ctx.db, email, 'kinds password');
      await call(ctx.app, '/api/auth/reset', { payload: { email } });
      const reset = linkToken(await lastMailTo(ctx.db, email));
      expect((await call(ctx.app, `/api/auth/login/${reset}`, { method: 'POST' })).json().code).toBe('invalid_token');
      expect((await call(ctx.app, `/api/auth/confirm/${reset}`, { method: 'POST' })).json().code).toBe('invalid_token');
      // Still unspent for its own purpose.
      expect((await call(ctx.app, `/api/auth/reset/${reset}`)).statusCode).toBe(200);
    });

    it('only hashes are stored', async () => {
      const email = freshEmail('hashes');
      await call(ctx.app, '/api/auth/login', { payload: { email } });
      const token = linkToken(await lastMailTo(ctx.db, email));
      const rows = await ctx.db.query<{ hex: string }>(`SELECT encode(token_hash, 'hex') AS hex FROM auth_tokens WHERE email = $1`, [email]);
      expect(rows).toHaveLength(1);
      expect(rows[0]!.hex).toHaveLength(64);
      expect(rows[0]!.hex).not.toContain(Buffer.from(token).toString('hex'));
    });
  });

  describe('rate limits', () => {
    it('reset: the 4th request for one email within an hour is 429 with Retry-After, from any address', async () => {
      const email = freshEmail('limit-reset');
      for (let i = 0; i < RATE_LIMITS.reset_email.max; i++) {
        expect((await call(ctx.app, '/api/auth/reset', { payload: { email: i % 2 ? email.toUpperCase() : email } })).statusCode).toBe(200);
      }
      const res = await call(ctx.app, '/api/auth/reset', { payload: { email }, locale: 'en' });
      expectRateLimited(res, 3600);
      expect(res.json().message).toBe('Too many attempts. Please try again in 60 min.');
      expect(await mailsTo(ctx.db, email)).toHaveLength(RATE_LIMITS.reset_email.max);
    });

    it('passwordless: 5 links per email per hour', async () => {
      const email = freshEmail('limit-link');
      for (let i = 0; i < RATE_LIMITS.link_email.max; i++) expect((await call(ctx.app, '/api/auth/login', { payload: { email } })).statusCode).toBe(200);
      expectRateLimited(await call(ctx.app, '/api/auth/login', { payload: { email } }), 3600);
    });

    it("login by password: an address's wrong passwords slow that address down, never the owner elsewhere; the owner is told once", async () => {
      const email = freshEmail('limit-login');
      await signUp(ctx.app, ctx.db, email, 'right password', 'en');
      const attacker = freshIp();
      const login = (ip: string, password: string) => call(ctx.app, '/api/auth/login_by_password', { ip, payload: { email, password }, locale: 'en' });
      const warnings = async () => (await mailsTo(ctx.db, email)).filter((mail) => mail.kind === 'password_failures');

      for (let i = 0; i < PASSWORD_FAILURES_FREE + 2; i++) {
        const res = await login(attacker, `wrong password ${i}`);
        expect(res.statusCode, `attempt ${i + 1}`).toBe(i < PASSWORD_FAILURES_FREE ? 401 : 429);
      }
      // The slowed address waits even with the right password (a guess must learn nothing).
      expectRateLimited(await login(attacker, 'right password'), 30);
      // The owner, from anywhere else, signs in as usual.
      expect((await login(freshIp(), 'right password')).statusCode).toBe(200);

      const [warning, ...more] = await warnings();
      expect(more).toEqual([]);
      expect(warning).toMatchObject({ locale: 'en', subject: 'Someone tried to sign in to your Obmen account' });
      expect(warning!.text_body).toContain(attacker);
      expect(warning!.text_body).toContain('UTC');

      // Once the wait is over the address gets one more try; another wrong one doubles the wait.
      await ctx.db.query(`UPDATE password_failures SET last_failed_at = last_failed_at - interval '31 seconds' WHERE email_key = $1`, [email.toLowerCase()]);
      expect((await login(attacker, 'wrong again')).statusCode).toBe(401);
      const doubled = await login(attacker, 'wrong again');
      expectRateLimited(doubled, 60);
      expect(Number(doubled.headers['retry-after'])).toBeGreaterThan(30);

      // A second address reaching the threshold the same day: slowed too, no second mail.
      const second = freshIp();
      for (let i = 0; i < PASSWORD_FAILURES_FREE; i++) expect((await login(second, `second ${i}`)).statusCode).toBe(401);
      expect((await login(second, 'second again')).statusCode).toBe(429);
      expect(await warnings()).toHaveLength(1);
    });

    it('login by password: an unknown address is slowed the same way (nothing tells the two apart), and a success clears the count', async () => {
      const ip = freshIp();
      const unknown = freshEmail('nobody');
      for (let i = 0; i < PASSWORD_FAILURES_FREE; i++) {
        expect((await call(ctx.app, '/api/auth/login_by_password', { ip, payload: { email: unknown, password: `guess ${i}` } })).statusCode).toBe(401);
      }
      expect((await call(ctx.app, '/api/auth/login_by_password', { ip, payload: { email: unknown, password: 'guess' } })).statusCode).toBe(429);

      const email = freshEmail('clears');
      await signUp(ctx.app, ctx.db, email, 'right password');
      const owner = freshIp();
      for (let i = 0; i < PASSWORD_FAILURES_FREE - 1; i++) {
        expect((await call(ctx.app, '/api/auth/login_by_password', { ip: owner, payload: { email, password: `typo ${i}` } })).statusCode).toBe(401);
      }
      expect((await call(ctx.app, '/api/auth/login_by_password', { ip: owner, payload: { email, password: 'right password' } })).statusCode).toBe(200);
      expect(await ctx.db.query('SELECT 1 FROM password_failures WHERE email_key = $1', [email.toLowerCase()])).toEqual([]);
      expect((await mailsTo(ctx.db, email)).map((mail) => mail.kind)).not.toContain('password_failures');
    });

    it('per client address on login, sign-up, passwordless, reset and link use', async () => {
      const cases = [
        ['login_ip', '/api/auth/login_by_password', { email: freshEmail(), password: 'whatever 1' }],
        ['signup_ip', '/api/auth/register', { email: freshEmail(), password: 'whatever 1' }],
        ['link_ip', '/api/auth/login', { email: freshEmail() }],
        ['reset_ip', '/api/auth/reset', { email: freshEmail() }],
        ['token_ip', `/api/auth/login/${'A'.repeat(43)}`, {}],
      ] as const;
      for (const [name, url, payload] of cases) {
        const ip = freshIp();
        await fillBucket(name, ip);
        expectRateLimited(await call(ctx.app, url, { ip, payload }), RATE_LIMITS[name].windowS);
        // Another client is not affected.
        expect((await call(ctx.app, url, { ip: freshIp(), payload })).statusCode, name).not.toBe(429);
      }
    });

    it('sign-up: 3 per email per hour', async () => {
      const email = freshEmail('limit-signup');
      await fillBucket('signup_email', email);
      expectRateLimited(await call(ctx.app, '/api/auth/register', { payload: { email, password: 'whatever 1' } }), 3600);
    });

    it('change password and confirmation mails are limited per account', async () => {
      const email = freshEmail('limit-account');
      const token = await signUp(ctx.app, ctx.db, email, 'account password');
      await ctx.db.query('UPDATE users SET email_confirmed_at = NULL WHERE email = $1', [email]);
      for (let i = 0; i < RATE_LIMITS.confirm_user.max; i++) {
        expect((await call(ctx.app, '/api/auth/send_confirmation_instructions', { token })).statusCode).toBe(200);
      }
      expectRateLimited(await call(ctx.app, '/api/auth/send_confirmation_instructions', { token }), 3600);
      const [user] = await ctx.db.query<{ id: string }>('SELECT id::text FROM users WHERE email = $1', [email]);
      await fillBucket('change_user', user!.id);
      expectRateLimited(await call(ctx.app, '/api/auth/change', { token, payload: { current_password: 'account password', password: 'new password 1' } }), 900);
    });

    it('keys on the real client: X-Forwarded-For from an untrusted peer is ignored', async () => {
      const peer = '203.0.113.7';
      for (let i = 0; i < RATE_LIMITS.reset_ip.max; i++) {
        const res = await call(ctx.app, '/api/auth/reset', { remoteAddress: peer, ip: `198.51.100.${i + 1}`, payload: { email: freshEmail() } });
        expect(res.statusCode).toBe(200);
      }
      const forged = await call(ctx.app, '/api/auth/reset', { remoteAddress: peer, ip: '198.51.100.200', payload: { email: freshEmail() } });
      expectRateLimited(forged, 3600);
      const [bucket] = await ctx.db.query<{ hits: number }>('SELECT hits FROM rate_limits WHERE key = $1', [`reset_ip:${peer}`]);
      expect(bucket?.hits).toBe(RATE_LIMITS.reset_ip.max + 1);
    });

    it('trusts X-Forwarded-For from the BFF (loopback) and keys IPv6 clients by /64', async () => {
      await fillBucket('reset_ip', '2001:db8:aa:bb::/64');
      expectRateLimited(await call(ctx.app, '/api/auth/reset', { ip: '2001:db8:aa:bb:1:2:3:4', payload: { email: freshEmail() } }), 3600);
      expectRateLimited(await call(ctx.app, '/api/auth/reset', { ip: '2001:db8:aa:bb:ffff::1', payload: { email: freshEmail() } }), 3600);
      expect((await call(ctx.app, '/api/auth/reset', { ip: '2001:db8:aa:bc::1', payload: { email: freshEmail() } })).statusCode).toBe(200);
    });
  });

  it('a sign-in answer never puts the token in the body, and check never returns one', async () => {
    const res = await call(ctx.app, '/api/auth/login_by_password', { payload: DEMO });
    const token = sessionToken(res);
    expect(res.body).not.toContain(token);
    const me = await call(ctx.app, '/api/auth/check', { token });
    expect(me.body).not.toContain(token);
    expect(me.headers['x-obmen-session-token']).toBeUndefined();
  });
});
