import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getDocument } from 'pdfjs-dist/legacy/build/pdf.mjs';
import { displayAmount, formatAmount } from '@obmen/shared';
import { build, ENGINES } from '../../helpers.ts';
import { call, postForm } from '../../auth-helpers.ts';
import { createFixtureUser, fund, type TFixtureUser } from '../../fixtures.ts';
import { loadPaymentProviders } from '../../../src/providers/index.ts';
import { bankReceived } from '../../../src/providers/sandbox/payments.ts';
import { readStatement } from '../../../src/domains/history/statement.ts';

/** Every page's text, as a reader (pdf.js) extracts it: the PDF opens, and says what it says. */
async function pdfText(bytes: Buffer): Promise<{ pages: number; text: string }> {
  const task = getDocument({ data: new Uint8Array(bytes), disableFontFace: true, useSystemFonts: false });
  const pdf = await task.promise;
  const texts: string[] = [];
  for (let i = 1; i <= pdf.numPages; i++) {
    const content = await (await pdf.getPage(i)).getTextContent();
    texts.push(content.items.map((item) => ('str' in item ? item.str : '')).join(' '));
  }
  await task.destroy();
  return { pages: pdf.numPages, text: texts.join('\n').replace(/\s+/g, ' ') };
}

describe.each(ENGINES)('account statements (%s)', (engine) => {
  let ctx: Awaited<ReturnType<typeof build>>;
  let ann: TFixtureUser;
  let bob: TFixtureUser;
  const providers = loadPaymentProviders({ NODE_ENV: 'test' });
  // Ledger rows carry the database's time: the statement's day is today's (UTC).
  const today = () => new Date().toISOString().slice(0, 10);

  beforeAll(async () => {
    ctx = await build(engine, { PUBLIC_URL: 'https://obmen.test' });
    ann = await createFixtureUser(ctx.db, { firstName: 'Анна', lastName: 'Иванова' });
    bob = await createFixtureUser(ctx.db);
    await ctx.db.query('UPDATE users SET verification_level = 1 WHERE id = ANY($1::bigint[])', [[ann.id, bob.id]]);
    await fund(ctx.db, ann.id, 'USDT', 100_000_000n);
    const sent = await postForm(ctx.app, ann, '/api/transfer', { account_id: String(bob.accountId), currency: 'USDT', amount: '10' }, 'statement-transfer-1');
    expect(sent.statusCode, sent.body).toBe(200);
    const quote = await postForm(ctx.app, ann, '/api/exchange/check', { src: 'USDT', dst: 'BTC', amount: '20' });
    const exchanged = await postForm(ctx.app, ann, '/api/exchange/USDT/BTC', { quote: quote.json().quote.token }, 'statement-exchange-1');
    expect(exchanged.statusCode, exchanged.body).toBe(200);
    const opened = await call(ctx.app, '/api/deposit/integration_json', {
      token: ann.token,
      locale: 'en',
      payload: { ps: 'sandbox-bank', currency: 'RUB', amount: '5000' },
    });
    expect(opened.statusCode, opened.body).toBe(200);
    const { payment } = opened.json();
    const paid = await bankReceived(ctx.db, providers, { reference: payment.bank.reference, amount: '5000', currency: 'RUB', payer: 'Anna', now: new Date() });
    expect(paid.result).toBe('credited');
  });
  afterAll(() => ctx.close());

  const statement = (user: TFixtureUser, query: string, locale: 'ru' | 'en' = 'en') =>
    ctx.app.inject({ url: `/api/history/statement?${query}`, headers: { authorization: `Bearer ${user.token}`, 'x-obmen-locale': locale } });

  it("balances, movements and fees add up to the ledger's", async () => {
    const day = new Date(`${today()}T00:00:00Z`);
    const read = await readStatement(ctx.db, ann.id, { from: day, to: new Date(day.getTime() + 86_400_000) }, 'en');
    const balances = await ctx.db.query<{ currency: string; balance: string }>(
      `SELECT currency, balance::text AS balance FROM ledger_accounts WHERE kind = 'user' AND user_id = $1`,
      [ann.id],
    );
    expect(read.sections.map((s) => s.currency.code).sort()).toEqual(
      balances
        .filter((b) => b.balance !== '0')
        .map((b) => b.currency)
        .sort(),
    );
    for (const section of read.sections) {
      expect(section.opening).toBe(0n);
      expect(section.closing).toBe(BigInt(balances.find((b) => b.currency === section.currency.code)!.balance));
      expect(section.opening + section.credits - section.debits).toBe(section.closing);
      expect(section.lines.at(-1)!.balance).toBe(section.closing);
    }
    const usdt = read.sections.find((s) => s.currency.code === 'USDT')!;
    expect(usdt.lines.map((line) => [line.kind, line.counterparty])).toEqual([
      ['adjustment', null],
      ['transfer', String(bob.accountId)],
      ['exchange', 'USDT → BTC'],
    ]);
    // What the house took, as the domain tables say.
    const [transfer] = await ctx.db.query<{ fee: string; amount: string }>(
      'SELECT fee::text AS fee, amount::text AS amount FROM transfers WHERE sender_id = $1',
      [ann.id],
    );
    expect(usdt.lines[1]!.fee).toBe(BigInt(transfer!.fee));
    expect(usdt.lines[1]!.amount).toBe(-BigInt(transfer!.amount) - BigInt(transfer!.fee));
    const [exchange] = await ctx.db.query<{ fee: string }>('SELECT fee::text AS fee FROM exchanges WHERE user_id = $1', [ann.id]);
    expect(usdt.lines[2]!.fee).toBeGreaterThanOrEqual(BigInt(exchange!.fee));
    expect(read.sections.find((s) => s.currency.code === 'RUB')!.lines.map((line) => line.kind)).toEqual(['deposit']);
    expect(read.name).toBe('Анна Иванова');

    // Tomorrow's statement opens where today's closes, with no movement.
    const next = await readStatement(ctx.db, ann.id, { from: new Date(day.getTime() + 86_400_000), to: new Date(day.getTime() + 2 * 86_400_000) }, 'en');
    expect(next.sections.map((s) => [s.currency.code, s.opening, s.lines.length])).toEqual(read.sections.map((s) => [s.currency.code, s.closing, 0]));
  });

  it('the PDF opens, in the reader language, with Cyrillic, and shows the totals', async () => {
    const en = await statement(ann, `from=${today()}&to=${today()}`);
    expect(en.statusCode, en.body.slice(0, 300)).toBe(200);
    expect(en.headers['content-type']).toBe('application/pdf');
    expect(en.headers['content-disposition']).toMatch(/^attachment; filename="obmen-statement-\d{8}-\d{4}-\d{2}-\d{2}\.pdf"$/);
    expect(en.rawPayload.subarray(0, 5).toString()).toBe('%PDF-');
    const { text } = await pdfText(en.rawPayload);
    expect(text).toContain('Account statement');
    expect(text).toContain('Holder: Анна Иванова');
    expect(text).toContain(`Account: ${ann.accountId}`);
    expect(text).toContain(String(bob.accountId));
    expect(text).toContain('USDT → BTC');
    const [usdt] = await ctx.db.query<{ balance: string }>(
      `SELECT balance::text AS balance FROM ledger_accounts WHERE kind = 'user' AND user_id = $1 AND currency = 'USDT'`,
      [ann.id],
    );
    expect(text).toContain(`Closing balance: ${displayAmount(formatAmount(usdt!.balance, 6), 'en')}`);

    const ru = await pdfText((await statement(ann, `month=${today().slice(0, 7)}`, 'ru')).rawPayload);
    expect(ru.text).toContain('Выписка по счёту');
    expect(ru.text).toContain(`Исходящий остаток: ${displayAmount(formatAmount(usdt!.balance, 6), 'ru')}`);
    expect(ru.text).toContain('Перевод');

    const empty = await pdfText((await statement(bob, 'from=2026-01-01&to=2026-01-31')).rawPayload);
    expect(empty.text).toContain('no money and had no movements');
  });

  it('bad periods are refused clearly and nothing is made', async () => {
    const refusals: Array<[string, Record<string, string>]> = [
      ['', { from: 'This field is required.' }],
      ['from=2026-03-01', { to: 'This field is required.' }],
      ['from=2026-03-05&to=2026-03-01', { to: 'The period ends before it starts' }],
      ['month=2026-13', { month: expect.any(String) as unknown as string }],
      ['from=2099-01-01&to=2099-01-31', { from: 'The period has not started yet' }],
      ['month=2099-01', { month: 'The period has not started yet' }],
      ['from=2024-01-01&to=2025-06-01', { to: 'A statement covers at most a year: split the period' }],
    ];
    for (const [query, fields] of refusals) {
      const res = await statement(ann, query);
      expect([res.statusCode, res.json().code], query).toEqual([400, 'validation']);
      expect(res.json().fields, query).toEqual(fields);
    }
    expect((await ctx.app.inject({ url: '/api/history/statement?month=2026-11' })).statusCode).toBe(401);
  });
});
