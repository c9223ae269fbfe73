import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { build, ENGINES } from '../helpers.ts';
import { createFixtureUser, fund } from '../fixtures.ts';
import { LEDGER_COMMANDS } from '../../src/cli/ledger.ts';
import { createOperator } from '../../src/domains/ops/service.ts';
import { checkLedger } from '../../src/domains/ledger/invariants.ts';
import { userBalance } from '../../src/domains/ledger/service.ts';
import type { TOpsRequest } from '@obmen/shared';

describe.each(ENGINES)('ledger commands on %s: proposals a second operator approves', (engine) => {
  let ctx: Awaited<ReturnType<typeof build>>;
  beforeAll(async () => {
    ctx = await build(engine);
  });
  afterAll(async () => {
    await ctx?.close();
  });

  const run = (name: string, ...args: string[]) => LEDGER_COMMANDS[name]!(ctx.db, args);
  /** An operator as operator:create makes one, enrolled (the link's password and TOTP skipped). */
  async function operator(roles: string[]): Promise<string> {
    const { email } = await createOperator(ctx.db, { email: `cli-${crypto.randomUUID()}@obmen.test`, roles, actor: 'cli:test', now: new Date() });
    await ctx.db.query("UPDATE operators SET password_hash = 'x', totp_secret = 'x', enrolled_at = now() WHERE email = $1", [email]);
    return email;
  }

  it('balance:credit proposes as --as, request:approve by another operator posts it, never by the proposer', async () => {
    const user = await createFixtureUser(ctx.db);
    const [ann, bob] = [await operator(['finance']), await operator(['finance'])];
    await expect(run('balance:credit', String(user.accountId), 'USDT', '12.5', 'ticket', '42')).rejects.toThrow(/usage: balance:credit/);
    await expect(run('balance:credit', String(user.accountId), 'USDT', '12.5', 'ticket', '--as', 'nobody@obmen.test')).rejects.toThrow(/no enrolled/);
    const proposed = (await run('balance:credit', String(user.accountId), 'usdt', '12.5', 'ticket', '42', '--as', ann, '--reason', 'refund')) as TOpsRequest;
    expect(proposed).toMatchObject({ action: 'ledger.adjust', state: 'pending', proposed_by: ann, reason_code: 'other', reason_text: 'ticket 42' });
    expect(proposed.params).toMatchObject({ currency: 'USDT', amount: '12.5', reason: 'refund', memo: 'ticket 42' });
    expect(await userBalance(ctx.db, user.id, 'USDT')).toBe(0n);
    await expect(run('request:approve', proposed.id, '--as', ann)).rejects.toMatchObject({ code: 'ops_four_eyes' });
    expect(await run('request:approve', proposed.id, '--as', bob)).toMatchObject({ state: 'approved', decided_by: bob });
    expect(await userBalance(ctx.db, user.id, 'USDT')).toBe(12_500_000n);
  });

  it('balance:debit beyond the balance is refused at approval and stays pending; ledger:reverse finds the customer; ledger:check is clean', async () => {
    const user = await createFixtureUser(ctx.db);
    await fund(ctx.db, user.id, 'USDT', 5_000_000n);
    const [ann, bob, support] = [await operator(['finance']), await operator(['finance']), await operator(['support'])];
    await expect(run('balance:debit', String(user.accountId), 'USDT', '1', 'x', '--as', support)).rejects.toMatchObject({ code: 'ops_forbidden' });
    const debit = (await run('balance:debit', String(user.accountId), 'USDT', '20', 'too', 'much', '--as', ann)) as TOpsRequest;
    await expect(run('request:approve', debit.id, '--as', bob)).rejects.toMatchObject({ code: 'insufficient_funds' });
    expect(await run('request:withdraw', debit.id, '--as', ann)).toMatchObject({ state: 'withdrawn' });

    const small = (await run('balance:debit', String(user.accountId), 'USDT', '2', 'fee', '--as', ann, '--reason', 'bank_fee')) as TOpsRequest;
    await run('request:approve', small.id, '--as', bob);
    expect(await userBalance(ctx.db, user.id, 'USDT')).toBe(3_000_000n);
    const [posted] = await ctx.db.query<{ id: string }>('SELECT id::text FROM ledger_transactions WHERE actor = $1', [`ops_request:${small.id}`]);
    const reversal = (await run('ledger:reverse', posted!.id, 'fee', 'waived', '--as', bob)) as TOpsRequest;
    expect(reversal.params).toMatchObject({ account_id: user.accountId, transaction_id: posted!.id });
    expect((await run('request:list', '--as', ann)) as { pending: TOpsRequest[] }).toMatchObject({
      pending: expect.arrayContaining([expect.objectContaining({ id: reversal.id })]),
    });
    await run('request:approve', reversal.id, '--as', ann);
    expect(await userBalance(ctx.db, user.id, 'USDT')).toBe(5_000_000n);
    expect(await checkLedger(ctx.db)).toMatchObject({ ok: true });
  });
});
