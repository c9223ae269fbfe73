import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { build, until } from '../../helpers.ts';
import { createFixtureUser, fund, type TFixtureUser } from '../../fixtures.ts';
import { checkLedger } from '../../../src/domains/ledger/invariants.ts';

/*
 * The BFF answers 504 when the core is slow, but the core's money call goes
 * on. Whatever happened, the client's retry with the same Idempotency-Key tells the truth: a
 * call that committed after the client gave up is replayed (idempotent-replayed: true), one
 * that did not (cut by the statement timeout) is applied by the retry, once.
 * A row lock held by another connection makes the call slow on purpose.
 */
const STATEMENT_TIMEOUT_MS = 3_000;

describe.skipIf(!process.env.TEST_DATABASE_URL)('a transfer whose client gave up mid-call (PostgreSQL)', () => {
  let ctx: Awaited<ReturnType<typeof build>>;
  let base: string;
  let alice: TFixtureUser;
  let bob: TFixtureUser;
  let holder: pg.Client;

  beforeAll(async () => {
    ctx = await build('postgres', { DB_STATEMENT_TIMEOUT_MS: String(STATEMENT_TIMEOUT_MS) });
    base = await ctx.app.listen({ host: '127.0.0.1', port: 0 });
    alice = await createFixtureUser(ctx.db);
    bob = await createFixtureUser(ctx.db);
    await fund(ctx.db, alice.id, 'USDT', 100_000_000n);
    const target = new URL(process.env.TEST_DATABASE_URL!);
    target.pathname = `/${(await ctx.db.query<{ db: string }>('SELECT current_database() AS db'))[0]!.db}`;
    holder = new pg.Client({ connectionString: target.href });
    await holder.connect();
  });
  afterAll(async () => {
    await holder.end();
    await ctx.close();
  });

  const transfer = (key: string, signal?: AbortSignal) =>
    fetch(`${base}/api/transfer`, {
      method: 'POST',
      headers: { authorization: `Bearer ${alice.token}`, 'content-type': 'application/json', 'idempotency-key': key, 'x-obmen-locale': 'en' },
      body: JSON.stringify({ account_id: String(bob.accountId), currency: 'USDT', amount: '1' }),
      ...(signal ? { signal } : {}),
    });
  const balance = async (user: TFixtureUser) =>
    (await ctx.db.query<{ b: string }>(`SELECT balance::text AS b FROM ledger_accounts WHERE user_id = $1 AND currency = 'USDT'`, [user.id]))[0]!.b;
  const stored = async (key: string) => (await ctx.db.query<{ n: number }>('SELECT count(*)::int AS n FROM transfers WHERE idempotency_key = $1', [key]))[0]!.n;
  const waitersOnLocks = async () =>
    (await ctx.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`))[0]!
      .n;
  /** Sends the transfer, waits until it is stuck on alice's locked account, then gives up on it. */
  const abandon = async (key: string) => {
    await holder.query('BEGIN');
    await holder.query(`SELECT id FROM ledger_accounts WHERE user_id = $1 FOR UPDATE`, [alice.id]);
    const gaveUp = new AbortController();
    const sent = transfer(key, gaveUp.signal).catch((err: unknown) => err);
    await until('the transfer to wait on the lock', async () => (await waitersOnLocks()) > 0);
    gaveUp.abort();
    expect(((await sent) as Error).name).toBe('AbortError');
  };

  it('committed after the client left: the retry replays it, nothing moves twice', async () => {
    const before = BigInt(await balance(alice));
    await abandon('gave-up-committed');
    await holder.query('COMMIT');
    await until('the abandoned transfer to commit', async () => (await stored('gave-up-committed')) === 1);

    const retry = await transfer('gave-up-committed');
    expect(retry.status).toBe(200);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(BigInt(await balance(alice))).toBe(before - 1_000_000n);
    expect(await stored('gave-up-committed')).toBe(1);
  });

  it('cut by the statement timeout: nothing was applied, the retry applies it once', async () => {
    const before = BigInt(await balance(alice));
    await abandon('gave-up-cancelled');
    // The server cancels the waiting statement and the core rolls the whole call back.
    await until('the statement timeout to cut the transfer', async () => (await waitersOnLocks()) === 0, STATEMENT_TIMEOUT_MS * 5);
    await holder.query('COMMIT');
    expect(await stored('gave-up-cancelled')).toBe(0);
    expect(BigInt(await balance(alice))).toBe(before);

    const retry = await transfer('gave-up-cancelled');
    expect(retry.status).toBe(200);
    expect(retry.headers.get('idempotent-replayed')).toBeNull();
    const again = await transfer('gave-up-cancelled');
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect((await again.json()).transfer.id).toBe((await retry.json()).transfer.id);
    expect(BigInt(await balance(alice))).toBe(before - 1_000_000n);
    expect((await checkLedger(ctx.db)).violations).toEqual([]);
  });

  it('a client that waits gets 503 database_unavailable with Retry-After when the statement times out', async () => {
    await holder.query('BEGIN');
    await holder.query(`SELECT id FROM ledger_accounts WHERE user_id = $1 FOR UPDATE`, [alice.id]);
    const res = await transfer('waited-for-timeout');
    await holder.query('COMMIT');
    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toBe('5');
    expect(await res.json()).toEqual({
      status: 'error',
      code: 'database_unavailable',
      message: 'The service is temporarily unavailable. Please try again in a few seconds.',
    });
    expect(await stored('waited-for-timeout')).toBe(0);
  });
});
