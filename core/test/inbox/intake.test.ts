import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { build, ENGINES, testCipher, testConfig } from '../helpers.ts';
import { COMMANDS } from '../../src/cli/index.ts';
import { processDueCallbacks, receiveIssuerCallback, replayCallback } from '../../src/domains/cards/callbacks.ts';
import { signWebhook } from '../../src/inbox/signature.ts';
import { loadCardIssuers } from '../../src/providers/index.ts';

const NOW = new Date('2026-11-23T10:00:00Z');

/*
 * The one inbox, as the card issuers' callbacks use it now (the payment webhooks' own tests are
 * in domains/payments/webhooks.test.ts): a copy of an event carried already is a duplicate; a
 * failed apply stays on record and is retried after its backoff; an operator can replay one.
 */
describe.each(ENGINES)('the inbox for card issuer callbacks (%s)', (engine) => {
  let ctx: Awaited<ReturnType<typeof build>>;
  const issuers = loadCardIssuers(testConfig(), testCipher());
  const issuer = issuers.get('sandbox')!;

  beforeAll(async () => {
    ctx = await build(engine, {}, { now: () => NOW });
  });
  afterAll(async () => ctx?.close());

  const deliver = (event: object, now = NOW) => {
    const rawBody = Buffer.from(JSON.stringify(event));
    return receiveIssuerCallback(ctx.db, issuer, { rawBody, signature: signWebhook(issuer.callbackSecret!, rawBody, Math.floor(now.getTime() / 1000)), now });
  };
  const stored = async (id: string) =>
    (
      await ctx.db.query<{ processed: boolean; result: string | null; attempts: number; last_error: string | null }>(
        'SELECT processed_at IS NOT NULL AS processed, result, attempts, last_error FROM card_issuer_callbacks WHERE id = $1',
        [id],
      )
    )[0]!;

  it('applies an event once: a copy is a duplicate, a forged one is refused and never stored', async () => {
    const event = { id: 'inbox-test-1', type: 'card.shipped', order: '00000000-0000-4000-8000-000000000001' };
    const first = await deliver(event);
    expect(first.result).toBe('unknown_order');
    expect(await stored(first.callbackId!)).toMatchObject({ processed: true, result: 'unknown_order', attempts: 0 });
    expect((await deliver(event)).result).toBe('duplicate');
    const rawBody = Buffer.from(JSON.stringify({ ...event, id: 'inbox-test-forged' }));
    const forged = await receiveIssuerCallback(ctx.db, issuer, { rawBody, signature: signWebhook('x'.repeat(40), rawBody, NOW.getTime() / 1000), now: NOW });
    expect(forged).toEqual({ callbackId: null, result: 'bad_signature' });
  });

  it('keeps a failed apply on record with its error, retries it after the backoff, and replays it as a duplicate', async () => {
    // The events table refuses every claim for a while: the apply fails after the delivery is stored.
    await ctx.db.query(`CREATE FUNCTION inbox_test_refuse() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'inbox test: refused'; END $$`);
    await ctx.db.query('CREATE TRIGGER inbox_test_refuse BEFORE INSERT ON card_issuer_events FOR EACH ROW EXECUTE FUNCTION inbox_test_refuse()');
    const event = { id: 'inbox-test-2', type: 'card.shipped', order: '00000000-0000-4000-8000-000000000002' };
    await expect(deliver(event)).rejects.toThrow(/inbox test: refused/);
    const [row] = await ctx.db.query<{ id: string }>(`SELECT id::text AS id FROM card_issuer_callbacks WHERE event_id = 'inbox-test-2'`);
    expect(await stored(row!.id)).toMatchObject({ processed: false, result: null, attempts: 1, last_error: 'inbox test: refused' });
    // Not due before its backoff (10 s after the failure).
    expect(await processDueCallbacks(ctx.db, issuers, new Date(NOW.getTime() + 5_000))).toEqual({ processed: 0, failed: 0 });
    await ctx.db.query('DROP TRIGGER inbox_test_refuse ON card_issuer_events');
    expect(await processDueCallbacks(ctx.db, issuers, new Date(NOW.getTime() + 11_000))).toEqual({ processed: 1, failed: 0 });
    expect(await stored(row!.id)).toMatchObject({ processed: true, result: 'unknown_order' });
    expect(await replayCallback(ctx.db, issuers, row!.id, NOW)).toEqual({ callback_id: row!.id, was_processed: true, result: 'duplicate' });
    expect(await COMMANDS['cards:callback:replay']!(ctx.db, [row!.id])).toMatchObject({ result: 'duplicate' });
    await expect(replayCallback(ctx.db, issuers, '999999999', NOW)).rejects.toThrow(/no callback delivery/);
    await expect(COMMANDS['cards:callback:replay']!(ctx.db, ['x'])).rejects.toThrow(/usage/);
  });
});
