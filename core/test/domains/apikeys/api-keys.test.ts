import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_KEY_REQUESTS_PER_MINUTE, API_KEYS_MAX } from '@obmen/shared';
import { ENGINES, build } from '../../helpers.ts';
import { createFixtureUser, fund, type TFixtureUser } from '../../fixtures.ts';
import { call, mailsTo } from '../../auth-helpers.ts';
import { signedCall, type TSignedCall } from '../../api-key-client.ts';
import { newTotpSecret, totpCode } from '../../../src/domains/security/totp.ts';
import { revokeAllSessions } from '../../../src/domains/auth/sessions.ts';

describe.each(ENGINES)('keys for bots on %s', (engine) => {
  let ctx: Awaited<ReturnType<typeof build>>;
  let bob: TFixtureUser;
  let clock = new Date('2026-11-27T12:00:00Z');
  // TOTP codes are spent once per 30-second step: each creation moves the clock to a fresh step.
  const tick = () => {
    clock = new Date(clock.getTime() + 31_000);
  };
  beforeAll(async () => {
    ctx = await build(engine, {}, { now: () => clock });
    bob = await createFixtureUser(ctx.db);
    transferBody = { account_id: String(bob.accountId), currency: 'USDT', amount: '1' };
  });
  afterAll(() => ctx.close());

  const usdt = async (userId: string) =>
    (
      await ctx.db.query<{ balance: string }>(`SELECT coalesce(balance, 0)::text AS balance FROM ledger_accounts WHERE user_id = $1 AND currency = 'USDT'`, [
        userId,
      ])
    )[0]?.balance;

  /** A funded user with 2FA on. */
  const owner = async () => {
    const user = await createFixtureUser(ctx.db);
    await fund(ctx.db, user.id, 'USDT', 10_000_000n);
    const secret = newTotpSecret();
    await ctx.db.query('INSERT INTO user_totp (user_id, secret, enabled_at) VALUES ($1, $2, now())', [user.id, secret]);
    return { user, secret };
  };
  const create = (user: TFixtureUser, body: Record<string, unknown>) =>
    call(ctx.app, '/api/security/api_keys', { token: user.token, locale: 'en', payload: body });
  const newKey = async (scopes: string[], extra: Record<string, unknown> = {}) => {
    const { user, secret } = await owner();
    tick();
    const res = await create(user, { label: 'bot', scopes, code: totpCode(secret, clock.getTime()), ...extra });
    expect(res.statusCode, res.body).toBe(200);
    const created = res.json().created as { id: string; secret: string };
    return { user, key: { id: created.id, secret: created.secret } };
  };
  const signed = (call: Omit<TSignedCall, 'nowMs'> & { nowMs?: number }) => signedCall(ctx.app, { nowMs: clock.getTime(), ...call });
  let transferBody: Record<string, string>;

  it('a key is made only with 2FA on and its code, shown once, kept sealed, announced by mail', async () => {
    const plain = await createFixtureUser(ctx.db);
    const off = await create(plain, { label: 'bot', scopes: ['read'] });
    expect(off.statusCode).toBe(409);
    expect(off.json()).toMatchObject({ code: 'api_key_needs_second_factor', message: 'Turn on two-factor authentication first' });

    const { user, secret } = await owner();
    tick();
    const none = await create(user, { label: 'bot', scopes: ['read'] });
    expect(none.json().code).toBe('second_factor_required');
    const bad = await create(user, { label: 'bot', scopes: [], code: totpCode(secret, clock.getTime()) });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().fields).toEqual({ scopes: 'Choose at least one permission' });
    const withdraw = await create(user, { label: 'bot', scopes: ['withdraw'], code: totpCode(secret, clock.getTime()) });
    expect(withdraw.statusCode).toBe(400);
    expect(withdraw.json().fields['scopes.0']).toBeTruthy();
    const badIps = await create(user, { label: 'bot', scopes: ['read'], ips: ['10.0.0.0/99'], code: totpCode(secret, clock.getTime()) });
    expect(badIps.json()).toMatchObject({ code: 'validation', fields: { ips: expect.stringContaining('203.0.113.7') } });
    const transferAnywhere = await create(user, { label: 'bot', scopes: ['transfer'], code: totpCode(secret, clock.getTime()) });
    expect(transferAnywhere.json()).toMatchObject({ code: 'api_key_transfer_needs_ips', fields: { ips: 'For transfers, list the allowed IP addresses' } });
    const past = await create(user, { label: 'bot', scopes: ['read'], expires_on: '2026-11-26', code: totpCode(secret, clock.getTime()) });
    expect(past.json()).toMatchObject({ code: 'validation', fields: { expires_on: 'This date has passed' } });
    expect((await ctx.db.query('SELECT 1 FROM api_keys WHERE user_id = $1', [user.id])).length).toBe(0);

    const ok = await create(user, { label: 'Grid bot', scopes: ['exchange', 'read'], expires_on: '2026-12-31', code: totpCode(secret, clock.getTime()) });
    expect(ok.statusCode).toBe(200);
    const { created, keys } = ok.json();
    expect(created).toMatchObject({ label: 'Grid bot', scopes: ['read', 'exchange'], ips: [], expires_at: '2027-01-01T00:00:00.000Z', last_used_at: null });
    expect(created.id).toMatch(/^ok_[a-z2-7]{20}$/);
    expect(created.secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(keys).toEqual([expect.not.objectContaining({ secret: expect.anything() })]);
    const listed = await call(ctx.app, '/api/security/api_keys', { token: user.token });
    expect(JSON.stringify(listed.json())).not.toContain(created.secret);
    const [row] = await ctx.db.query<{ secret_sealed: Buffer }>('SELECT secret_sealed FROM api_keys WHERE public_id = $1', [created.id]);
    expect(row!.secret_sealed.toString('latin1')).not.toContain(created.secret);
    const mails = await mailsTo(ctx.db, user.email);
    expect(mails.map((mail) => mail.kind)).toContain('api_key_created');
    expect(mails.find((mail) => mail.kind === 'api_key_created')!.text_body).toContain('read, exchange');
  });

  it('a signed request reads and exchanges within its scopes, and records its last use', async () => {
    const { user, key } = await newKey(['read', 'exchange']);
    const wallets = await signed({ key, path: '/api/wallets', ip: '198.51.100.7' });
    expect(wallets.statusCode, wallets.body).toBe(200);
    expect(wallets.json().wallets.find((w: { currency: string }) => w.currency === 'USDT').balance).toBe('10.000000');
    const quote = await signed({ key, path: '/api/exchange/check', body: { src: 'USDT', dst: 'BTC', amount: '2' } });
    expect(quote.statusCode, quote.body).toBe(200);
    const done = await signed({
      key,
      path: '/api/exchange/USDT/BTC',
      body: { quote: quote.json().quote.token },
      headers: { 'idempotency-key': 'bot-exchange-1' },
    });
    expect(done.statusCode, done.body).toBe(200);
    expect(await usdt(user.id)).toBe('8000000');
    const history = await signed({ key, path: '/api/exchange/history?page=1' });
    expect(history.statusCode, history.body).toBe(200);
    expect(history.json().items).toHaveLength(1);
    const list = (await call(ctx.app, '/api/security/api_keys', { token: user.token })).json();
    expect(list.keys[0]).toMatchObject({ id: key.id, last_used_at: clock.toISOString(), last_used_ip: '198.51.100.20' });
  });

  it('a replayed, late, early, badly signed or out-of-scope request is refused and moves nothing', async () => {
    const { user, key } = await newKey(['read', 'transfer'], { ips: ['198.51.100.0/24'] });
    const first = await signed({ key, path: '/api/transfer', body: transferBody, nonce: 'nonce-once-1', headers: { 'idempotency-key': 'bot-transfer-1' } });
    expect(first.statusCode, first.body).toBe(200);
    expect(await usdt(user.id)).toBe('9000000');

    const refusals: Array<[Omit<TSignedCall, 'nowMs'> & { nowMs?: number }, number, string]> = [
      // the same request again, byte for byte (nonce and all)
      [{ key, path: '/api/transfer', body: transferBody, nonce: 'nonce-once-1', headers: { 'idempotency-key': 'bot-transfer-1' } }, 401, 'api_key_replayed'],
      // signed 31 s ago, or 31 s ahead
      [
        { key, path: '/api/transfer', body: transferBody, nowMs: clock.getTime() - 31_000, headers: { 'idempotency-key': 'bot-transfer-2' } },
        401,
        'api_key_stale',
      ],
      [
        { key, path: '/api/transfer', body: transferBody, nowMs: clock.getTime() + 31_000, headers: { 'idempotency-key': 'bot-transfer-3' } },
        401,
        'api_key_stale',
      ],
      // the amount changed after signing
      [
        {
          key,
          path: '/api/transfer',
          body: { ...transferBody, amount: '5' },
          signedBody: JSON.stringify(transferBody),
          headers: { 'idempotency-key': 'bot-transfer-4' },
        },
        401,
        'api_key_signature',
      ],
      // another key's secret
      [
        { key: { ...key, secret: 'x'.repeat(43) }, path: '/api/transfer', body: transferBody, headers: { 'idempotency-key': 'bot-transfer-5' } },
        401,
        'api_key_signature',
      ],
      // a scope no key has, and one this key lacks
      [{ key, path: '/api/withdraw/check', body: { ps: 'sandbox-chain', currency: 'USDT', amount: '1' } }, 403, 'api_key_scope'],
      [{ key, path: '/api/exchange/check', body: { src: 'USDT', dst: 'BTC', amount: '1' } }, 403, 'api_key_scope'],
      [{ key, path: '/api/security/api_keys' }, 403, 'api_key_scope'],
      // from outside its allow-list
      [{ key, path: '/api/transfer', body: transferBody, ip: '203.0.113.9', headers: { 'idempotency-key': 'bot-transfer-6' } }, 403, 'api_key_ip'],
      // an unknown key
      [
        { key: { ...key, id: 'ok_aaaaaaaaaaaaaaaaaaaa' }, path: '/api/transfer', body: transferBody, headers: { 'idempotency-key': 'bot-transfer-7' } },
        401,
        'api_key_invalid',
      ],
    ];
    for (const [request, status, code] of refusals) {
      const res = await signed(request);
      expect([res.statusCode, res.json().code], `${request.path} ${code}`).toEqual([status, code]);
      expect(res.json().message).toBeTruthy();
    }
    expect(await usdt(user.id)).toBe('9000000');
    const transfers = await ctx.db.query('SELECT 1 FROM transfers WHERE sender_id = $1', [user.id]);
    expect(transfers).toHaveLength(1);
    // A bad signature spent no nonce: the same nonce, rightly signed, goes through.
    const again = await signed({
      key,
      path: '/api/transfer',
      body: transferBody,
      nonce: 'nonce-after-bad',
      signedBody: '{}',
      headers: { 'idempotency-key': 'bot-transfer-8' },
    });
    expect(again.json().code).toBe('api_key_signature');
    const right = await signed({ key, path: '/api/transfer', body: transferBody, nonce: 'nonce-after-bad', headers: { 'idempotency-key': 'bot-transfer-8' } });
    expect(right.statusCode, right.body).toBe(200);
    expect(await usdt(user.id)).toBe('8000000');
  });

  it('a key with the transfer scope sends without the second factor; a session still needs it', async () => {
    const { user, key } = await newKey(['transfer'], { ips: ['198.51.100.20'] });
    const bySession = await call(ctx.app, '/api/transfer', { token: user.token, payload: transferBody, headers: { 'idempotency-key': 'session-t-1' } });
    expect(bySession.json().code).toBe('second_factor_required');
    const byKey = await signed({ key, path: '/api/transfer', body: transferBody, headers: { 'idempotency-key': 'bot-transfer-a' } });
    expect(byKey.statusCode, byKey.body).toBe(200);
    // A cookie that came along changes nothing: the request is the key's.
    const both = await signed({
      key,
      path: '/api/transfer',
      body: transferBody,
      headers: { 'idempotency-key': 'bot-transfer-b', authorization: 'Bearer nonsense' },
    });
    expect(both.statusCode, both.body).toBe(200);
    expect(await usdt(user.id)).toBe('8000000');
  });

  it('revoked, expired, blocked or rate-limited keys are refused; another account cannot revoke a key', async () => {
    const { user, key } = await newKey(['read'], { expires_on: '2026-12-01' });
    expect((await signed({ key, path: '/api/wallets' })).statusCode).toBe(200);
    const stranger = await createFixtureUser(ctx.db);
    const foreign = await call(ctx.app, `/api/security/api_keys/${key.id}/revoke`, { token: stranger.token, locale: 'en', payload: {} });
    expect([foreign.statusCode, foreign.json().code]).toEqual([404, 'api_key_not_found']);
    const malformed = await call(ctx.app, '/api/security/api_keys/nonsense/revoke', { token: stranger.token, locale: 'en', payload: {} });
    expect(malformed.json()).toEqual(foreign.json());

    await ctx.db.query(
      `INSERT INTO rate_limits (key, window_start, window_seconds, hits) VALUES ($1, now(), 60, $2) ON CONFLICT (key) DO UPDATE SET hits = $2, window_start = now()`,
      [
        `api_key:${(await ctx.db.query<{ id: string }>('SELECT id::text AS id FROM api_keys WHERE public_id = $1', [key.id]))[0]!.id}`,
        API_KEY_REQUESTS_PER_MINUTE,
      ],
    );
    const limited = await signed({ key, path: '/api/wallets' });
    expect([limited.statusCode, limited.json().code]).toEqual([429, 'rate_limited']);
    await ctx.db.query(`DELETE FROM rate_limits WHERE key LIKE 'api_key:%'`);

    // It works through its last day (2026-12-01, UTC), not after.
    clock = new Date('2026-12-01T23:59:00Z');
    expect((await signed({ key, path: '/api/wallets' })).statusCode).toBe(200);
    clock = new Date('2026-12-02T00:00:00Z');
    expect((await signed({ key, path: '/api/wallets' })).json().code).toBe('api_key_invalid');
    expect((await call(ctx.app, '/api/security/api_keys', { token: user.token })).json().keys).toEqual([]);

    const live = await newKey(['read']);
    await ctx.db.query('UPDATE users SET sign_in_blocked_at = now() WHERE id = $1', [live.user.id]);
    expect((await signed({ key: live.key, path: '/api/wallets' })).json().code).toBe('api_key_invalid');
    await ctx.db.query('UPDATE users SET sign_in_blocked_at = NULL WHERE id = $1', [live.user.id]);
    const revoked = await call(ctx.app, `/api/security/api_keys/${live.key.id}/revoke`, { token: live.user.token, locale: 'en', payload: {} });
    expect(revoked.json()).toMatchObject({ status: 'ok', keys: [], message: 'The key is revoked: requests signed with it are refused from now on.' });
    expect((await signed({ key: live.key, path: '/api/wallets' })).json().code).toBe('api_key_invalid');
  });

  it(`an account holds at most ${API_KEYS_MAX} live keys`, async () => {
    const { user, key } = await newKey(['read']);
    await ctx.db.query(
      `INSERT INTO api_keys (public_id, user_id, label, secret_sealed, scopes, created_at)
       SELECT 'ok_' || lpad(i::text, 20, 'a'), user_id, label, secret_sealed, scopes, created_at FROM api_keys, generate_series(2, $2) i WHERE public_id = $1`,
      [key.id, API_KEYS_MAX],
    );
    const secret = (await ctx.db.query<{ secret: string }>('SELECT secret FROM user_totp WHERE user_id = $1', [user.id]))[0]!.secret;
    tick();
    const full = await create(user, { label: 'one more', scopes: ['read'], code: totpCode(secret, clock.getTime()) });
    expect([full.statusCode, full.json().code]).toEqual([409, 'api_keys_full']);
    expect(full.json().message).toBe(`An account can hold at most ${API_KEYS_MAX} API keys. Revoke one first.`);
    await call(ctx.app, `/api/security/api_keys/${key.id}/revoke`, { token: user.token, payload: {} });
    tick();
    const freed = await create(user, { label: 'one more', scopes: ['read'], code: totpCode(secret, clock.getTime()) });
    expect(freed.statusCode, freed.body).toBe(200);
  });

  it('whatever ends every session ends every key; 2FA off too', async () => {
    const { user: a, key: keyA } = await newKey(['read']);
    const { user: b, key: keyB } = await newKey(['read']);
    await revokeAllSessions(ctx.db, a.id);
    expect((await signed({ key: keyA, path: '/api/wallets' })).json().code).toBe('api_key_invalid');
    expect((await signed({ key: keyB, path: '/api/wallets' })).statusCode).toBe(200);
    const secret = (await ctx.db.query<{ secret: string }>('SELECT secret FROM user_totp WHERE user_id = $1', [b.id]))[0]!.secret;
    tick();
    const off = await call(ctx.app, '/api/security/totp/disable', { token: b.token, locale: 'en', payload: { code: totpCode(secret, clock.getTime()) } });
    expect(off.statusCode, off.body).toBe(200);
    expect((await signed({ key: keyB, path: '/api/wallets' })).json().code).toBe('api_key_invalid');
  });
});
