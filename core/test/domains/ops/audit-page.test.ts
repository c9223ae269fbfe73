import { describe, expect, it } from 'vitest';
import { ENGINES } from '../../helpers.ts';
import { call } from '../../auth-helpers.ts';
import { asOperator, operatorWith, useOpsApp } from '../../ops-helpers.ts';
import { verifyAuditLines, type TAuditLine } from '../../../src/domains/audit/service.ts';

describe.each(ENGINES)("the back office's audit page on %s", (engine) => {
  const ctx = useOpsApp(engine);
  const clockOf = ctx.clock;

  it('lists newest first with paging, and exports a period as JSON Lines that verify offline; the export is audited', async () => {
    const admin = await operatorWith(ctx, clockOf, ['admin']);
    const newest = (await call(ctx.app, '/api/ops/audit?order=desc', asOperator(admin.token))).json().rows as TAuditLine[];
    expect(newest.length).toBeGreaterThan(1);
    expect(newest[0]!.id).toBeGreaterThan(newest[1]!.id);
    const older = (await call(ctx.app, `/api/ops/audit?order=desc&before=${newest[0]!.id}`, asOperator(admin.token))).json().rows as TAuditLine[];
    expect(older[0]!.id).toBe(newest[1]!.id);

    const today = new Date().toISOString().slice(0, 10);
    const tomorrow = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);
    const exported = await call(ctx.app, `/api/ops/audit/export?from=${today}&to=${tomorrow}`, asOperator(admin.token));
    expect(exported.statusCode, exported.body).toBe(200);
    expect(exported.headers['content-type']).toMatch(/^application\/jsonl/);
    expect(exported.headers['content-disposition']).toBe(`attachment; filename="audit-${today}-${tomorrow}.jsonl"`);
    const lines = exported.body
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as TAuditLine);
    expect(lines.length).toBeGreaterThan(1);
    expect(verifyAuditLines(lines)).toMatchObject({ intact: true, rows: lines.length });
    const forged = lines.map((line, i) => (i === 1 ? { ...line, actor: 'cli:someone-else' } : line));
    expect(verifyAuditLines(forged)).toMatchObject({ intact: false, broken_at: lines[1]!.id });

    const [row] = await ctx.db.query<{ outcome: string }>(`SELECT outcome FROM operator_audit WHERE action = 'audit.export' ORDER BY id DESC LIMIT 1`);
    expect(row).toEqual({ outcome: 'viewed' });
    const bad = await call(ctx.app, '/api/ops/audit/export?from=yesterday&to=2026-11-28', asOperator(admin.token));
    expect(bad.statusCode).toBe(400);
  });
});
