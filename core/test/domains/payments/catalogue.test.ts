import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TDepositSystems } from '@obmen/shared';
import { build, ENGINES } from '../../helpers.ts';
import { call } from '../../auth-helpers.ts';
import { createFixtureUser, type TFixtureUser } from '../../fixtures.ts';
import { COMMANDS } from '../../../src/cli/index.ts';
import { AppError } from '../../../src/errors.ts';
import { assessPayment, listPaymentSystems, seedPaymentSystems } from '../../../src/domains/payments/catalogue.ts';
import { SANDBOX_PAYMENT_SYSTEMS } from '../../../src/providers/sandbox/catalogue.ts';

describe.each(ENGINES)('payment-system catalogue (%s)', (engine) => {
  let ctx: Awaited<ReturnType<typeof build>>;
  let user: TFixtureUser;
  const run = (name: string, ...args: string[]) => COMMANDS[name]!(ctx.db, args);

  beforeAll(async () => {
    ctx = await build(engine);
    user = await createFixtureUser(ctx.db);
  });
  afterAll(async () => ctx?.close());

  const refusal = async (work: Promise<unknown>) => {
    const err = await work.then(
      () => null,
      (caught: unknown) => caught,
    );
    expect(err).toBeInstanceOf(AppError);
    const app = err as AppError;
    return { code: app.code, fields: app.fields, vars: app.vars };
  };

  it('seeds every direction once: deposit, withdraw and purchase through the three sandboxes', async () => {
    expect(await ctx.db.transaction((tx) => seedPaymentSystems(tx, SANDBOX_PAYMENT_SYSTEMS))).toBe(false);
    const rows = await ctx.db.query<{ direction: string; id: string; n: number }>(
      `SELECT s.direction, s.id, count(c.currency)::int AS n FROM payment_systems s JOIN payment_system_currencies c
       ON c.direction = s.direction AND c.system_id = s.id GROUP BY s.direction, s.id ORDER BY s.direction, s.id`,
    );
    expect(rows.map((row) => `${row.direction}/${row.id}`)).toEqual(
      SANDBOX_PAYMENT_SYSTEMS.map((system) => `${system.direction}/${system.id}`).sort((a, b) => (a < b ? -1 : 1)),
    );
    const withdraw = await listPaymentSystems(ctx.db, { direction: 'withdraw', userLevel: 0, currency: 'TON' });
    // Level 0's withdrawal limit is 0 (verification_limits): its chain payouts are locked too, needing level 1.
    expect(withdraw.map((entry) => [entry.system.id, entry.system.fields, entry.system.locked, entry.system.level])).toEqual([
      ['sandbox-chain', ['address', 'memo'], true, 1],
    ]);
    const card = await listPaymentSystems(ctx.db, { direction: 'withdraw', userLevel: 0, currency: 'RUB' });
    expect(card.map((entry) => [entry.system.id, entry.system.fields, entry.system.locked])).toEqual([
      ['sandbox-card', ['card_number', 'card_holder'], true],
      ['sandbox-bank', ['iban', 'account_holder'], true],
    ]);
    const verified = await listPaymentSystems(ctx.db, { direction: 'withdraw', userLevel: 1, currency: 'RUB' });
    expect(verified.every((entry) => !entry.system.locked)).toBe(true);
  });

  it('assesses a payment: fee, amount received, level, limits and the form fields, for every direction', async () => {
    const card = await assessPayment(ctx.db, {
      direction: 'withdraw',
      ps: 'sandbox-card',
      currency: 'RUB',
      amount: '1000',
      userLevel: 1,
      form: { card_number: '4111 1111 1111 1111', card_holder: 'Ivan Petrov' },
    });
    // 1% + 50 RUB
    expect([card.amount, card.fee, card.receive]).toEqual([100_000n, 6_000n, 94_000n]);
    expect(card.form).toEqual({ card_number: '4111111111111111', card_holder: 'IVAN PETROV' });

    const chain = await assessPayment(ctx.db, {
      direction: 'withdraw',
      ps: 'sandbox-chain',
      currency: 'BTC',
      amount: '0.01',
      userLevel: 1,
      form: { address: 'bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4', memo: 'ignored for BTC' },
    });
    expect([chain.fee, chain.receive, chain.form]).toEqual([20_000n, 980_000n, { address: 'bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4' }]);

    const base = { direction: 'withdraw' as const, ps: 'sandbox-card', currency: 'RUB', userLevel: 1 };
    const form = { card_number: '4111111111111111', card_holder: 'IVAN PETROV' };
    expect(await refusal(assessPayment(ctx.db, { ...base, userLevel: 0, amount: '1000', form }))).toMatchObject({ code: 'payment_level_required' });
    expect(await refusal(assessPayment(ctx.db, { ...base, amount: '99.99', form }))).toMatchObject({ code: 'amount_too_small', vars: { min: '100' } });
    expect(await refusal(assessPayment(ctx.db, { ...base, amount: '300000.01', form }))).toMatchObject({ code: 'amount_too_large', vars: { max: '300000' } });
    expect(await refusal(assessPayment(ctx.db, { ...base, amount: '1000', form: { card_number: '4111111111111112' } }))).toEqual({
      code: 'validation',
      fields: { card_number: 'payments.field.card_number_invalid', card_holder: 'validation.required' },
      vars: {},
    });
    expect(await refusal(assessPayment(ctx.db, { ...base, currency: 'BTC', amount: '1', form }))).toMatchObject({
      fields: { currency: 'payments.currency_not_supported' },
    });
    expect(await refusal(assessPayment(ctx.db, { ...base, ps: 'nobody', amount: '1', form }))).toMatchObject({ fields: { ps: 'payments.unknown_system' } });
    expect(
      await refusal(
        assessPayment(ctx.db, {
          direction: 'withdraw',
          ps: 'sandbox-chain',
          currency: 'USDT',
          amount: '1',
          userLevel: 1,
          form: { address: 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t' },
        }),
      ),
    ).toMatchObject({ code: 'payment_fee_exceeds_amount', vars: { fee: '1', currency: 'USDT' } });
  });

  it('operators list, price, disable and enable systems (whole or per currency); the API follows', async () => {
    const listed = (await run('payments:systems', 'deposit')) as Array<{ id: string; currency: string; fee_percent: string; min: string }>;
    expect(listed.find((row) => row.id === 'sandbox-card' && row.currency === 'USD')).toMatchObject({ fee_percent: '1.5', min: '1.00' });

    const priced = await run('payments:system:price', 'deposit', 'sandbox-card', 'currency=usd', 'fee_percent=2.25', 'fee_fixed=0.30', 'min=5', 'max=2500');
    expect(priced).toEqual([expect.objectContaining({ currency: 'USD', fee_percent: '2.25', fee_fixed: '0.30', min: '5.00', max: '2500.00' })]);
    const deposit = (currency: string, amount: string) =>
      call(ctx.app, '/api/deposit/integration_json', { token: user.token, locale: 'en', payload: { ps: 'sandbox-card', currency, amount } });
    const opened = await deposit('USD', '100');
    expect(opened.json().payment).toMatchObject({ amount: '100.00', fee: '2.55', receive: '97.45' });
    expect((await deposit('USD', '4.99')).json()).toMatchObject({ code: 'amount_too_small', message: 'The minimum is 5 USD' });

    await run('payments:system:disable', 'deposit', 'sandbox-card', 'currency=USD');
    const systems = async () => ((await call(ctx.app, '/api/deposit/ps', { token: user.token })).json() as TDepositSystems).currencies;
    expect((await systems()).find((entry) => entry.currency === 'USD')?.systems.map((system) => system.id)).toEqual(['sandbox-bank']);
    expect((await deposit('USD', '100')).json().fields).toEqual({ currency: 'This payment system does not take this currency.' });
    expect((await deposit('EUR', '100')).statusCode).toBe(200);
    await run('payments:system:disable', 'deposit', 'sandbox-card');
    expect((await systems()).find((entry) => entry.currency === 'EUR')?.systems.map((system) => system.id)).toEqual(['sandbox-bank']);
    expect((await deposit('EUR', '100')).json().fields).toEqual({ ps: 'Choose a payment system from the list.' });
    await run('payments:system:enable', 'deposit', 'sandbox-card');
    await run('payments:system:enable', 'deposit', 'sandbox-card', 'currency=USD');
    expect((await deposit('USD', '100')).statusCode).toBe(200);

    // A new currency needs its limits; a chain system only takes currencies with an address format.
    await expect(run('payments:system:price', 'deposit', 'sandbox-card', 'currency=TON', 'fee_percent=1')).rejects.toThrow(
      /the minimum and the maximum are required/,
    );
    await expect(run('payments:system:price', 'deposit', 'sandbox-chain', 'currency=RUB', 'min=1', 'max=2')).rejects.toThrow(/no known address format/);
    await expect(run('payments:system:price', 'deposit', 'sandbox-card', 'currency=USD', 'fee_percent=100')).rejects.toThrow(/fee_percent/);
    await expect(run('payments:system:price', 'deposit', 'sandbox-card', 'currency=USD', 'min=3000')).rejects.toThrow(/maximum must be at least the minimum/);
    await expect(run('payments:system:price', 'deposit', 'sandbox-card', 'currency=USD', 'confirmations=-1')).rejects.toThrow(/confirmations/);
    await expect(run('payments:system:enable', 'refund', 'sandbox-card')).rejects.toThrow(/direction/);
    await expect(run('payments:system:enable', 'deposit', 'nobody')).rejects.toThrow(/No deposit system “nobody”/);
    await expect(run('payments:system:enable', 'deposit', 'sandbox-card', 'currency=TON')).rejects.toThrow(/no TON terms/);
    await expect(run('payments:system:price', 'deposit')).rejects.toThrow(/usage/);
    await expect(run('payments:systems', 'sideways')).rejects.toThrow(/usage/);
    const unchanged = (await run('payments:systems', 'deposit')) as Array<{ id: string; currency: string; min: string }>;
    expect(unchanged.find((row) => row.id === 'sandbox-card' && row.currency === 'USD')?.min).toBe('5.00');
  });
});
