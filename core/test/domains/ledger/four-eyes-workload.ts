import { expect } from 'vitest';
import { formatAmount, type TOpsRequest } from '@obmen/shared';
import type { Db } from '../../../src/db/index.ts';
import { AppError } from '../../../src/errors.ts';
import { verifyAuditChain } from '../../../src/domains/audit/service.ts';
import { placeHold } from '../../../src/domains/ledger/holds.ts';
import { decideRequest, proposeRequest } from '../../../src/domains/ops/requests.ts';
import { activeOperatorByEmail, createOperator, type TOperator } from '../../../src/domains/ops/service.ts';
import type { TFixtureUser } from '../../fixtures.ts';
import { CURRENCIES, INITIAL, PRECISION, prng, type TCode } from './ledger-workload.ts';

/*
 * The back office's share of the invariants workload, run alongside the customers' transfers and
 * exchanges: finance operators propose `ledger.adjust` credits and debits (some beyond any
 * balance) and `ledger.reverse` of a customer's earlier transfers and adjustments (some already
 * reversed, some of held money), and another operator decides: approves, declines, approves twice
 * at once, or approves while a third declines. What each decision did is recorded for the checks
 * after, and expectFourEyesKeptEveryRule compares them with what the database holds.
 */

/** What an applied approval did, as the test asked for it. */
export type TAppliedRequest = { action: 'ledger.adjust'; userId: string; currency: TCode; signed: bigint } | { action: 'ledger.reverse'; transaction: string };

export type TFourEyesResult = {
  seconds: number;
  proposed: number;
  /** Request id → what its approval applied (one entry per request, however many approvals were sent). */
  applied: Map<string, TAppliedRequest>;
  /** Requests whose approval was answered as applied more than once. */
  appliedTwice: string[];
  declined: number;
  /** Refusals by step and code: the expected ones only. */
  refusals: Record<string, number>;
  /** Answers that break a rule of the requests (a refusal that moved the request on, a race with two or no winners). */
  broken: string[];
  /** Errors no operator should see (a deadlock, a crash, an unexpected refusal). */
  unexpected: string[];
};

/** Refusals an operator may get, by step. */
const EXPECTED = {
  propose: new Set(['already_reversed', 'ops_reverse_hold']),
  approve: new Set(['insufficient_funds', 'ops_request_closed']),
  decline: new Set(['ops_request_closed']),
  hold: new Set(['insufficient_funds']),
};

/** Three enrolled finance operators (the enrolment's password and TOTP skipped, as the CLI tests do). */
export async function financeOperators(db: Db, prefix: string, count = 3): Promise<TOperator[]> {
  const operators: TOperator[] = [];
  for (let i = 0; i < count; i++) {
    const { email } = await createOperator(db, { email: `${prefix}-finance-${i}@obmen.test`, roles: ['finance'], actor: 'cli:test', now: new Date() });
    await db.query("UPDATE operators SET password_hash = 'x', totp_secret = 'x', enrolled_at = now() WHERE email = $1", [email]);
    operators.push((await activeOperatorByEmail(db, email))!);
  }
  return operators;
}

const codeOf = (err: unknown) => (err instanceof AppError ? err.code : `${(err as { code?: string }).code ?? 'error'}: ${(err as Error).message}`);

