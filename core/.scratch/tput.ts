import { openTestDb } from '../test/helpers.ts';
import { migrate } from '../src/db/migrate.ts';
import { seedDemoData } from '../src/seed/demo.ts';
import { createFixtureUser, fund } from '../src/domains/ledger/fixtures.ts';
import { makeTransfer } from '../src/domains/transfer/service.ts';
const engine = (process.argv[2] ?? 'postgres') as 'postgres' | 'pglite';
const { db, drop } = await openTestDb(engine, 16);
await migrate(db); await seedDemoData(db, { demoAccount: false });
const users = [] as Awaited<ReturnType<typeof createFixtureUser>>[];
for (let i = 0; i < 50; i++) { const u = await createFixtureUser(db); await fund(db, u.id, 'USDT', 10n ** 12n); users.push(u); }
let n = 0; const N = 3000; const t0 = Date.now();
await Promise.all(Array.from({ length: 16 }, async (_, w) => {
  while (n < N) { const i = n++; const a = users[i % 50]!; const b = users[(i * 7 + 3) % 50]!; if (a === b) continue;
    await makeTransfer(db, a.id, `k-${i}`, { account_id: b.accountId, currency: 'USDT', amount: '1' }); }
}));
console.log(engine, 'transfers/s', (N / ((Date.now() - t0) / 1000)).toFixed(0));
const t1 = Date.now(); await Promise.all(Array.from({ length: 16 }, async () => { for (let i = 0; i < 200; i++) await db.query('SELECT 1'); }));
console.log('select1/s', (3200 / ((Date.now() - t1) / 1000)).toFixed(0));
await drop();
