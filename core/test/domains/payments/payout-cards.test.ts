import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { build, ENGINES, testCipher } from '../../helpers.ts';
import { call } from '../../auth-helpers.ts';
import { createFixtureUser, fund, type TFixtureUser } from '../../fixtures.ts';
import { loadPaymentProviders } from '../../../src/providers/index.ts';
import { runSandboxPayouts, SANDBOX_DECLINED_CARD, SANDBOX_PAYOUT_DELAY_MS } from '../../../src/providers/sandbox/payouts.ts';
import { sealPayoutCardNumbers } from '../../../src/domains/payments/withdrawals.ts';

const SECRET = 'test-sandbox-card-secret-0123456789abcdef';
const NOW = new Date('2026-11-23T10:00:00Z');
const CARD = '4242424242424242';
const LEGACY_CARD = '5555555555554444';

describe.each(ENGINES)('payout card numbers at rest and in logs (%s)', (engine) => {
  let ctx: Awaited<ReturnType<typeof build>>;
  let user: TFixtureUser;
  let keys = 0;
  const logs: string[] = [];

  beforeAll(async () => {
    const stream = new Writable({
      write(chunk: Buffer, _encoding, callback) {
        logs.push(chunk.toString('utf8'));
        callback();
      },
    });
    ctx = await build(engine, { WEBHOOK_SECRET_SANDBOX_CARD: SECRET }, { now: () => NOW, loggerInstance: pino({ level: 'trace' }, stream) });
    user = await createFixtureUser(ctx.db);
    await ctx.db.query('UPDATE users SET verification_level = 1 WHERE id = $1', [user.id]);
    await fund(ctx.db, user.id, 'RUB', 10_000_000n);
  });
  afterAll(async () => ctx?.close());

  const withdraw = (cardNumber: string) =>
    call(ctx.app, '/api/withdraw/form/sandbox-card', {
      token: user.token,
      locale: 'en',
      payload: { currency: 'RUB', amount: '500', card_number: cardNumber, card_holder: 'IVAN PETROV' },
      headers: { 'idempotency-key': `payout-cards-${++keys}` },
    });
  /** Every table of the database whose rows, as text, contain `needle`. */
  const tablesHolding = async (needle: string) => {
    const tables = await ctx.db.query<{ name: string }>(`SELECT tablename AS name FROM pg_tables WHERE schemaname = 'public'`);
    const holding: string[] = [];
    for (const { name } of tables) {
      const [hit] = await ctx.db.query(`SELECT 1 FROM ${name} t WHERE t::text LIKE $1 LIMIT 1`, [`%${needle}%`]);
      if (hit) holding.push(name);
    }
    return holding;
  };

  it('a card withdrawal, paid or declined: the number is sealed in the database, never in a log; the user and the sandbox see the last four', async () => {
    const paid = await withdraw(CARD.replace(/(\d{4})(?=\d)/g, '$1 '));
    expect(paid.statusCode).toBe(200);
    const declined = await withdraw(SANDBOX_DECLINED_CARD);
    expect(declined.statusCode).toBe(200);
    const [paidId, declinedId] = [paid.json().withdrawal.id as string, declined.json().withdrawal.id as string];
    expect(paid.json().withdrawal).toMatchObject({ state: 'processing', details: '•••• 4242' });

    await runSandboxPayouts(
      ctx.db,
      loadPaymentProviders({ NODE_ENV: 'test', WEBHOOK_SECRET_SANDBOX_CARD: SECRET }),
      new Date(NOW.getTime() + SANDBOX_PAYOUT_DELAY_MS),
    );
    const status = async (id: string) => (await call(ctx.app, `/api/withdraw/status/${id}`, { token: user.token })).json().withdrawal;
    expect(await status(paidId)).toMatchObject({ state: 'paid', details: '•••• 4242' });
    // The sandbox still declines its test card: told so when the payout was handed over.
    expect(await status(declinedId)).toMatchObject({ state: 'failed', details: '•••• 0002' });
    const history = (await call(ctx.app, '/api/withdraw/history', { token: user.token })).json();
    expect(history.items.map((item: { details: string }) => item.details).sort()).toEqual(['•••• 0002', '•••• 4242']);
    const book = await ctx.db.query<{ destination: string; declined: boolean }>(
      'SELECT destination, declined FROM sandbox_payouts WHERE reference = ANY ($1::text[]) ORDER BY declined',
      [[paidId, declinedId]],
    );
    expect(book).toEqual([
      { destination: '•••• 4242', declined: false },
      { destination: '•••• 0002', declined: true },
    ]);

    for (const number of [CARD, SANDBOX_DECLINED_CARD]) {
      expect(await tablesHolding(number)).toEqual([]);
      expect(logs.join('').includes(number)).toBe(false);
    }
    expect(logs.length).toBeGreaterThan(0);
    // Sealed with the document key: the payout unsealed it, and so can the core.
    const [sealed] = await ctx.db.query<{ card_number_sealed: Buffer }>('SELECT card_number_sealed FROM withdrawals WHERE public_id = $1', [paidId]);
    expect(await testCipher().decrypt(Buffer.from(sealed!.card_number_sealed))).toBe(CARD);
  });

  it('a withdrawal written before sealing (its number in clear) is sealed once at start, and the number leaves its details', async () => {
    const placed = (await withdraw(CARD)).json().withdrawal.id as string;
    await ctx.db.query(
      `UPDATE withdrawals SET card_number_sealed = NULL, details = details || jsonb_build_object('card_number', $2::text) WHERE public_id = $1`,
      [placed, LEGACY_CARD],
    );
    expect(await tablesHolding(LEGACY_CARD)).toEqual(['withdrawals']);
    const cipher = testCipher();
    expect(await sealPayoutCardNumbers(ctx.db, cipher)).toBe(1);
    expect(await sealPayoutCardNumbers(ctx.db, cipher)).toBe(0);
    expect(await tablesHolding(LEGACY_CARD)).toEqual([]);
    const [row] = await ctx.db.query<{ details: Record<string, string>; card_number_sealed: Buffer }>(
      'SELECT details, card_number_sealed FROM withdrawals WHERE public_id = $1',
      [placed],
    );
    expect(row!.details).toEqual({ card_holder: 'IVAN PETROV' });
    expect(await cipher.decrypt(Buffer.from(row!.card_number_sealed))).toBe(LEGACY_CARD);
  });
});
