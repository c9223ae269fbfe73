import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENGINES, build } from '../../helpers.ts';
import { call, freshEmail, lastMailTo, linkToken, logIn, mailsTo, sessionToken, signUp } from '../../auth-helpers.ts';
import { commonPasswords } from '../../../src/domains/auth/common-passwords.ts';

/** OWASP ASVS 5.0 V6.2.4: the most common passwords are refused wherever a password is set. */
const COMMON = ['password', '12345678', 'qwerty123', 'iloveyou'];
const RU = 'Этот пароль — один из самых распространённых, его легко подобрать. Выберите другой, например фразу из нескольких слов.';
const EN = 'This password is among the most common ones and easy to guess. Choose another, for example a phrase of several words.';

describe('the common-password list', () => {
  it('holds at least the 100,000 most common passwords that the length rule lets through', async () => {
    const list = await commonPasswords();
    expect(list.size).toBeGreaterThan(100_000);
    for (const password of COMMON) expect(list.has(password)).toBe(true);
    expect(await commonPasswords()).toBe(list);
  });
});

describe.each(ENGINES)('common passwords refused on %s', (engine) => {
  let ctx: Awaited<ReturnType<typeof build>>;
  beforeAll(async () => {
    ctx = await build(engine);
  });
  afterAll(() => ctx.close());

  it('at registration, as a field error in ru and en; nothing is mailed', async () => {
    for (const password of [...COMMON, 'PassWord', 'Ｐａｓｓｗｏｒｄ']) {
      const email = freshEmail('common');
      const ru = await call(ctx.app, '/api/auth/register', { payload: { email, password } });
      expect(ru.statusCode, password).toBe(400);
      expect(ru.json()).toMatchObject({ status: 'error', code: 'validation', fields: { password: RU } });
      const en = await call(ctx.app, '/api/auth/register', { payload: { email, password }, locale: 'en' });
      expect(en.json().fields).toEqual({ password: EN });
      expect(await mailsTo(ctx.db, email)).toEqual([]);
    }
    const fine = await call(ctx.app, '/api/auth/register', { payload: { email: freshEmail('common'), password: 'a quiet river at dawn' } });
    expect(fine.statusCode).toBe(200);
  });

  it('at reset: the link stays usable for a better password', async () => {
    const email = freshEmail('common-reset');
    await signUp(ctx.app, ctx.db, email, 'first password 1');
    await call(ctx.app, '/api/auth/reset', { payload: { email } });
    const token = linkToken(await lastMailTo(ctx.db, email));
    const refused = await call(ctx.app, `/api/auth/reset/${token}`, { payload: { password: 'iloveyou' }, locale: 'en' });
    expect(refused.statusCode).toBe(400);
    expect(refused.json().fields).toEqual({ password: EN });
    const done = await call(ctx.app, `/api/auth/reset/${token}`, { payload: { password: 'second password 2' } });
    expect(done.statusCode).toBe(200);
  });

  it('at change: the old password keeps working', async () => {
    const email = freshEmail('common-change');
    const session = await signUp(ctx.app, ctx.db, email, 'first password 1');
    const refused = await call(ctx.app, '/api/auth/change', { token: session, payload: { current_password: 'first password 1', password: 'qwerty123' } });
    expect(refused.statusCode).toBe(400);
    expect(refused.json().fields).toEqual({ password: RU });
    expect(await logIn(ctx.app, email, 'first password 1')).toBeTruthy();
    const ok = await call(ctx.app, '/api/auth/change', { token: session, payload: { current_password: 'first password 1', password: 'second password 2' } });
    expect(sessionToken(ok)).toBeTruthy();
  });
});
