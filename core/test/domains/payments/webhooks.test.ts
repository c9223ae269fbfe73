import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WEBHOOK_SIGNATURE_HEADER, type TPaymentWebhookEvent } from '@obmen/shared';
import { build, ENGINES, holdRowLock } from '../../helpers.ts';
import { createFixtureUser, type TFixtureUser } from '../../fixtures.ts';
import { checkLedger } from '../../../src/domains/ledger/invariants.ts';
import { createDeposit, DEPOSIT_LIFETIME_MS, expireDeposits } from '../../../src/domains/payments/deposits.ts';
import { signWebhook } from '../../../src/inbox/signature.ts';
import { processDueWebhooks, receiveWebhooks, webhookIntake } from '../../../src/domains/payments/webhooks.ts';
import { loadPaymentProviders } from '../../../src/providers/index.ts';
import { purgeInboxes, REFUSED_SAMPLE_SIZE } from '../../../src/inbox/refusals.ts';
import { RATE_LIMITS } from '../../../src/rate-limit.ts';
import { COMMANDS } from '../../../src/cli/index.ts';

const SECRET = 'test-sandbox-card-secret-0123456789abcdef';
const NOW = new Date('2026-11-23T10:00:00Z');
const unix = (date: Date) => Math.floor(date.getTime() / 1000);

