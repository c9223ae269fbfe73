import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENGINES, build } from '../../helpers.ts';
import { createFixtureUser, fund, type TFixtureUser } from '../../fixtures.ts';
import { makeTransfer } from '../../../src/domains/transfer/service.ts';
import { createQuote, executeExchange } from '../../../src/domains/exchange/service.ts';
import { TableRateSource } from '../../../src/domains/rates/source.ts';
import { csvCell } from '../../../src/domains/history/service.ts';

describe.each(ENGINES)('history on %s', (engine) => {
  let ctx: Awaited<ReturnType<typeof build>>;
  let alice: TFixtureUser;
  let bob: TFixtureUser;
  const get = (user: TFixtureUser | null, url: string) =>
    ctx.app.inject({ url, headers: { ...(user ? { authorization: `Bearer ${user.token}` } : {}), 'x-obmen-locale': 'en' } });

  beforeAll(async () => {
    ctx = await build(engine);
    alice = await createFixtureUser(ctx.db, { firstName: 'Alice', lastName: 'Archer' });
    bob = await createFixtureUser(ctx.db, { firstName: 'Bob' });
    await fund(ctx.db, alice.id, 'USDT', 1_000_000_000n);
    await fund(ctx.db, alice.id, 'BTC', 10_000_000n);
    const deps = { db: ctx.db, rates: new TableRateSource(ctx.db) };
    // Five transfers out (two in BTC), one in; three exchanges: one per day going back.
    for (let i = 0; i < 5; i++) {
      const currency = i < 3 ? 'USDT' : 'BTC';
      const amount = i < 3 ? `${i + 1}` : '0.001';
      await makeTransfer(ctx.db, alice.id, `h-out-${i}`, { account_id: bob.accountId, currency, amount, comment: i === 0 ? '=SUM(A1), "quoted"' : `#${i}` });
    }
    await makeTransfer(ctx.db, bob.id, 'h-in-0', { account_id: alice.accountId, currency: 'USDT', amount: '0.5' });
    for (const [i, [src, dst, amount]] of [
      ['USDT', 'BTC', '10'],
      ['BTC', 'USDT', '0.001'],
      ['USDT', 'ETH', '20'],
    ].entries()) {
      const quote = await createQuote(deps, alice.id, { src: src!, dst: dst!, amount });
      await executeExchange(deps, alice.id, `h-x-${i}`, { src: src!, dst: dst! }, quote.token!);
    }
    // Spread them over days: the n-th newest row is n days old.
    await ctx.db.query(
      `UPDATE transfers SET created_at = now() - (id - (SELECT min(id) FROM transfers)) * interval '0 day' - ((SELECT max(id) FROM transfers) - id) * interval '1 day'`,
    );
    await ctx.db.query(`UPDATE exchanges SET created_at = now() - ((SELECT max(id) FROM exchanges) - id) * interval '1 day'`);
  });
  afterAll(() => ctx.close());

  it('pages transfers newest first, both directions, with masked counterparties', async () => {
    const first = (await get(alice, '/api/transfer/history?per_page=4')).json();
    expect(first).toMatchObject({ status: 'ok', page: 1, per_page: 4, total: 6, pages: 2 });
    expect(first.items[0]).toMatchObject({ direction: 'in', account_id: bob.accountId, name: 'Bob', currency: 'USDT', amount: '0.500000', fee: '0.000000' });
    expect(first.items[1]).toMatchObject({ direction: 'out', currency: 'BTC', amount: '0.00100000', comment: '#4' });
    const second = (await get(alice, '/api/transfer/history?per_page=4&page=2')).json();
    expect(second.items.map((i: { comment: string }) => i.comment)).toEqual(['#1', '=SUM(A1), "quoted"']);
    const bobs = (await get(bob, '/api/transfer/history')).json();
    expect(bobs.total).toBe(6);
    expect(bobs.items.find((i: { direction: string }) => i.direction === 'in')).toMatchObject({ name: 'Alice A.', account_id: alice.accountId });
  });

  it('filters transfers by currency, direction, status and dates', async () => {
    expect((await get(alice, '/api/transfer/history?currency=btc')).json().total).toBe(2);
    expect((await get(alice, '/api/transfer/history?direction=in')).json().total).toBe(1);
    expect((await get(alice, '/api/transfer/history?direction=out&currency=USDT')).json().total).toBe(3);
    expect((await get(alice, '/api/transfer/history?status=failed')).json().total).toBe(0);
    const day = (offset: number) => new Date(Date.now() - offset * 86_400_000).toISOString().slice(0, 10);
    // the newest two rows are 0 and 1 days old
    expect((await get(alice, `/api/transfer/history?from=${day(1)}`)).json().total).toBe(2);
    expect((await get(alice, `/api/transfer/history?from=${day(3)}&to=${day(2)}`)).json().total).toBe(2);
    expect((await get(alice, `/api/transfer/history?to=${day(10)}`)).json().total).toBe(0);
    const bad = await get(alice, '/api/transfer/history?from=2026-02-30');
    expect(bad.statusCode).toBe(400);
    expect(bad.json().fields).toEqual({ from: expect.any(String) });
    expect((await get(alice, '/api/transfer/history?per_page=1000')).statusCode).toBe(400);
  });

  it('pages and filters exchanges', async () => {
    const all = (await get(alice, '/api/exchange/history')).json();
    expect(all.total).toBe(3);
    expect(all.items.map((i: { src: string; dst: string }) => `${i.src}/${i.dst}`)).toEqual(['USDT/ETH', 'BTC/USDT', 'USDT/BTC']);
    expect(all.items[0]).toMatchObject({ amount: '20.000000', status: 'completed', error: null, batch_id: null });
    expect((await get(alice, '/api/exchange/history?currency=ETH')).json().total).toBe(1);
    expect((await get(alice, '/api/exchange/history?currency=BTC&per_page=1&page=2')).json()).toMatchObject({
      total: 2,
      pages: 2,
      items: [expect.objectContaining({ src: 'USDT', dst: 'BTC' })],
    });
    expect((await get(alice, '/api/exchange/history?status=failed')).json().total).toBe(0);
    expect((await get(bob, '/api/exchange/history')).json().total).toBe(0);
  });

  it('exports the filtered rows as CSV, spreadsheet-safe', async () => {
    const res = await get(alice, '/api/transfer/history?format=csv&direction=out&currency=USDT');
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(res.headers['content-disposition']).toBe('attachment; filename="transfer-history.csv"');
    const lines = res.body.trimEnd().split('\r\n');
    expect(lines[0]).toBe('id,created_at,direction,account_id,name,currency,amount,fee,status,comment');
    expect(lines).toHaveLength(4);
    expect(lines[3]).toMatch(
      new RegExp(`^\\d+,\\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z,out,${bob.accountId},Bob,USDT,1.000000,0.000000,completed,"'=SUM\\(A1\\), ""quoted"""$`),
    );
    const exchanges = await get(alice, '/api/exchange/history?format=csv');
    expect(exchanges.body.split('\r\n')[0]).toBe('id,created_at,src,dst,amount,amount_receive,fee,rate,status,batch_id,error');
    expect(exchanges.body.trimEnd().split('\r\n')).toHaveLength(4);
    expect(csvCell('-5.00')).toBe('-5.00');
    expect(csvCell('@cmd')).toBe("'@cmd");
    expect(csvCell(null)).toBe('');
  });

  it('needs a signed-in user', async () => {
    expect((await get(null, '/api/transfer/history')).statusCode).toBe(401);
    expect((await get(null, '/api/exchange/history?format=csv')).statusCode).toBe(401);
  });
});
