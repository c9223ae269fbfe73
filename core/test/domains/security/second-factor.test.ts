import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENGINES, build } from '../../helpers.ts';
import { call, freshEmail, sessionToken, signUp } from '../../auth-helpers.ts';
import { createFixtureUser } from '../../fixtures.ts';
import { AppError } from '../../../src/errors.ts';
import { base32Decode, base32Encode, hotp, matchTotp, newTotpSecret, otpauthUri, totpCode } from '../../../src/domains/security/totp.ts';
import {
  issueRecoveryCodes,
  markSecurityChanged,
  refuseWhileWithdrawalsBlocked,
  secondFactorEnabled,
  verifySecondFactor,
  withdrawalsBlockedUntil,
} from '../../../src/domains/security/second-factor.ts';

// RFC 6238 appendix B: the SHA-1 secret "12345678901234567890"; its 8-digit values end in these 6.
const RFC_SECRET = base32Encode(Buffer.from('12345678901234567890'));
const T0 = 1_111_111_109_000; // 2005-03-18 01:58:29 UTC: step 37037036

describe('TOTP', () => {
  it('matches the RFC 6238 test vectors (6 digits)', () => {
    expect(totpCode(RFC_SECRET, 59_000)).toBe('287082');
    expect(totpCode(RFC_SECRET, T0)).toBe('081804');
    expect(totpCode(RFC_SECRET, 1_234_567_890_000)).toBe('005924');
    expect(totpCode(RFC_SECRET, 20_000_000_000_000)).toBe('353130');
    expect(hotp(RFC_SECRET, 1)).toBe('287082');
  });

  it('base32 round-trips; secrets are 32 characters', () => {
    const secret = newTotpSecret();
    expect(secret).toMatch(/^[A-Z2-7]{32}$/);
    expect(base32Encode(base32Decode(secret))).toBe(secret);
  });

  it('accepts the step before, the current and the next one, nothing further, and never a used step', () => {
    const step = Math.floor(T0 / 30_000);
    expect(matchTotp(RFC_SECRET, totpCode(RFC_SECRET, T0 - 30_000), T0, 0)).toBe(step - 1);
    expect(matchTotp(RFC_SECRET, totpCode(RFC_SECRET, T0), T0, 0)).toBe(step);
    expect(matchTotp(RFC_SECRET, totpCode(RFC_SECRET, T0 + 30_000), T0, 0)).toBe(step + 1);
    expect(matchTotp(RFC_SECRET, totpCode(RFC_SECRET, T0 - 60_000), T0, 0)).toBeNull();
    expect(matchTotp(RFC_SECRET, totpCode(RFC_SECRET, T0 + 60_000), T0, 0)).toBeNull();
    expect(matchTotp(RFC_SECRET, totpCode(RFC_SECRET, T0), T0, step)).toBeNull();
    expect(matchTotp(RFC_SECRET, '12345', T0, 0)).toBeNull();
    expect(matchTotp(RFC_SECRET, 'abcdef', T0, 0)).toBeNull();
  });

  it('builds the otpauth URI authenticator apps read', () => {
    expect(otpauthUri('ABC', 'a+b@example.com')).toBe('otpauth://totp/Obmen:a%2Bb%40example.com?secret=ABC&issuer=Obmen&algorithm=SHA1&digits=6&period=30');
  });
});

