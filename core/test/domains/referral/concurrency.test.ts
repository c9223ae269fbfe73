import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { build } from '../../helpers.ts';
import { call } from '../../auth-helpers.ts';
import { createFixtureUser, fund, type TFixtureUser } from '../../fixtures.ts';
import { checkLedger } from '../../../src/domains/ledger/invariants.ts';
import { setRate } from '../../../src/domains/rates/service.ts';
import { bindReferee, mainCode, setReferralTerms, settleReferralBonuses } from '../../../src/domains/referral/service.ts';

/*
 * The referral programme on PostgreSQL (PGlite has one connection: row locks prove nothing there): fifty
 * concurrent fee events of one referrer's referees give exactly fifty accruals, and the
 * settlement job run by two cores at once pays each bonus once.
 */
describe.skipIf(!process.env.TEST_DATABASE_URL)('referral accruals and settlement under concurrency (PostgreSQL)', () => {
  let ctx: Awaited<ReturnType<typeof build>>;
  let anna: TFixtureUser;
  const referees: TFixtureUser[] = [];
  let seq = 0;
  const form = { 'content-type': 'application/x-www-form-urlencoded' };

  beforeAll(async () => {
    ctx = await build('postgres');
    anna = await createFixtureUser(ctx.db);
    const code = await mainCode(ctx.db, anna.id);
    await setRate(ctx.db, { src: 'USDT', dst: 'BTC', rate: '0.00001', spread: '0', fee_percent: '0.01', fee_fixed: '0', min: '1', max: '10000' }, new Date());
    await setReferralTerms(ctx.db, { share: '0.2', currency: 'USDT', hold: '0', min: '0' });
    for (let i = 0; i < 10; i++) {
      const user = await createFixtureUser(ctx.db);
      expect(await bindReferee(ctx.db, user.id, code)).toBe(true);
      await fund(ctx.db, user.id, 'USDT', 1_000_000_000n);
      referees.push(user);
    }
  });
  afterAll(() => ctx.close());

  const quote = async (user: TFixtureUser) =>
    (await call(ctx.app, '/api/exchange/check', { token: user.token, payload: 'src=USDT&dst=BTC&amount=10', headers: form })).json().quote.token as string;
  const accruals = async () =>
    (
      await ctx.db.query<{ n: number; total: string }>(
        'SELECT count(*)::int AS n, coalesce(sum(amount), 0)::text AS total FROM referral_accruals WHERE referrer_id = $1',
        [anna.id],
      )
    )[0]!;
  const annaUsdt = async () =>
    BigInt(
      (
        await ctx.db.query<{ b: string }>(`SELECT coalesce(sum(balance), 0)::text AS b FROM ledger_accounts WHERE user_id = $1 AND currency = 'USDT'`, [
          anna.id,
        ])
      )[0]!.b,
    );

  /** Fifty exchanges at once, five per referee: every one answered, every fee accrued once. */
  const fiftyAtOnce = async () => {
    const tokens: Array<[TFixtureUser, string]> = [];
    for (const user of referees) for (let i = 0; i < 5; i++) tokens.push([user, await quote(user)]);
    const answers = await Promise.all(
      tokens.map(([user, token]) =>
        call(ctx.app, '/api/exchange/USDT/BTC', {
          token: user.token,
          payload: `quote=${token}`,
          headers: { ...form, 'idempotency-key': `referral-conc-${++seq}` },
        }),
      ),
    );
    expect(answers.map((res) => res.statusCode)).toEqual(Array(50).fill(200));
  };

  it('50 concurrent fee events for one referrer give exactly 50 accruals', async () => {
    await fiftyAtOnce();
    const { n, total } = await accruals();
    expect(n).toBe(50);
    const [{ fees } = { fees: '0' }] = await ctx.db.query<{ fees: string }>(
      `SELECT sum(floor(fee * 0.2))::text AS fees FROM exchanges WHERE user_id = ANY ($1::bigint[])`,
      [referees.map((user) => user.id)],
    );
    expect(total).toBe(fees);
    expect((await checkLedger(ctx.db)).violations).toEqual([]);
  });

  it('the settlement job run by two cores at once settles once', async () => {
    for (let round = 0; round < 3; round++) {
      if (round > 0) await fiftyAtOnce();
      const before = await annaUsdt();
      const { total: accrued } = (
        await ctx.db.query<{ total: string }>(
          'SELECT coalesce(sum(amount), 0)::text AS total FROM referral_accruals WHERE referrer_id = $1 AND settlement_id IS NULL',
          [anna.id],
        )
      )[0]!;
      const now = new Date(Date.now() + 1000);
      const runs = await Promise.all([
        settleReferralBonuses({ db: ctx.db, publicUrl: 'http://x' }, now),
        settleReferralBonuses({ db: ctx.db, publicUrl: 'http://x' }, now),
      ]);
      const settled = runs.flat();
      expect(settled).toHaveLength(1);
      expect(settled[0]!.amount).toBe(accrued);
      expect(await annaUsdt()).toBe(before + BigInt(accrued));
    }
    const [{ settlements, unsettled }] = (await ctx.db.query<{ settlements: number; unsettled: number }>(
      `SELECT (SELECT count(*) FROM referral_settlements WHERE referrer_id = $1)::int AS settlements,
              (SELECT count(*) FROM referral_accruals WHERE referrer_id = $1 AND settlement_id IS NULL)::int AS unsettled`,
      [anna.id],
    )) as [{ settlements: number; unsettled: number }];
    expect({ settlements, unsettled }).toEqual({ settlements: 3, unsettled: 0 });
    expect((await checkLedger(ctx.db)).violations).toEqual([]);
  });
});
