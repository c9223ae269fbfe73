import { openTestDb } from '../test/helpers.ts';
import { migrate } from '../src/db/migrate.ts';
import { seedDemoData } from '../src/seed/demo.ts';
import { createFixtureUser, fund } from '../src/domains/ledger/fixtures.ts';
import { createQuote, executeExchange } from '../src/domains/exchange/service.ts';
import { TableRateSource } from '../src/domains/rates/source.ts';
const { db, drop } = await openTestDb('postgres', 16);
await migrate(db); await seedDemoData(db, { demoAccount: false });
const deps = { db, rates: new TableRateSource(db) };
const users = [] as Awaited<ReturnType<typeof createFixtureUser>>[];
for (let i = 0; i < 50; i++) { const u = await createFixtureUser(db); await fund(db, u.id, 'USDT', 10n ** 12n); await fund(db, u.id, 'BTC', 10n ** 8n); users.push(u); }
let n = 0; const N = 1000; let tq = 0, tx = 0; const t0 = Date.now();
await Promise.all(Array.from({ length: 16 }, async () => {
  while (n < N) { const i = n++; const u = users[i % 50]!; const [src, dst] = i % 2 ? ['USDT', 'BTC'] : ['BTC', 'USDT'];
    const a = performance.now(); const q = await createQuote(deps, u.id, { src, dst, amount: src === 'USDT' ? '10' : '0.001' }); const b = performance.now();
    await executeExchange(deps, u.id, `x-${i}`, { src, dst }, q.token!); tq += b - a; tx += performance.now() - b; }
}));
console.log('exchanges/s', (N / ((Date.now() - t0) / 1000)).toFixed(0), 'avg quote ms', (tq / N).toFixed(1), 'avg exec ms', (tx / N).toFixed(1));
await drop();