describe.each(ENGINES)('second factor and security changes on %s', (engine) => {
  let ctx: Awaited<ReturnType<typeof build>>;
  beforeAll(async () => {
    ctx = await build(engine);
  });
  afterAll(() => ctx.close());

  async function enrolled(secret = newTotpSecret()) {
    const user = await createFixtureUser(ctx.db);
    await ctx.db.query('INSERT INTO user_totp (user_id, secret, enabled_at) VALUES ($1, $2, now())', [user.id, secret]);
    const codes = await issueRecoveryCodes(ctx.db, user.id);
    return { user, secret, codes };
  }

  const codeOf = async (promise: Promise<unknown>) => {
    const err = await promise.then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(AppError);
    return (err as AppError).code;
  };

  it('with 2FA off there is nothing to check', async () => {
    const user = await createFixtureUser(ctx.db);
    expect(await secondFactorEnabled(ctx.db, user.id)).toBe(false);
    expect(await verifySecondFactor(ctx.db, user.id, { code: undefined })).toBe('none');
    // An enrolment never confirmed does not switch it on.
    await ctx.db.query('INSERT INTO user_totp (user_id, secret) VALUES ($1, $2)', [user.id, newTotpSecret()]);
    expect(await verifySecondFactor(ctx.db, user.id, { code: '123456' })).toBe('none');
  });

  it('a TOTP code works once; a missing, wrong or old code is refused', async () => {
    const { user, secret } = await enrolled();
    expect(await secondFactorEnabled(ctx.db, user.id)).toBe(true);
    const now = Date.now();
    expect(await codeOf(verifySecondFactor(ctx.db, user.id, { code: '' }))).toBe('second_factor_required');
    expect(await codeOf(verifySecondFactor(ctx.db, user.id, { code: totpCode(secret, now - 90_000) }, now))).toBe('second_factor_invalid');
    const code = totpCode(secret, now);
    expect(await verifySecondFactor(ctx.db, user.id, { code: ` ${code.slice(0, 3)} ${code.slice(3)} ` }, now)).toBe('totp');
    expect(await codeOf(verifySecondFactor(ctx.db, user.id, { code: code }, now))).toBe('second_factor_invalid');
    // The previous step's code is older than the one used: refused too.
    expect(await codeOf(verifySecondFactor(ctx.db, user.id, { code: totpCode(secret, now - 30_000) }, now))).toBe('second_factor_invalid');
    // The next step's code is still good once.
    expect(await verifySecondFactor(ctx.db, user.id, { code: totpCode(secret, now + 30_000) }, now)).toBe('totp');
  });

  it('two requests with one code at once: exactly one passes', async () => {
    const { user, secret } = await enrolled();
    const now = Date.now();
    const code = totpCode(secret, now);
    const results = await Promise.allSettled([
      verifySecondFactor(ctx.db, user.id, { code: code }, now),
      verifySecondFactor(ctx.db, user.id, { code: code }, now),
    ]);
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
  });

  it('recovery codes: ten, kept hashed, each works once in any case and spacing', async () => {
    const { user, codes } = await enrolled();
    expect(codes).toHaveLength(10);
    expect(new Set(codes).size).toBe(10);
    for (const code of codes) expect(code).toMatch(/^[a-z2-7]{4}(-[a-z2-7]{4}){3}$/);
    const stored = await ctx.db.query<{ code_hash: Buffer }>('SELECT code_hash FROM recovery_codes WHERE user_id = $1', [user.id]);
    expect(stored).toHaveLength(10);
    expect(JSON.stringify(stored)).not.toContain(codes[0]!.replace(/-/g, ''));
    expect(await verifySecondFactor(ctx.db, user.id, { code: codes[0]!.toUpperCase().replace(/-/g, ' ') })).toBe('recovery');
    expect(await codeOf(verifySecondFactor(ctx.db, user.id, { code: codes[0] }))).toBe('second_factor_invalid');
    expect(await verifySecondFactor(ctx.db, user.id, { code: codes[1] })).toBe('recovery');
    // Another user's code is not this user's.
    const other = await enrolled();
    expect(await codeOf(verifySecondFactor(ctx.db, user.id, { code: other.codes[0] }))).toBe('second_factor_invalid');
  });

  it('attempts are limited per user: the 11th in 15 minutes is 429, even a right code', async () => {
    const { user, secret } = await enrolled();
    for (let i = 0; i < 10; i++)
      expect(await codeOf(verifySecondFactor(ctx.db, user.id, { code: '000000'.replace(/0$/, String(i)) }))).not.toBe('rate_limited');
    expect(await codeOf(verifySecondFactor(ctx.db, user.id, { code: totpCode(secret, Date.now()) }))).toBe('rate_limited');
  });

  it('withdrawals wait 24 hours after a security change', async () => {
    const user = await createFixtureUser(ctx.db);
    expect(await withdrawalsBlockedUntil(ctx.db, user.id)).toBeNull();
    await refuseWhileWithdrawalsBlocked(ctx.db, user.id);
    await markSecurityChanged(ctx.db, user.id);
    const until = await withdrawalsBlockedUntil(ctx.db, user.id);
    expect(until).toBeInstanceOf(Date);
    expect(Math.abs(until!.getTime() - Date.now() - 24 * 3600_000)).toBeLessThan(60_000);
    const err = await refuseWhileWithdrawalsBlocked(ctx.db, user.id).catch((e: AppError) => e);
    expect(err).toBeInstanceOf(AppError);
    expect((err as AppError).statusCode).toBe(403);
    expect((err as AppError).data).toEqual({ blocked_until: until!.toISOString() });
    await ctx.db.query(`UPDATE users SET security_changed_at = now() - interval '24 hours 1 minute' WHERE id = $1`, [user.id]);
    expect(await withdrawalsBlockedUntil(ctx.db, user.id)).toBeNull();
  });

  it('a password change and a reset mark the security change; setting a first password does not', async () => {
    const email = freshEmail('sec');
    const token = await signUp(ctx.app, ctx.db, email, 'first password 1');
    const [user] = await ctx.db.query<{ id: string }>('SELECT id::text FROM users WHERE email = $1', [email]);
    expect(await withdrawalsBlockedUntil(ctx.db, user!.id)).toBeNull();
    const changed = await call(ctx.app, '/api/auth/change', { token, payload: { current_password: 'first password 1', password: 'second password 2' } });
    expect(changed.statusCode).toBe(200);
    sessionToken(changed);
    expect(await withdrawalsBlockedUntil(ctx.db, user!.id)).not.toBeNull();

    await ctx.db.query('UPDATE users SET security_changed_at = NULL WHERE id = $1', [user!.id]);
    await call(ctx.app, '/api/auth/reset', { payload: { email } });
    const [mail] = await ctx.db.query<{ text_body: string }>(`SELECT text_body FROM mail_outbox WHERE to_address = $1 AND kind = 'reset'`, [email]);
    const resetToken = /token=([A-Za-z0-9_-]{43})/.exec(mail!.text_body)![1];
    expect((await call(ctx.app, `/api/auth/reset/${resetToken}`, { payload: { password: 'third password 3' } })).statusCode).toBe(200);
    expect(await withdrawalsBlockedUntil(ctx.db, user!.id)).not.toBeNull();

    const linkUser = await createFixtureUser(ctx.db);
    const set = await call(ctx.app, '/api/auth/change', { token: linkUser.token, payload: { password: 'a first password' } });
    expect(set.statusCode).toBe(200);
    expect(await withdrawalsBlockedUntil(ctx.db, linkUser.id)).toBeNull();
  });
});
