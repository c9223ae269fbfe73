import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { statement, type Db } from '../../src/db/index.ts';
import { ENGINES, openTestDb } from '../helpers.ts';

// Both engines must hand the same values to the code above them: PGlite's queries take their
// own path (src/db/pglite.ts), PostgreSQL's go through node-postgres.
describe.each(ENGINES)('Db on %s', (engine) => {
  let db: Db;
  let drop: () => Promise<void>;

  beforeAll(async () => {
    ({ db, drop } = await openTestDb(engine));
    await db.exec(`CREATE TABLE db_values (id serial PRIMARY KEY, big bigint, amount numeric(38, 0), flag boolean, doc jsonb,
      raw bytea, tags text[], at timestamptz, note text)`);
  });
  afterAll(async () => drop());

  it('sends and reads every kind of value the same way', async () => {
    const at = new Date('2026-11-21T10:20:30.456Z');
    const [row] = await db.query(
      `INSERT INTO db_values (big, amount, flag, doc, raw, tags, at, note) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
       RETURNING id, big, amount, flag, doc, raw, tags, at, note, 7::int AS small`,
      [9007199254740993n, '123456789012345678901234567890', true, { a: [1, 'x'] }, Buffer.from([0, 255, 16]), ['a', 'b c'], at, null],
    );
    expect(row).toEqual({
      id: 1,
      big: '9007199254740993',
      amount: '123456789012345678901234567890',
      flag: true,
      doc: { a: [1, 'x'] },
      raw: Buffer.from([0, 255, 16]),
      tags: ['a', 'b c'],
      at,
      note: null,
      small: 7,
    });
  });

  it('runs a named statement again and again, also inside a transaction', async () => {
    const byId = statement('db_test_by_id', 'SELECT note FROM db_values WHERE id = $1');
    await db.query('INSERT INTO db_values (note) VALUES ($1), ($2)', ['first', 'second']);
    expect(await db.query(byId, [2])).toEqual([{ note: 'first' }]);
    expect(await db.query(byId, [3])).toEqual([{ note: 'second' }]);
    const inside = await db.transaction(async (tx) => tx.query(byId, [2]));
    expect(inside).toEqual([{ note: 'first' }]);
  });

  it('raises the server error with its code and detail, and the connection goes on', async () => {
    const failure = await db.query(`SELECT ledger_check_nothing($1)`, [1]).catch((err: unknown) => err);
    expect(failure).toMatchObject({ code: '42883' });
    const refused = await db.query(`DO $$ BEGIN RAISE EXCEPTION 'refused' USING ERRCODE = 'OB000', DETAIL = '{"x":1}'; END $$`).catch((err: unknown) => err);
    expect(refused).toMatchObject({ code: 'OB000', message: 'refused', detail: '{"x":1}' });
    expect(await db.query('SELECT 1 AS one')).toEqual([{ one: 1 }]);
  });

  it('keeps a transaction to itself: a query from outside never sees its uncommitted rows', async () => {
    let inserted!: () => void;
    const insertedYet = new Promise<void>((resolve) => (inserted = resolve));
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const transaction = db.transaction(async (tx) => {
      await tx.query('INSERT INTO db_values (note) VALUES ($1)', ['in transaction']);
      inserted();
      await held;
      throw new Error('roll back');
    });
    await insertedYet;
    const outside = db.query<{ n: number }>(`SELECT count(*)::int AS n FROM db_values WHERE note = 'in transaction'`).then((rows) => rows[0]!.n);
    // PostgreSQL answers from another connection while the transaction is held, without the
    // uncommitted row: awaited, no timer. PGlite is one session: the outside query waits for the
    // transaction to end, and a wait that has not ended can only be shown by looking a while.
    const stillWaiting = engine === 'postgres' ? new Promise<never>(() => {}) : new Promise<'waiting'>((resolve) => setTimeout(resolve, 50, 'waiting'));
    expect(await Promise.race([outside, stillWaiting])).toBe(engine === 'postgres' ? 0 : 'waiting');
    release();
    await expect(transaction).rejects.toThrow('roll back');
    expect(await outside).toBe(0);
  });
});
