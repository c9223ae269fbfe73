import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { REPLAYED_HEADER } from '@obmen/shared';
import { ENGINES, build } from '../../helpers.ts';
import { createFixtureUser, fund, type TFixtureUser } from '../../fixtures.ts';
import { call, postForm, type TCall } from '../../auth-helpers.ts';
import { enrolSoftPasskey, softSecondFactor } from '../../passkey-authenticator.ts';
import { newTotpSecret, totpCode } from '../../../src/domains/security/totp.ts';

describe.each(ENGINES)('the second factor of transfers on %s', (engine) => {
  let ctx: Awaited<ReturnType<typeof build>>;
  let bob: TFixtureUser;
  const clock = new Date('2026-11-27T12:00:00Z');
  beforeAll(async () => {
    ctx = await build(engine, {}, { now: () => clock });
    bob = await createFixtureUser(ctx.db);
  });
  afterAll(() => ctx.close());

  const send = (url: string, options: TCall) => call(ctx.app, url, { locale: 'en', ...options });
  const transfer = (user: TFixtureUser, extra: Record<string, string>, key: string) =>
    postForm(ctx.app, user, '/api/transfer', { account_id: String(bob.accountId), currency: 'USDT', amount: '1', ...extra }, key);
  const usdt = async (userId: string) =>
    (
      await ctx.db.query<{ balance: string }>(`SELECT coalesce(balance, 0)::text AS balance FROM ledger_accounts WHERE user_id = $1 AND currency = 'USDT'`, [
        userId,
      ])
    )[0]?.balance;
  const sender = async (withTotp: boolean) => {
    const user = await createFixtureUser(ctx.db);
    await fund(ctx.db, user.id, 'USDT', 10_000_000n);
    const secret = newTotpSecret();
    if (withTotp) await ctx.db.query('INSERT INTO user_totp (user_id, secret, enabled_at) VALUES ($1, $2, now())', [user.id, secret]);
    return { user, secret };
  };

  it('with 2FA on the check says so, and the transfer needs a right code; a replay answers the stored result', async () => {
    const { user, secret } = await sender(true);
    const check = await postForm(ctx.app, user, '/api/transfer/check', { account_id: String(bob.accountId), currency: 'USDT', amount: '1' });
    expect(check.json()).toMatchObject({ status: 'ok', second_factor: true, totp: true });

    const none = await transfer(user, {}, 'tf-none-key');
    expect(none.statusCode).toBe(400);
    expect(none.json()).toMatchObject({ code: 'second_factor_required', fields: { code: expect.any(String) } });
    const code = totpCode(secret, clock.getTime());
    const wrong = await transfer(user, { code: code === '000000' ? '111111' : '000000' }, 'tf-wrong-key');
    expect(wrong.json().code).toBe('second_factor_invalid');
    expect(await usdt(user.id)).toBe('10000000');

    const ok = await transfer(user, { code }, 'tf-ok-key1');
    expect(ok.statusCode).toBe(200);
    expect(await usdt(user.id)).toBe('9000000');
    // The same key again, its code spent or left out: the first answer, nothing moves.
    for (const extra of [{ code }, {}] as Record<string, string>[]) {
      const replay = await transfer(user, extra, 'tf-ok-key1');
      expect(replay.statusCode).toBe(200);
      expect(replay.headers[REPLAYED_HEADER]).toBe('true');
      expect(replay.json().transfer.id).toBe(ok.json().transfer.id);
    }
    // The same key for another transfer is not a replay: it still needs the factor (and then is refused as a reuse).
    const other = await postForm(ctx.app, user, '/api/transfer', { account_id: String(bob.accountId), currency: 'USDT', amount: '2' }, 'tf-ok-key1');
    expect(other.json().code).toBe('second_factor_required');
    expect(await usdt(user.id)).toBe('9000000');
  });

  it('a passkey approves a transfer in place of the code', async () => {
    const { user, secret } = await sender(true);
    const key = await enrolSoftPasskey(send, user.token, { code: totpCode(secret, clock.getTime()) });
    const ok = await transfer(user, { passkey: await softSecondFactor(send, user.token, key) }, 'tf-passkey-key');
    expect(ok.statusCode).toBe(200);
    expect(await usdt(user.id)).toBe('9000000');
  });

  it('with 2FA off nothing is asked, and the transfer makes no query about it', async () => {
    const { user } = await sender(false);
    const check = await postForm(ctx.app, user, '/api/transfer/check', { account_id: String(bob.accountId), currency: 'USDT', amount: '1' });
    expect(check.json().second_factor).toBe(false);
    const spy = vi.spyOn(ctx.db, 'query');
    try {
      const ok = await transfer(user, {}, 'tf-off-key1');
      expect(ok.statusCode).toBe(200);
      const texts = spy.mock.calls.map(([sql]) => (typeof sql === 'string' ? sql : JSON.stringify(sql)));
      expect(texts.filter((sql) => /idempotency_keys|user_totp|webauthn/.test(sql))).toEqual([]);
    } finally {
      spy.mockRestore();
    }
  });
});