/** Runs `ops` four-eyes requests from `workers` workers; operators never race each other's proposals on one subject (the desk shows it pending). */
export async function runFourEyesWorkload(
  db: Db,
  users: TFixtureUser[],
  operators: TOperator[],
  options: { ops: number; workers: number; seed: number; prefix: string },
): Promise<TFourEyesResult> {
  const { ops, workers, seed, prefix } = options;
  const result: TFourEyesResult = { seconds: 0, proposed: 0, applied: new Map(), appliedTwice: [], declined: 0, refusals: {}, broken: [], unexpected: [] };
  const claimed = new Set<string>();
  const reversedByUs: Array<{ user: TFixtureUser; transaction: string }> = [];
  let call = 0;
  const actor = (operator: TOperator) => ({ operator, requestId: `${prefix}-ops-${call++}`, ip: '127.0.0.1', now: new Date() });

  const refused = (step: keyof typeof EXPECTED, err: unknown) => {
    const code = codeOf(err);
    if (EXPECTED[step].has(code)) result.refusals[`${step}:${code}`] = (result.refusals[`${step}:${code}`] ?? 0) + 1;
    else result.unexpected.push(`${step}: ${code}`);
    return code;
  };

  /** One decision; its answer: the state it left, or the refusal's code. */
  const decide = async (id: string, decision: 'approve' | 'decline', operator: TOperator): Promise<string> => {
    try {
      return (await decideRequest(db, id, decision, actor(operator))).state;
    } catch (err) {
      return refused(decision, err);
    }
  };

  const stateOf = async (id: string) => (await db.query<{ state: string }>('SELECT state FROM ops_requests WHERE id = $1', [id]))[0]!.state;

  /**
   * The decisions on one proposed request, some racing. At most one applies; a refused approval
   * leaves it pending, and then another operator declines it.
   */
  const settle = async (request: TOpsRequest, proposer: TOperator, applied: TAppliedRequest, mustRefuse: boolean, random: () => number) => {
    const [first, second] = operators.filter((op) => op !== proposer).sort(() => random() - 0.5) as [TOperator, TOperator];
    const roll = random();
    // A debit beyond every balance is only ever approved (once or twice at once): each approval must be refused.
    const decisions: Array<['approve' | 'decline', TOperator]> = mustRefuse
      ? roll < 0.6
        ? [['approve', first]]
        : [
            ['approve', first],
            ['approve', second],
          ]
      : roll < 0.55
        ? [['approve', first]]
        : roll < 0.7
          ? [['decline', first]]
          : roll < 0.88
            ? [
                ['approve', first],
                ['approve', second],
              ]
            : [
                ['approve', first],
                ['decline', second],
              ];
    const answers = await Promise.all(decisions.map(([decision, op]) => decide(request.id, decision, op)));
    const approvals = answers.filter((answer, i) => answer === 'approved' && decisions[i]![0] === 'approve').length;
    const declines = answers.filter((answer, i) => answer === 'declined' && decisions[i]![0] === 'decline').length;
    const state = await stateOf(request.id);
    const said = `${request.id} (${decisions.map(([decision]) => decision).join(' + ')}): ${answers.join(', ')}, now ${state}`;
    if (approvals > 1) result.appliedTwice.push(request.id);
    if (approvals + declines > 1) result.broken.push(`${said}: more than one decision took effect`);
    if (approvals === 1) result.applied.set(request.id, applied);
    if (declines === 1) result.declined++;
    if (approvals + declines === 1 && state !== (approvals ? 'approved' : 'declined')) result.broken.push(`${said}: the stored state differs`);
    // The loser of a race is told the request is closed; an approval may also be refused for the balance.
    if (answers.some((answer) => !['approved', 'declined', 'ops_request_closed', 'insufficient_funds'].includes(answer))) result.broken.push(said);
    if (mustRefuse && answers.some((answer) => answer !== 'insufficient_funds')) result.broken.push(`${said}: a debit beyond every balance was not refused`);
    if (approvals + declines === 0) {
      // Every approval refused for the balance: nothing decided, nothing posted, the request waits; another operator declines it.
      if (state !== 'pending' || answers.some((answer) => answer !== 'insufficient_funds')) result.broken.push(`${said}: refused but not pending`);
      const posted = await db.query('SELECT 1 FROM ledger_transactions WHERE actor = $1', [`ops_request:${request.id}`]);
      if (posted.length) result.broken.push(`${said}: refused but posted`);
      const declined = await decide(request.id, 'decline', first);
      if (declined === 'declined') result.declined++;
      else result.broken.push(`${said}: then declining answered ${declined}`);
    }
  };

  const propose = async (operator: TOperator, proposal: Parameters<typeof proposeRequest>[1]): Promise<TOpsRequest | null> => {
    try {
      const request = await proposeRequest(db, proposal, actor(operator));
      result.proposed++;
      return request;
    } catch (err) {
      refused('propose', err);
      return null;
    }
  };

  const adjust = async (random: () => number, pick: <T>(list: readonly T[]) => T) => {
    const user = pick(users.filter((u) => !claimed.has(`customer:${u.accountId}`)));
    const subject = `customer:${user.accountId}`;
    claimed.add(subject);
    try {
      const currency = pick(CURRENCIES);
      const direction = random() < 0.5 ? 'credit' : 'debit';
      // One debit in four asks for more than all customers hold together.
      const beyond = direction === 'debit' && random() < 0.25;
      const amount = beyond ? INITIAL[currency] * 1000n : BigInt(Math.floor(1 + random() * 20)) * (INITIAL[currency] / 1000n);
      const proposer = pick(operators);
      const request = await propose(proposer, {
        action: 'ledger.adjust',
        params: {
          account_id: user.accountId,
          currency,
          amount: formatAmount(amount, PRECISION[currency]),
          direction,
          reason: pick(['compensation', 'refund', 'correction'] as const),
          memo: `invariants ${seed}`,
        },
        reason: 'customer_request',
        text: '',
      });
      if (request)
        await settle(
          request,
          proposer,
          { action: 'ledger.adjust', userId: user.id, currency, signed: direction === 'credit' ? amount : -amount },
          beyond,
          random,
        );
    } finally {
      claimed.delete(subject);
    }
  };

  const reverse = async (random: () => number, pick: <T>(list: readonly T[]) => T) => {
    let user = pick(users);
    let transaction: string | undefined;
    // One in five asks again for a reversal already made: refused at proposal.
    if (reversedByUs.length && random() < 0.2) ({ user, transaction } = pick(reversedByUs));
    else {
      const recent = await db.query<{ id: string }>(
        `SELECT DISTINCT t.id::text AS id FROM ledger_accounts a JOIN postings p ON p.account_id = a.id JOIN ledger_transactions t ON t.id = p.transaction_id
          WHERE a.kind = 'user' AND a.user_id = $1 AND t.kind IN ('transfer', 'adjustment') ORDER BY 1 DESC LIMIT 40`,
        [user.id],
      );
      transaction = recent.length ? pick(recent).id : undefined;
    }
    if (!transaction || claimed.has(`ledger_transaction:${transaction}`)) return;
    const subject = `ledger_transaction:${transaction}`;
    claimed.add(subject);
    try {
      const proposer = pick(operators);
      const request = await propose(proposer, {
        action: 'ledger.reverse',
        params: { account_id: user.accountId, transaction_id: transaction, memo: `invariants ${seed}` },
        reason: 'customer_request',
        text: '',
      });
      if (!request) return;
      await settle(request, proposer, { action: 'ledger.reverse', transaction }, false, random);
      if (result.applied.has(request.id)) reversedByUs.push({ user, transaction });
    } finally {
      claimed.delete(subject);
    }
  };

  /** Money put on hold, then its transaction proposed for reversal: refused, nothing changes. */
  const reverseHeld = async (_random: () => number, pick: <T>(list: readonly T[]) => T) => {
    const user = pick(users);
    const currency = pick(CURRENCIES);
    let hold;
    try {
      hold = await db.transaction((tx) => placeHold(tx, { userId: user.id, currency, amount: INITIAL[currency] / 1000n, purpose: `invariants ${seed}` }));
    } catch (err) {
      refused('hold', err);
      return;
    }
    const request = await propose(pick(operators), {
      action: 'ledger.reverse',
      params: { account_id: user.accountId, transaction_id: hold.place_transaction_id!, memo: `invariants ${seed}` },
      reason: 'customer_request',
      text: '',
    });
    if (request) result.broken.push(`${request.id}: the reversal of a hold was proposed`);
  };

  const worker = async (index: number) => {
    const random = prng(seed ^ (0x0f0e + index * 104729));
    const pick = <T>(list: readonly T[]) => list[Math.floor(random() * list.length)]!;
    const share = Math.ceil(ops / workers);
    for (let n = 0; n < share && index * share + n < ops; n++) {
      const roll = random();
      try {
        await (roll < 0.55 ? adjust : roll < 0.92 ? reverse : reverseHeld)(random, pick);
      } catch (err) {
        result.unexpected.push(`worker ${index}: ${codeOf(err)}`);
      }
    }
  };
  const started = Date.now();
  await Promise.all(Array.from({ length: workers }, (_, index) => worker(index)));
  result.seconds = (Date.now() - started) / 1000;
  return result;
}

