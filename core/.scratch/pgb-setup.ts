import pg from 'pg';
import { openDb } from '/work/main/core/src/db/index.ts';
import { migrate } from '/work/main/core/src/db/migrate.ts';
import { seedDemoData } from '/work/main/core/src/seed/demo.ts';
import { fund } from '/work/main/core/src/domains/ledger/fixtures.ts';
const name = process.argv[2]!;
const admin = new pg.Client({ connectionString: 'postgres://postgres@127.0.0.1:5432/test' });
await admin.connect(); await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`); await admin.query(`CREATE DATABASE ${name}`); await admin.end();
const db = await openDb({ DATABASE_URL: `postgres://postgres@127.0.0.1:5432/${name}`, DATA_DIR: '', DB_POOL_SIZE: 4 }, { error() {} });
await migrate(db); await seedDemoData(db, { demoAccount: false });
for (let i = 1; i <= 100; i++) {
  const [u] = await db.query<{ id: string }>(`INSERT INTO users (account_id, email) VALUES ($1, $2) RETURNING id::text AS id`, [20000000 + i, `u${i}@x.y`]);
  await fund(db, u!.id, 'USDT', 10n ** 15n);
}
await db.close();
