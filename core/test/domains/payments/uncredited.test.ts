import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { build } from '../../helpers.ts';
import { DEV_WEBHOOK_SECRETS } from '../../../src/providers/sandbox/index.ts';
import { signWebhook } from '../../../src/inbox/signature.ts';

const NOW = new Date('2026-11-23T10:00:00Z');

describe('a signed payment event that cannot be credited', () => {
  let ctx: Awaited<ReturnType<typeof build>>;
  const logs: Array<{ level: number; msg: string; result?: string; provider?: string }> = [];

  beforeAll(async () => {
    const stream = new Writable({
      write(chunk: Buffer, _encoding, callback) {
        for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) logs.push(JSON.parse(line));
        callback();
      },
    });
    ctx = await build('pglite', {}, { now: () => NOW, loggerInstance: pino({ level: 'info' }, stream) });
  });
  afterAll(async () => ctx?.close());

  it('is accepted (the provider stops resending), credits nothing, and is logged as an error for an operator', async () => {
    const body = JSON.stringify({
      id: 'chain_unknown_output',
      type: 'payment.paid',
      payment_id: 'ab'.repeat(32),
      output: 1,
      amount: '0.5',
      currency: 'LTC',
      address: 'ltc1qnotoursnotoursnotoursnotoursnot0000',
      confirmations: 6,
    });
    const res = await ctx.app.inject({
      method: 'POST',
      url: '/api/payments/webhook/sandbox-chain',
      headers: {
        'content-type': 'application/json',
        'x-obmen-signature': signWebhook(DEV_WEBHOOK_SECRETS['sandbox-chain'], Buffer.from(body), NOW.getTime() / 1000),
      },
      payload: body,
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ status: 'ok', result: 'unknown_payment' });
    const [{ n }] = (await ctx.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM payments WHERE external_id LIKE $1`, [`${'ab'.repeat(32)}%`])) as [
      { n: number },
    ];
    expect(n).toBe(0);
    expect(logs.filter((line) => line.level === 50 && line.msg.includes('not credited'))).toEqual([
      expect.objectContaining({ provider: 'sandbox-chain', result: 'unknown_payment' }),
    ]);
  });
});