/** The adjustment house accounts' balances by currency, minor units. */
export async function adjustmentSums(db: Db): Promise<Map<string, bigint>> {
  const rows = await db.query<{ currency: string; total: string }>(
    "SELECT currency, sum(balance)::text AS total FROM ledger_accounts WHERE kind = 'adjustment' GROUP BY currency",
  );
  return new Map(rows.map((row) => [row.currency, BigInt(row.total)]));
}

/**
 * The four-eyes checks on a finished run: every approved request posted exactly one ledger
 * transaction (an adjustment of what was asked, or the reversal of what was named) and nothing
 * else did; refused ones posted nothing and ended declined; the adjustment house accounts moved
 * opposite to the customers; no balance is negative; the audit chain holds every step and verifies.
 */
export async function expectFourEyesKeptEveryRule(db: Db, r: TFourEyesResult, operators: TOperator[], adjustmentBefore: Map<string, bigint>): Promise<void> {
  expect(r.unexpected, 'errors no operator should see').toEqual([]);
  expect(r.broken, 'decisions that broke a rule of the requests').toEqual([]);
  expect(r.appliedTwice, 'requests whose approval applied twice').toEqual([]);

  const requests = await db.query<{ id: string; state: string; action: string; kinds: string[]; reverses: string[] }>(
    `SELECT r.id::text AS id, r.state, r.action, array_remove(array_agg(t.kind ORDER BY t.id), NULL) AS kinds,
            array_remove(array_agg(t.reverses::text ORDER BY t.id), NULL) AS reverses
       FROM ops_requests r LEFT JOIN ledger_transactions t ON t.actor = 'ops_request:' || r.id
      WHERE r.proposed_by = ANY ($1::bigint[]) GROUP BY r.id`,
    [operators.map((op) => op.id)],
  );
  expect(requests.length, 'stored requests = proposals answered as stored').toBe(r.proposed);
  expect(
    requests.filter((row) => row.state === 'pending').map((row) => row.id),
    'requests left pending',
  ).toEqual([]);
  const approved = requests.filter((row) => row.state === 'approved');
  expect(approved.map((row) => row.id).sort(), 'approved requests = approvals answered as applied').toEqual([...r.applied.keys()].sort());
  expect(
    requests.filter((row) => row.kinds.length !== (row.state === 'approved' ? 1 : 0)).map((row) => `${row.id} ${row.state}: ${row.kinds.join(', ')}`),
    'approved requests applied other than once, or others applied',
  ).toEqual([]);
  for (const row of approved) {
    const asked = r.applied.get(row.id)!;
    expect([row.action, ...row.kinds, ...row.reverses], `request ${row.id}`).toEqual(
      asked.action === 'ledger.adjust' ? ['ledger.adjust', 'adjustment'] : ['ledger.reverse', 'reversal', asked.transaction],
    );
  }
  const [posted] = await db.query<{ n: number }>(
    "SELECT count(*)::int AS n FROM ledger_transactions WHERE kind IN ('adjustment', 'reversal') AND actor LIKE 'ops_request:%'",
  );
  expect(posted!.n, 'adjustment and reversal transactions of requests = requests applied').toBe(r.applied.size);

  // What the customers and the adjustment accounts were asked to move, per currency: each adjustment as proposed (the
  // house opposite), and each reversal the opposite of what its transaction moved on them.
  const want = new Map<string, { customers: bigint; house: bigint }>();
  const add = (currency: string, customers: bigint, house: bigint) => {
    const was = want.get(currency) ?? { customers: 0n, house: 0n };
    want.set(currency, { customers: was.customers + customers, house: was.house + house });
  };
  for (const asked of r.applied.values()) if (asked.action === 'ledger.adjust') add(asked.currency, asked.signed, -asked.signed);
  const reversed = [...r.applied.values()].flatMap((asked) => (asked.action === 'ledger.reverse' ? [asked.transaction] : []));
  const moved = (where: string, params: unknown[]) =>
    db.query<{ currency: string; customers: string; house: string }>(
      `SELECT p.currency, coalesce(sum(p.amount) FILTER (WHERE a.kind = 'user'), 0)::text AS customers,
              coalesce(sum(p.amount) FILTER (WHERE a.kind = 'adjustment'), 0)::text AS house
         FROM postings p JOIN ledger_accounts a ON a.id = p.account_id JOIN ledger_transactions t ON t.id = p.transaction_id
        WHERE ${where} GROUP BY p.currency`,
      params,
    );
  for (const row of await moved('t.id = ANY ($1::bigint[])', [reversed])) add(row.currency, -BigInt(row.customers), -BigInt(row.house));
  const byRequests = await moved("t.actor LIKE 'ops_request:%'", []);
  const after = await adjustmentSums(db);
  for (const currency of CURRENCIES) {
    const row = byRequests.find((m) => m.currency === currency) ?? { customers: '0', house: '0' };
    const asked = want.get(currency) ?? { customers: 0n, house: 0n };
    expect(
      { customers: BigInt(row.customers), house: BigInt(row.house), houseBalance: (after.get(currency) ?? 0n) - (adjustmentBefore.get(currency) ?? 0n) },
      `${currency}: the customers moved as asked, the adjustment accounts opposite`,
    ).toEqual({ ...asked, houseBalance: asked.house });
  }

  const [negative] = await db.query<{ n: number }>("SELECT count(*)::int AS n FROM ledger_accounts WHERE kind IN ('user', 'hold') AND balance < 0");
  expect(negative!.n, 'negative customer or hold balances').toBe(0);
  const audited = await db.query<{ step: string; n: number }>(
    "SELECT split_part(action, ':', 1) AS step, count(*)::int AS n FROM operator_audit WHERE action LIKE 'request.%:ledger.%' GROUP BY 1 ORDER BY 1",
  );
  const steps = new Map(audited.map((row) => [row.step, row.n]));
  expect(
    { proposed: steps.get('request.propose') ?? 0, approved: steps.get('request.approve') ?? 0, declined: steps.get('request.decline') ?? 0 },
    'audited proposals and decisions',
  ).toEqual({ proposed: r.proposed, approved: r.applied.size, declined: r.declined });
  expect(await verifyAuditChain(db), 'the audit chain').toMatchObject({ intact: true });
}
