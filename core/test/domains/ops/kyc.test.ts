import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TVerificationState } from '@obmen/shared';
import { build, ENGINES } from '../../helpers.ts';
import { call, freshEmail, signUp } from '../../auth-helpers.ts';
import { multipart, png, type TPart } from '../../storage/upload-fixtures.ts';
import { SPECIMEN_DOCUMENT } from '../../fixtures.ts';
import { asOperator, operatorWith as operatorWithRoles, stepUpOperator, type TTestOperator } from '../../ops-helpers.ts';
import { verifyAuditChain } from '../../../src/domains/audit/service.ts';

const KEY = Buffer.alloc(32, 9).toString('base64');
const HOUR = 60 * 60_000;

describe.each(ENGINES)('identity review in the back office on %s', (engine) => {
  let ctx: Awaited<ReturnType<typeof build>>;
  let filesDir: string;
  let clock = new Date('2026-11-27T09:00:00Z');
  const tick = (ms: number) => {
    clock = new Date(clock.getTime() + ms);
  };
  const clockOf = { now: () => clock, tick };

  beforeAll(async () => {
    filesDir = await mkdtemp(path.join(tmpdir(), 'obmen-ops-kyc-'));
    ctx = await build(engine, { FILES_DIR: filesDir, DOCUMENT_KEY: KEY, KYC_REVIEW_TARGET_MS: String(24 * HOUR) }, { now: () => clock });
  });
  afterAll(async () => {
    await ctx?.close();
    await rm(filesDir, { recursive: true, force: true });
  });

  const operatorWith = (roles: string[]) => operatorWithRoles(ctx, clockOf, roles);
  const as = (op: TTestOperator, extra: Parameters<typeof call>[2] = {}) => ({ ...asOperator(op.token), ...extra });
  const state = (res: { json: () => unknown }) => (res.json() as { verification: TVerificationState }).verification;
  const auditRows = (actorLike: string, action: string) =>
    ctx.db.query<{ outcome: string; subject: string | null; reason_code: string | null; request_id: string | null }>(
      'SELECT outcome, subject, reason_code, request_id FROM operator_audit WHERE operator LIKE $1 AND action = $2 ORDER BY id',
      [`%${actorLike}`, action],
    );

  async function uploadSides(token: string, id: string, sides: string[]) {
    const parts: TPart[] = [{ name: 'id', value: id }];
    for (const [i, side] of sides.entries())
      parts.push({ name: `side${i}`, value: side }, { name: `file${i}`, filename: `${side}.png`, content: await png(200 + i * 10, 200), type: 'image/png' });
    const { payload, headers } = multipart(parts);
    const res = await ctx.app.inject({
      method: 'POST',
      url: '/api/verification/passport/upload',
      payload,
      headers: { ...headers, authorization: `Bearer ${token}` },
    });
    return res;
  }

  /** A customer whose passport waits for review (the same document number for all, unless given). */
  async function submitted(number = SPECIMEN_DOCUMENT.number) {
    const email = freshEmail('kyc');
    const token = await signUp(ctx.app, ctx.db, email, 'correct horse battery', 'en');
    const id = state(await call(ctx.app, '/api/verification/passport/new', { token })).current!.id;
    expect((await uploadSides(token, id, ['front', 'selfie'])).statusCode).toBe(200);
    const res = await call(ctx.app, '/api/verification/passport/submit', { token, payload: { id, ...SPECIMEN_DOCUMENT, number } });
    expect(res.statusCode, res.body).toBe(200);
    return { email, token, id };
  }

  const waitedFor = (id: string, ms: number) =>
    ctx.db.query('UPDATE verifications SET submitted_at = $2 WHERE public_id = $1', [id, new Date(clock.getTime() - ms)]);

  it('the queue: oldest first, waiting time against the target; a claim holds the item against a colleague', async () => {
    const first = await submitted('QQ1000001');
    const second = await submitted('QQ1000002');
    // The database stamps submissions on its own clock: put them where the test's clock says.
    await waitedFor(first.id, 26 * HOUR);
    await waitedFor(second.id, HOUR);
    const alice = await operatorWith(['compliance']);
    const bob = await operatorWith(['compliance']);
    const queue = await call(ctx.app, '/api/ops/kyc', as(alice));
    expect(queue.statusCode, queue.body).toBe(200);
    const items = queue.json().items as Array<{ id: string; waiting_ms: number; overdue: boolean; claim: unknown }>;
    const ids = items.map((item) => item.id);
    expect(ids.indexOf(first.id)).toBeLessThan(ids.indexOf(second.id));
    expect(queue.json().target_ms).toBe(24 * HOUR);
    expect(items.find((item) => item.id === first.id)).toMatchObject({ overdue: true, claim: null });
    expect(items.find((item) => item.id === second.id)).toMatchObject({ overdue: false });

    const claimed = await call(ctx.app, `/api/ops/kyc/${first.id}/claim`, as(alice, { method: 'POST' }));
    expect(claimed.json()).toMatchObject({ status: 'ok', claim: { email: alice.email, mine: true } });
    const taken = await call(ctx.app, `/api/ops/kyc/${first.id}/claim`, as(bob, { method: 'POST', locale: 'en' }));
    expect({ status: taken.statusCode, code: taken.json().code }).toEqual({ status: 409, code: 'ops_claimed' });
    // A decision by the colleague is refused too, and nothing changes.
    await stepUpOperator(ctx.app, clockOf, bob);
    const approve = await call(ctx.app, `/api/ops/kyc/${first.id}/approve`, as(bob, { method: 'POST' }));
    expect(approve.statusCode).toBe(409);
    expect(state(await call(ctx.app, '/api/verification', { token: first.token })).current!.status).toBe('submitted');
    const seen = (await call(ctx.app, '/api/ops/kyc', as(bob))).json().items.find((item: { id: string }) => item.id === first.id);
    expect(seen.claim).toMatchObject({ email: alice.email, mine: false });
    // Untouched for 15 minutes, the claim lapses and the colleague may take it.
    // (Bob stays active meanwhile: an operator's session ends after 15 idle minutes too.)
    tick(8 * 60_000);
    expect((await call(ctx.app, '/api/ops/me', as(bob))).statusCode).toBe(200);
    tick(8 * 60_000);
    expect((await call(ctx.app, `/api/ops/kyc/${first.id}/claim`, as(bob, { method: 'POST' }))).statusCode).toBe(200);
  });

  it('reject per document with a catalogue reason, the customer re-uploads only that one, approval raises the level and cards become orderable', async () => {
    const customer = await submitted('RR2000001');
    const op = await operatorWith(['compliance']);
    await stepUpOperator(ctx.app, clockOf, op);

    const review = await call(ctx.app, `/api/ops/kyc/${customer.id}`, as(op));
    expect(review.statusCode, review.body).toBe(200);
    expect(review.json().review).toMatchObject({
      document: { number: 'RR2000001', first_name: 'Anna', last_name: 'Schmidt', expiry_date: '2030-01-14' },
      checks: { expired: false, adult: true, age_years: 36, duplicates: [] },
    });
    expect(review.json().review.files.map((file: { side: string }) => file.side)).toEqual(['front', 'selfie']);

    const unknown = await call(ctx.app, `/api/ops/kyc/${customer.id}/reject`, as(op, { payload: { files: [{ side: 'front', reason: 'ugly' }] } }));
    expect(unknown.statusCode).toBe(400);
    expect(unknown.json().fields).toMatchObject({ 'files.0.reason': 'Выберите причину из списка.' });
    expect(state(await call(ctx.app, '/api/verification', { token: customer.token })).current!.status).toBe('submitted');

    const rejected = await call(ctx.app, `/api/ops/kyc/${customer.id}/reject`, as(op, { payload: { files: [{ side: 'front', reason: 'blurry' }] } }));
    expect(rejected.json()).toEqual({ status: 'ok', verification_status: 'rejected' });
    const after = state(await call(ctx.app, '/api/verification', { token: customer.token })).current!;
    expect(after).toMatchObject({ status: 'rejected', retry_allowed: true, uploadable_sides: ['front'] });
    expect(after.files.map((file) => [file.side, file.reject_reason])).toEqual([
      ['front', 'blurry'],
      ['selfie', null],
    ]);
    expect(await auditRows(op.email, 'verification.reject')).toEqual([
      expect.objectContaining({ outcome: 'done', subject: customer.id, reason_code: 'blurry' }),
    ]);

    // The selfie was accepted: it cannot be sent again; the front can.
    expect((await uploadSides(customer.token, customer.id, ['selfie'])).statusCode).toBe(400);
    expect((await uploadSides(customer.token, customer.id, ['front'])).statusCode).toBe(200);
    const again = await call(ctx.app, '/api/verification/passport/submit', {
      token: customer.token,
      payload: { id: customer.id, ...SPECIMEN_DOCUMENT, number: 'RR2000001' },
    });
    expect(again.statusCode, again.body).toBe(200);

    expect((await call(ctx.app, '/api/card', { token: customer.token })).json().requirements).toMatchObject({ met: false });
    const approved = await call(ctx.app, `/api/ops/kyc/${customer.id}/approve`, as(op, { method: 'POST' }));
    expect(approved.json()).toEqual({ status: 'ok', verification_status: 'approved' });
    expect(state(await call(ctx.app, '/api/verification', { token: customer.token })).level).toBe(1);
    expect((await call(ctx.app, '/api/card', { token: customer.token })).json().requirements).toMatchObject({ met: true });
    const decidedAgain = await call(ctx.app, `/api/ops/kyc/${customer.id}/approve`, as(op, { method: 'POST' }));
    expect(decidedAgain.statusCode).toBe(409);
  });

  it('the review names other accounts that sent the same document number', async () => {
    const one = await submitted('DD3000001');
    const two = await submitted('DD 300-0001');
    const op = await operatorWith(['compliance']);
    await stepUpOperator(ctx.app, clockOf, op);
    const review = (await call(ctx.app, `/api/ops/kyc/${two.id}`, as(op))).json().review;
    const [owner] = await ctx.db.query<{ account_id: number }>(
      'SELECT u.account_id FROM users u JOIN verifications v ON v.user_id = u.id WHERE v.public_id = $1',
      [one.id],
    );
    expect(review.checks.duplicates).toEqual([{ account_id: owner!.account_id, status: 'submitted' }]);
    const stored = await ctx.db.query<{ tail: string; hash: Buffer }>(
      'SELECT number_tail AS tail, number_hash AS hash FROM verifications WHERE public_id = $1',
      [two.id],
    );
    // Only the keyed hash and the last four characters are in clear.
    expect(stored[0]!.tail).toBe('0001');
    expect(Buffer.from(stored[0]!.hash).toString('utf8')).not.toContain('DD3000001');
  });

  it('an image needs kyc.view_documents and a fresh second factor, is not cached, and the look is audited', async () => {
    const customer = await submitted('FF4000001');
    const op = await operatorWith(['compliance']);
    await stepUpOperator(ctx.app, clockOf, op);
    const files = (await call(ctx.app, `/api/ops/kyc/${customer.id}`, as(op))).json().review.files as Array<{ id: string; url: string }>;
    const image = await call(ctx.app, files[0]!.url, as(op));
    expect(image.statusCode).toBe(200);
    expect(image.headers['content-type']).toBe('image/png');
    expect(image.headers['cache-control']).toBe('private, no-store');
    expect(await auditRows(op.email, 'verification.file')).toEqual([
      expect.objectContaining({ outcome: 'viewed', subject: customer.id, request_id: expect.any(String) }),
    ]);

    tick(5 * 60_000 + 1000);
    const stale = await call(ctx.app, files[0]!.url, as(op));
    expect({ status: stale.statusCode, code: stale.json().code }).toEqual({ status: 403, code: 'step_up_required' });
    await stepUpOperator(ctx.app, clockOf, op);
    expect((await call(ctx.app, files[0]!.url, as(op))).statusCode).toBe(200);
    expect((await call(ctx.app, '/api/ops/kyc/file/2b4c1f39-38f5-4bd4-a0f9-34c9d04ec0a5', as(op))).statusCode).toBe(404);

    const support = await operatorWith(['support']);
    await stepUpOperator(ctx.app, clockOf, support);
    const refused = await call(ctx.app, files[0]!.url, as(support));
    expect({ status: refused.statusCode, code: refused.json().code }).toEqual({ status: 403, code: 'ops_forbidden' });
    expect(await auditRows(support.email, 'GET /api/ops/kyc/file/:id')).toEqual([expect.objectContaining({ outcome: 'denied' })]);
    expect((await call(ctx.app, '/api/ops/kyc', as(support))).statusCode).toBe(403);

    // The customer's own session: the back office does not exist.
    for (const url of [files[0]!.url, '/api/ops/kyc', `/api/ops/kyc/${customer.id}`])
      expect((await call(ctx.app, url, { token: customer.token })).json()).toMatchObject({ code: 'route_not_found' });
    expect(await verifyAuditChain(ctx.db)).toMatchObject({ intact: true });
  });
});
