import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { build, ENGINES } from '../../helpers.ts';
import { verifyAuditChain, writeAudit, type TAuditLine } from '../../../src/domains/audit/service.ts';
import { AUDIT_COMMANDS } from '../../../src/cli/audit.ts';

/** A change behind the append-only trigger, as a superuser could make it. */
async function bypassTrigger(db: { query(sql: string, params?: unknown[]): Promise<unknown> }, sql: string, params: unknown[] = []) {
  await db.query('ALTER TABLE operator_audit DISABLE TRIGGER operator_audit_append_only');
  try {
    await db.query(sql, params);
  } finally {
    await db.query('ALTER TABLE operator_audit ENABLE TRIGGER operator_audit_append_only');
  }
}

describe.each(ENGINES)('the audit chain on %s', (engine) => {
  let ctx: Awaited<ReturnType<typeof build>>;
  let dir: string;

  beforeAll(async () => {
    ctx = await build(engine);
    dir = await mkdtemp(path.join(tmpdir(), 'obmen-audit-'));
  });
  afterAll(async () => {
    await ctx?.close();
    await rm(dir, { recursive: true, force: true });
  });

  const lastIds = async (n: number) =>
    (await ctx.db.query<{ id: number }>('SELECT id::int AS id FROM operator_audit ORDER BY id DESC LIMIT $1', [n])).map((row) => row.id).reverse();

  it('links every row to the one before; an export verifies offline, and a changed line in it is found', async () => {
    await writeAudit(ctx.db, { actor: 'ann', action: 'verification.show', subject: 'x-1', outcome: 'viewed', requestId: 'r-1', ip: '203.0.113.5' });
    await writeAudit(ctx.db, {
      actor: 'ann',
      action: 'customers.block',
      subject: 'account:1',
      reasonCode: 'fraud',
      reasonText: 'chargebacks',
      before: { blocked: false },
      after: { blocked: true },
    });
    await writeAudit(ctx.db, { actor: 'bob', action: 'kyc.view_documents', subject: 'account:1', outcome: 'denied' });
    const report = await verifyAuditChain(ctx.db);
    expect(report).toMatchObject({ intact: true });
    const [head] = await ctx.db.query<{ hash: string }>(`SELECT encode(hash, 'hex') AS hash FROM operator_audit ORDER BY id DESC LIMIT 1`);
    expect(report.head).toBe(head!.hash);

    const file = path.join(dir, 'audit.jsonl');
    expect(await AUDIT_COMMANDS['audit:export']!(ctx.db, [file])).toMatchObject({ rows: report.rows });
    expect(await AUDIT_COMMANDS['audit:verify']!(ctx.db, [file])).toMatchObject({ intact: true, rows: report.rows, head: report.head });

    // The same export, one line's shown actor changed: the fields no longer match what was hashed.
    const lines = (await readFile(file, 'utf8')).trim().split('\n');
    const forged = JSON.parse(lines[1]!) as TAuditLine;
    const edited = path.join(dir, 'edited.jsonl');
    await writeFile(edited, [lines[0], JSON.stringify({ ...forged, actor: 'mallory' }), ...lines.slice(2)].join('\n'));
    expect(await AUDIT_COMMANDS['audit:verify']!(ctx.db, [edited])).toMatchObject({ intact: false, broken_at: forged.id });

    // A line removed from the export: the next one no longer links.
    const cut = path.join(dir, 'cut.jsonl');
    await writeFile(cut, [lines[0], ...lines.slice(2)].join('\n'));
    expect(await AUDIT_COMMANDS['audit:verify']!(ctx.db, [cut])).toMatchObject({ intact: false, broken_at: (JSON.parse(lines[2]!) as TAuditLine).id });
  });

  it('refuses changes; a row edited or removed behind the trigger breaks the chain at that row', async () => {
    await expect(ctx.db.query(`UPDATE operator_audit SET action = 'nothing'`)).rejects.toThrow(/append-only/);
    await expect(ctx.db.query('DELETE FROM operator_audit')).rejects.toThrow(/append-only/);
    for (const action of ['a.one', 'a.two', 'a.three']) await writeAudit(ctx.db, { actor: 'cli:dana', action });
    const [, two, three] = await lastIds(3);

    await bypassTrigger(ctx.db, `UPDATE operator_audit SET subject = 'someone else' WHERE id = $1`, [two]);
    expect(await verifyAuditChain(ctx.db)).toMatchObject({ intact: false, broken_at: two, problem: expect.stringMatching(/changed/) });

    await bypassTrigger(ctx.db, 'DELETE FROM operator_audit WHERE id = $1', [two]);
    expect(await verifyAuditChain(ctx.db)).toMatchObject({ intact: false, broken_at: three, problem: expect.stringMatching(/removed/) });
  });
});

describe.runIf(ENGINES.includes('postgres'))('the audit chain under concurrent writers (PostgreSQL)', () => {
  let ctx: Awaited<ReturnType<typeof build>>;
  beforeAll(async () => {
    ctx = await build('postgres');
  });
  afterAll(async () => {
    await ctx?.close();
  });

  it('stays one chain in id order when many transactions write at once', async () => {
    await Promise.all(
      Array.from({ length: 40 }, (_, i) => ctx.db.transaction((tx) => writeAudit(tx, { actor: `op-${i % 4}`, action: 'concurrent.write', details: { i } }))),
    );
    const report = await verifyAuditChain(ctx.db);
    expect(report.intact).toBe(true);
    const [count] = await ctx.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM operator_audit WHERE action = 'concurrent.write'`);
    expect(count!.n).toBe(40);
  });
});