describe.each(ENGINES)('payment webhooks and deposit crediting (%s)', (engine) => {
  let ctx: Awaited<ReturnType<typeof build>>;
  let user: TFixtureUser;
  const clock = NOW;
  let eventSeq = 0;

  beforeAll(async () => {
    ctx = await build(engine, { WEBHOOK_SECRET_SANDBOX_CARD: SECRET }, { now: () => clock });
    user = await createFixtureUser(ctx.db);
  });
  afterAll(async () => ctx?.close());

  const balance = async (currency = 'USD') => {
    const [row] = await ctx.db.query<{ balance: string }>(
      "SELECT coalesce((SELECT balance::text FROM ledger_accounts WHERE user_id = $1 AND currency = $2), '0') AS balance",
      [user.id, currency],
    );
    return BigInt(row!.balance);
  };
  const paymentState = async (publicId: string) =>
    (await ctx.db.query<{ state: string }>('SELECT state FROM payments WHERE public_id = $1', [publicId]))[0]!.state;
  const newDeposit = (amount = 12_345n, currency = 'USD') =>
    createDeposit(ctx.db, { userId: user.id, provider: 'sandbox-card', systemId: 'sandbox-card', currency, amount, now: clock });
  const paidEvent = (paymentId: string, overrides: Partial<TPaymentWebhookEvent> = {}): TPaymentWebhookEvent => ({
    id: `evt_${engine}_${++eventSeq}`,
    type: 'payment.paid',
    payment_id: paymentId,
    amount: '123.45',
    currency: 'USD',
    ...overrides,
  });
  const deliver = (body: string, options: { secret?: string; at?: Date; provider?: string; signature?: string; from?: string } = {}) =>
    ctx.app.inject({
      method: 'POST',
      ...(options.from ? { remoteAddress: options.from } : {}),
      url: `/api/payments/webhook/${options.provider ?? 'sandbox-card'}`,
      headers: {
        'content-type': 'application/json',
        [WEBHOOK_SIGNATURE_HEADER]: options.signature ?? signWebhook(options.secret ?? SECRET, Buffer.from(body), unix(options.at ?? clock)),
      },
      payload: body,
    });
  const inbox = (eventId: string) =>
    ctx.db.query<{ signature_valid: boolean; result: string; processed_at: Date | null }>(
      'SELECT signature_valid, result, processed_at FROM payment_webhooks WHERE event_id = $1 ORDER BY id',
      [eventId],
    );

  it('a valid paid event credits the deposit once, from the clearing account, and a redelivery moves nothing', async () => {
    const deposit = await newDeposit();
    const before = await balance();
    const event = paidEvent(deposit.public_id);
    const body = JSON.stringify(event);
    const first = await deliver(body);
    expect(first.statusCode).toBe(200);
    expect(first.json()).toMatchObject({ status: 'ok', result: 'credited' });
    expect(await balance()).toBe(before + 12_345n);
    expect(await paymentState(deposit.public_id)).toBe('credited');
    const [clearing] = await ctx.db.query<{ balance: string }>(
      `SELECT balance::text AS balance FROM ledger_accounts WHERE kind = 'clearing' AND name = 'sandbox-card' AND currency = 'USD'`,
    );
    expect(BigInt(clearing!.balance)).toBeLessThanOrEqual(-12_345n);

    const again = await deliver(body);
    expect(again.json()).toMatchObject({ status: 'ok', result: 'duplicate' });
    expect(await balance()).toBe(before + 12_345n);
    expect((await inbox(event.id)).map((row) => row.result)).toEqual(['credited', 'duplicate']);
  });

  it('the body is checked byte for byte: the same JSON re-serialised with other spacing is refused', async () => {
    const deposit = await newDeposit();
    const event = paidEvent(deposit.public_id);
    const signed = JSON.stringify(event);
    const res = await deliver(JSON.stringify(event, null, 1), { signature: signWebhook(SECRET, Buffer.from(signed), unix(clock)) });
    expect(res.statusCode).toBe(401);
    expect(res.json()).toMatchObject({ status: 'error', code: 'webhook_signature_invalid' });
    expect(await paymentState(deposit.public_id)).toBe('created');
  });

  it('forged, stale, unsigned and future-dated deliveries are refused before storing (counted, sampled) and move nothing; they do not use up the event id', async () => {
    const deposit = await newDeposit();
    const before = await balance();
    const event = paidEvent(deposit.public_id);
    const body = JSON.stringify(event);
    const refused = [
      await deliver(body, { secret: 'another-secret-of-enough-length-000000' }),
      await deliver(body, { at: new Date(clock.getTime() - 301_000) }),
      await deliver(body, { at: new Date(clock.getTime() + 301_000) }),
      await deliver(body, { signature: '' }),
      await deliver(body, { signature: `t=${unix(clock)},v1=${'0'.repeat(64)}` }),
      await deliver(body, { signature: `t=${unix(clock)},v1=abc` }),
    ];
    for (const res of refused) {
      expect(res.statusCode).toBe(401);
      expect(res.headers['content-type']).toMatch(/json/);
    }
    expect(await balance()).toBe(before);
    expect(await paymentState(deposit.public_id)).toBe('created');
    expect(await inbox(event.id)).toEqual([]);
    const sampled = await ctx.db.query<{ reason: string; body_head: Buffer; address: string }>(
      `SELECT reason, body_head, address FROM inbox_refused_samples WHERE inbox = 'payment_webhooks' AND convert_from(body_head, 'UTF8') = $1`,
      [body],
    );
    expect(sampled.every((row) => Buffer.from(row.body_head).toString() === body && row.address === '127.0.0.1')).toBe(true);
    expect(sampled.map((row) => row.reason).sort()).toEqual(['bad_signature', 'bad_signature', 'bad_signature', 'bad_signature', 'stale', 'stale']);

    // Within the window (4 min 59 s late), the genuine delivery still credits.
    const genuine = await deliver(body, { at: new Date(clock.getTime() - 299_000) });
    expect(genuine.json()).toMatchObject({ result: 'credited' });
    expect(await balance()).toBe(before + 12_345n);
  });

  it('an unknown payment, a wrong amount or currency, a malformed event or an unknown provider moves nothing', async () => {
    const deposit = await newDeposit();
    const before = await balance();
    const cases: Array<[Partial<TPaymentWebhookEvent>, string]> = [
      [{ payment_id: '00000000-0000-4000-8000-000000000000' }, 'unknown_payment'],
      [{ payment_id: 'not-a-uuid' }, 'unknown_payment'],
      [{ amount: '123.46' }, 'amount_mismatch'],
      [{ amount: '123.451' }, 'amount_mismatch'],
      [{ amount: '-123.45' }, 'amount_mismatch'],
      [{ currency: 'EUR' }, 'currency_mismatch'],
    ];
    for (const [overrides, result] of cases) {
      const res = await deliver(JSON.stringify(paidEvent(deposit.public_id, overrides)));
      expect(res.statusCode).toBe(200);
      expect(res.json().result).toBe(result);
    }
    expect(await balance()).toBe(before);
    expect(await paymentState(deposit.public_id)).toBe('created');
    expect((await deliver('{"id":"x"}')).statusCode).toBe(400);
    expect((await deliver('{}', { provider: 'nobody' })).statusCode).toBe(404);
  });

  it('pending then declined ends the deposit without money; a later paid event moves nothing', async () => {
    const deposit = await newDeposit();
    const before = await balance();
    expect((await deliver(JSON.stringify(paidEvent(deposit.public_id, { type: 'payment.pending' })))).json().result).toBe('pending');
    expect(await paymentState(deposit.public_id)).toBe('pending');
    expect((await deliver(JSON.stringify(paidEvent(deposit.public_id, { type: 'payment.declined' })))).json().result).toBe('declined');
    expect(await paymentState(deposit.public_id)).toBe('declined');
    expect((await deliver(JSON.stringify(paidEvent(deposit.public_id)))).json().result).toBe('wrong_state');
    expect(await balance()).toBe(before);
  });

  it('an unpaid deposit expires at its time; a paid event after that moves nothing; a pending one waits', async () => {
    const created = await newDeposit();
    const pending = await newDeposit();
    await deliver(JSON.stringify(paidEvent(pending.public_id, { type: 'payment.pending' })));
    const before = await balance();
    await expireDeposits(ctx.db, new Date(clock.getTime() + DEPOSIT_LIFETIME_MS - 1000));
    expect(await paymentState(created.public_id)).toBe('created');
    await expireDeposits(ctx.db, new Date(clock.getTime() + DEPOSIT_LIFETIME_MS));
    expect(await paymentState(created.public_id)).toBe('expired');
    expect(await paymentState(pending.public_id)).toBe('pending');
    expect((await deliver(JSON.stringify(paidEvent(created.public_id)))).json().result).toBe('wrong_state');
    expect(await balance()).toBe(before);
    // The pending one is still credited when its provider says paid (its ledger row counts below).
    expect((await deliver(JSON.stringify(paidEvent(pending.public_id)))).json().result).toBe('credited');
    expect(await balance()).toBe(before + 12_345n);
  });

  it.runIf(engine === 'postgres')('the same event delivered 5 times concurrently credits once (20 deposits)', async () => {
    const before = await balance();
    const deposits = await Promise.all(Array.from({ length: 20 }, () => newDeposit()));
    const bodies = deposits.map((deposit) => JSON.stringify(paidEvent(deposit.public_id)));
    const answers = await Promise.all(bodies.flatMap((body) => Array.from({ length: 5 }, () => deliver(body))));
    const results = answers.map((res) => res.json().result);
    expect(results.filter((result) => result === 'credited')).toHaveLength(20);
    expect(results.filter((result) => result === 'duplicate')).toHaveLength(80);
    expect(await balance()).toBe(before + 20n * 12_345n);
  });

  it('deliveries received together: each stored as its own row, in order; copies applied once, forged refused; a failing event is retried alone and holds back no other', async () => {
    const provider = loadPaymentProviders({ NODE_ENV: 'test', WEBHOOK_SECRET_SANDBOX_CARD: SECRET }).get('sandbox-card')!;
    const [a, b, c] = [await newDeposit(), await newDeposit(), await newDeposit()];
    const events = [paidEvent(a.public_id), paidEvent(b.public_id), paidEvent(c.public_id)];
    const incoming = (event: TPaymentWebhookEvent, secret = SECRET) => {
      const rawBody = Buffer.from(JSON.stringify(event));
      return { provider, input: { rawBody, signature: signWebhook(secret, rawBody, unix(clock)), now: clock } };
    };
    // The database refuses b's event id (a stand-in for one event whose processing fails).
    await ctx.db.exec(`CREATE FUNCTION pg_temp_refuse_one() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN IF NEW.event_id = '${events[1]!.id}' THEN RAISE EXCEPTION 'refused for the test'; END IF; RETURN NEW; END $$;
      CREATE TRIGGER refuse_one BEFORE INSERT ON payment_events FOR EACH ROW EXECUTE FUNCTION pg_temp_refuse_one();`);
    const before = await balance();
    const received = await receiveWebhooks(
      ctx.db,
      [
        incoming(events[0]!),
        incoming(events[1]!),
        incoming(events[0]!),
        incoming(events[2]!, 'a-forger-does-not-know-the-secret-000000'),
        incoming(events[2]!),
      ],
      clock,
    );
    await ctx.db.exec('DROP TRIGGER refuse_one ON payment_events; DROP FUNCTION pg_temp_refuse_one();');
    expect(received.map((r) => (r instanceof Error ? r.message : r.result))).toEqual([
      'credited',
      'refused for the test',
      'duplicate',
      'bad_signature',
      'credited',
    ]);
    expect(await balance()).toBe(before + 2n * 12_345n);
    const ids = received.map((r) => (r instanceof Error ? null : Number(r.webhookId)));
    // Each stored in order; the forged one is refused before storing: no row, no id.
    expect(received[3]).toEqual({ webhookId: null, result: 'bad_signature' });
    expect(ids[4]! - ids[0]!).toBe(3);
    const [failed] = await inbox(events[1]!.id);
    expect(failed).toMatchObject({ signature_valid: true, result: null, processed_at: null });
    // The next attempt applies it.
    expect(
      await processDueWebhooks(ctx.db, loadPaymentProviders({ NODE_ENV: 'test', WEBHOOK_SECRET_SANDBOX_CARD: SECRET }), new Date(clock.getTime() + 10_000)),
    ).toEqual({
      processed: 1,
      failed: 0,
    });
    expect(await paymentState(b.public_id)).toBe('credited');
    expect(await balance()).toBe(before + 3n * 12_345n);
  });

  it('a copy of an event whose delivery failed processing is applied at once; the failed one, retried, is a duplicate', async () => {
    const deposit = await newDeposit();
    const event = paidEvent(deposit.public_id);
    const body = JSON.stringify(event);
    await ctx.db.exec(`CREATE FUNCTION pg_temp_refuse_one() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN IF NEW.event_id = '${event.id}' THEN RAISE EXCEPTION 'refused for the test'; END IF; RETURN NEW; END $$;
      CREATE TRIGGER refuse_one BEFORE INSERT ON payment_events FOR EACH ROW EXECUTE FUNCTION pg_temp_refuse_one();`);
    const failed = await deliver(body);
    await ctx.db.exec('DROP TRIGGER refuse_one ON payment_events; DROP FUNCTION pg_temp_refuse_one();');
    expect(failed.statusCode).toBe(500);
    const before = await balance();
    const again = await deliver(body);
    expect(again.json()).toMatchObject({ result: 'credited' });
    expect(await balance()).toBe(before + 12_345n);
    expect(
      await processDueWebhooks(ctx.db, loadPaymentProviders({ NODE_ENV: 'test', WEBHOOK_SECRET_SANDBOX_CARD: SECRET }), new Date(clock.getTime() + 10_000)),
    ).toEqual({ processed: 1, failed: 0 });
    expect((await inbox(event.id)).map((row) => row.result)).toEqual(['duplicate', 'credited']);
    expect(await balance()).toBe(before + 12_345n);
  });

  const gathered = (events: TPaymentWebhookEvent[]) =>
    receiveWebhooks(
      ctx.db,
      events.map((event) => {
        const rawBody = Buffer.from(JSON.stringify(event));
        return {
          provider: loadPaymentProviders({ NODE_ENV: 'test', WEBHOOK_SECRET_SANDBOX_CARD: SECRET }).get('sandbox-card')!,
          input: { rawBody, signature: signWebhook(SECRET, rawBody, unix(clock)), now: clock },
        };
      }),
      clock,
    ).then((received) => received.map((r) => (r instanceof Error ? r.message : r.result)));

  it('one gathering: a later event of a payment sees what an earlier one did (pending, then paid, then paid again under another id)', async () => {
    const [a, b] = [await newDeposit(), await newDeposit()];
    const before = await balance();
    const results = await gathered([
      paidEvent(a.public_id, { type: 'payment.pending' }),
      paidEvent(a.public_id),
      paidEvent(b.public_id),
      paidEvent(a.public_id),
      paidEvent(b.public_id, { type: 'payment.declined' }),
    ]);
    expect(results).toEqual(['pending', 'credited', 'credited', 'wrong_state', 'wrong_state']);
    expect(await balance()).toBe(before + 2n * 12_345n);
    expect([await paymentState(a.public_id), await paymentState(b.public_id)]).toEqual(['credited', 'credited']);
    const announced = await ctx.db.query<{ type: string; payload: { id: string; state: string } | null }>(
      'SELECT type, payload FROM events WHERE user_id = $1 ORDER BY seq DESC LIMIT 5',
      [user.id],
    );
    expect(announced.reverse()).toEqual([
      { type: 'payment', payload: { id: a.public_id, state: 'pending' } },
      { type: 'wallets', payload: null },
      { type: 'payment', payload: { id: a.public_id, state: 'credited' } },
      { type: 'wallets', payload: null },
      { type: 'payment', payload: { id: b.public_id, state: 'credited' } },
    ]);
  });

  it('deposit_credit refuses a payment given twice or no longer open: a slip of its caller cannot credit twice', async () => {
    const open = await newDeposit();
    const [credited] = await ctx.db.query<{ id: string }>("SELECT id::text AS id FROM payments WHERE state = 'credited' LIMIT 1");
    const [row] = await ctx.db.query<{ id: string }>('SELECT id::text AS id FROM payments WHERE public_id = $1', [open.public_id]);
    const before = await balance();
    for (const ids of [
      [row!.id, row!.id],
      [row!.id, credited!.id],
    ]) {
      await expect(ctx.db.query('SELECT deposit_credit($1::bigint[], $2)', [ids, clock])).rejects.toThrow(/deposit_credit: 2 payments given, 1 open deposits/);
    }
    expect(await balance()).toBe(before);
    expect(await paymentState(open.public_id)).toBe('created');
  });

  it.runIf(engine === 'postgres')('gatherings crediting the same users in opposite orders, at once, never deadlock', async () => {
    const other = await createFixtureUser(ctx.db);
    const depositOf = (userId: string) =>
      createDeposit(ctx.db, { userId, provider: 'sandbox-card', systemId: 'sandbox-card', currency: 'USD', amount: 12_345n, now: clock });
    const rounds = 10;
    const pairs = await Promise.all(Array.from({ length: rounds * 2 }, async () => [await depositOf(user.id), await depositOf(other.id)] as const));
    const gatherings = pairs.map(([mine, theirs], i) =>
      gathered(i % 2 ? [paidEvent(mine.public_id), paidEvent(theirs.public_id)] : [paidEvent(theirs.public_id), paidEvent(mine.public_id)]),
    );
    expect((await Promise.all(gatherings)).flat()).toEqual(Array.from({ length: rounds * 4 }, () => 'credited'));
  });

  it.runIf(engine === 'postgres')(
    'the intake: a copy of an event being applied is answered duplicate at once; an apply stuck on a row holds up no other event',
    async () => {
      const receive = webhookIntake(ctx.db, () => clock);
      const provider = loadPaymentProviders({ NODE_ENV: 'test', WEBHOOK_SECRET_SANDBOX_CARD: SECRET }).get('sandbox-card')!;
      const input = (event: TPaymentWebhookEvent, secret = SECRET) => {
        const rawBody = Buffer.from(JSON.stringify(event));
        return { rawBody, signature: signWebhook(secret, rawBody, unix(clock)), now: clock };
      };
      const [held, other, earlier] = [await newDeposit(), await newDeposit(), await newDeposit()];
      const applied = paidEvent(earlier.public_id);
      expect((await receive(provider, input(applied))).result).toBe('credited');
      const [heldId] = await ctx.db.query<{ id: string }>('SELECT id::text AS id FROM payments WHERE public_id = $1', [held.public_id]);
      const event = paidEvent(held.public_id);
      // The first copy is stored, then waits on the payment's row, held by the test.
      const lock = await holdRowLock(ctx.db, 'SELECT 1 FROM payments WHERE id = $1 FOR UPDATE', [heldId!.id]);
      const first = receive(provider, input(event));
      await lock.waiting();
      // What the store decides is answered at once, whatever the apply is waiting on: a copy of an
      // event applied before, a forged delivery, and a copy of the event being applied (the first
      // delivery carries it).
      expect((await receive(provider, input(applied))).result).toBe('duplicate');
      expect((await receive(provider, input(paidEvent(other.public_id), 'forged-secret'))).result).toBe('bad_signature');
      expect((await receive(provider, input(event))).result).toBe('duplicate');
      expect((await inbox(event.id)).map((row) => row.result)).toEqual([null, 'duplicate']);
      // Another event is applied beside the stuck apply (INTAKE_STALL_MS) and credited now.
      expect((await receive(provider, input(paidEvent(other.public_id)))).result).toBe('credited');
      await lock.release();
      expect((await first).result).toBe('credited');
      expect((await inbox(event.id)).map((row) => row.result)).toEqual(['credited', 'duplicate']);
      expect(await paymentState(held.public_id)).toBe('credited');
    },
  );

  it.runIf(engine === 'postgres')(
    'two cores (two intakes) given the copies of the same events at once: each event credited once, every copy stored and answered',
    async () => {
      const provider = loadPaymentProviders({ NODE_ENV: 'test', WEBHOOK_SECRET_SANDBOX_CARD: SECRET }).get('sandbox-card')!;
      const intakes = [webhookIntake(ctx.db, () => clock), webhookIntake(ctx.db, () => clock)];
      const deposits = await Promise.all(Array.from({ length: 10 }, () => newDeposit()));
      const events = deposits.map((deposit) => paidEvent(deposit.public_id));
      const before = await balance();
      const answers = await Promise.all(
        events.flatMap((event) =>
          Array.from({ length: 4 }, (_, copy) => {
            const rawBody = Buffer.from(JSON.stringify(event));
            return intakes[copy % 2]!(provider, { rawBody, signature: signWebhook(SECRET, rawBody, unix(clock)), now: clock });
          }),
        ),
      );
      const results = answers.map((answer) => answer.result);
      expect(results.filter((result) => result === 'credited')).toHaveLength(10);
      expect(results.filter((result) => result === 'duplicate')).toHaveLength(30);
      expect(await balance()).toBe(before + 10n * 12_345n);
      for (const event of events) {
        const rows = await inbox(event.id);
        expect(rows.map((row) => row.result).sort()).toEqual(['credited', 'duplicate', 'duplicate', 'duplicate']);
        expect(rows.every((row) => row.processed_at !== null)).toBe(true);
      }
    },
  );

  it('payments:webhooks lists the inbox newest first, filtered by result, bodies as received; webhooks:refused the refused ones', async () => {
    const listed = (await COMMANDS['payments:webhooks']!(ctx.db, ['result=credited', 'limit=5'])) as Array<{
      result: string;
      signature_valid: boolean;
      body: string;
    }>;
    expect(listed).toHaveLength(5);
    expect(listed.every((row) => row.result === 'credited' && row.signature_valid && row.body.startsWith('{"id":"evt_'))).toBe(true);
    await expect(COMMANDS['payments:webhooks']!(ctx.db, ['limit=0'])).rejects.toThrow(/usage/);
    const refused = (await COMMANDS['webhooks:refused']!(ctx.db, ['limit=1000'])) as {
      counts: Array<{ inbox: string; reason: string; refused: string }>;
      samples: Array<{ reason: string; body_head: string }>;
    };
    const stale = refused.counts.find((row) => row.inbox === 'payment_webhooks' && row.reason === 'stale');
    expect(Number(stale!.refused)).toBeGreaterThanOrEqual(2);
    expect(refused.samples.filter((row) => row.reason === 'stale' && row.body_head.startsWith('{"id":"evt_')).length).toBeGreaterThanOrEqual(2);
    await expect(COMMANDS['webhooks:refused']!(ctx.db, ['limit=0'])).rejects.toThrow(/usage/);
  });

  it('a flood of forged deliveries stores nothing but a counter and the bounded sample; past its limit an address gets 429; valid deliveries still apply', async () => {
    const [deposit, another] = [await newDeposit(), await newDeposit()];
    const before = await balance();
    const rows = async (table: string) => (await ctx.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}`))[0]!.n;
    const [inboxBefore, eventsBefore] = [await rows('payment_webhooks'), await rows('payment_events')];
    const forged = (from: string) => deliver(JSON.stringify(paidEvent(deposit.public_id)), { secret: 'a-forger-does-not-know-the-secret-000000', from });
    // 2,000 forged deliveries from 100 addresses, 20 each: within each address's limit, every one refused and counted.
    const FLOOD = 2_000;
    for (let start = 0; start < FLOOD; start += 50) {
      const answers = await Promise.all(Array.from({ length: 50 }, (_, i) => forged(`10.7.${(start + i) % 100}.1`)));
      expect(answers.map((res) => res.statusCode)).toEqual(Array(50).fill(401));
    }
    expect(await rows('payment_webhooks')).toBe(inboxBefore);
    expect(await rows('payment_events')).toBe(eventsBefore);
    const [sample] = await ctx.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM inbox_refused_samples WHERE inbox = 'payment_webhooks' AND source = 'sandbox-card' AND reason = 'bad_signature'`,
    );
    expect(sample!.n).toBe(REFUSED_SAMPLE_SIZE);
    expect(await rows('inbox_refused_samples')).toBeLessThanOrEqual(3 * REFUSED_SAMPLE_SIZE);
    const [counted] = await ctx.db.query<{ refused: string }>(
      `SELECT refused::text AS refused FROM inbox_refusals WHERE inbox = 'payment_webhooks' AND source = 'sandbox-card' AND reason = 'bad_signature'`,
    );
    expect(Number(counted!.refused)).toBeGreaterThanOrEqual(FLOOD);

    // One address past its limit: 429 with Retry-After, only counted.
    const flooder = '203.0.113.9';
    const statuses: number[] = [];
    for (let i = 0; i < RATE_LIMITS.webhook_refused_ip.max + 5; i++) statuses.push((await forged(flooder)).statusCode);
    expect(statuses).toEqual([...Array(RATE_LIMITS.webhook_refused_ip.max).fill(401), ...Array(5).fill(429)]);
    const limited = await forged(flooder);
    expect(limited.statusCode).toBe(429);
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    const [rateLimited] = await ctx.db.query<{ refused: string }>(
      `SELECT refused::text AS refused FROM inbox_refusals WHERE inbox = 'payment_webhooks' AND reason = 'rate_limited'`,
    );
    expect(Number(rateLimited!.refused)).toBe(6);
    expect(await rows('payment_webhooks')).toBe(inboxBefore);

    // Valid deliveries are never limited: from the limited address itself, and from another one.
    expect((await deliver(JSON.stringify(paidEvent(deposit.public_id)), { from: flooder })).json()).toMatchObject({ result: 'credited' });
    expect((await deliver(JSON.stringify(paidEvent(another.public_id)), { from: '198.51.100.4' })).json()).toMatchObject({ result: 'credited' });
    expect(await balance()).toBe(before + 2n * 12_345n);
    expect(await rows('payment_webhooks')).toBe(inboxBefore + 2);
  });

  it('the ledger invariants hold after all of it, deposits included', async () => {
    const report = await checkLedger(ctx.db);
    expect(report.violations).toEqual([]);
    const [deposits] = await ctx.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ledger_transactions WHERE kind = 'deposit'`);
    expect(deposits!.n).toBe(engine === 'postgres' ? 26 + 2 + 40 + 3 + 1 + 10 + 2 : 6 + 2 + 1 + 2);
  });

  it('the purge deletes processed deliveries older than the retention, by the given clock; unprocessed ones and the events stay', async () => {
    const later = (days: number) => new Date(clock.getTime() + days * 86_400_000);
    const rows = async (sql: string) => (await ctx.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${sql}`))[0]!.n;
    const events = await rows('payment_events');
    const unprocessed = await rows('payment_webhooks WHERE processed_at IS NULL');
    // Received after every delivery above: a processed one within the retention, one received long ago but processed
    // recently, and an unprocessed one.
    await ctx.db.query(
      `INSERT INTO payment_webhooks (provider, raw_body, signature_valid, event_id, received_at, processed_at, result) VALUES
         ('sandbox-card', '\\x7b7d', true, 'purge-recent', $1, $1, 'unknown_payment'),
         ('sandbox-card', '\\x7b7d', true, 'purge-late', $2, $1, 'unknown_payment'),
         ('sandbox-card', '\\x7b7d', true, 'purge-unprocessed', $2, NULL, NULL)`,
      [later(95), clock],
    );
    await ctx.db.query(
      `INSERT INTO card_issuer_callbacks (issuer, raw_body, signature_valid, event_id, received_at, processed_at, result) VALUES
         ('sandbox', '\\x7b7d', true, 'purge-old', $2, $2, 'applied'), ('sandbox', '\\x7b7d', true, 'purge-recent', $1, $1, 'applied')`,
      [later(95), clock],
    );
    // 100 days on, a retention of 90: everything processed before day 10 goes.
    const purged = await purgeInboxes(ctx.db, later(100), 90);
    expect(purged).toBeGreaterThan(2);
    expect(await rows(`payment_webhooks WHERE processed_at < '${later(10).toISOString()}'`)).toBe(0);
    expect(await rows('payment_webhooks WHERE processed_at IS NULL')).toBe(unprocessed + 1);
    const kept = await ctx.db.query<{ event_id: string }>(`SELECT event_id FROM payment_webhooks WHERE event_id LIKE 'purge-%' ORDER BY id`);
    expect(kept.map((row) => row.event_id)).toEqual(['purge-recent', 'purge-late', 'purge-unprocessed']);
    const callbacks = await ctx.db.query<{ event_id: string }>(`SELECT event_id FROM card_issuer_callbacks WHERE event_id LIKE 'purge-%'`);
    expect(callbacks.map((row) => row.event_id)).toEqual(['purge-recent']);
    // The exactly-once keys stay: a purged delivery's event cannot be applied again.
    expect(await rows('payment_events')).toBe(events);
    expect(await rows('payment_events WHERE webhook_id IS NULL')).toBe(events);
    // Within the retention, nothing more goes.
    expect(await purgeInboxes(ctx.db, later(100), 90)).toBe(0);
  });
});
