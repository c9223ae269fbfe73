import { expect } from 'vitest';
import { formatAmount } from '@obmen/shared';
import type { Db } from '../../../src/db/index.ts';
import type { TFixtureUser } from '../../fixtures.ts';
import { checkLedger } from '../../../src/domains/ledger/invariants.ts';
import { CURRENCIES, INITIAL, PRECISION, currencySums, prng } from './ledger-workload.ts';

/*
 * Random transfers over real HTTP, for the fault tests: the client may give
 * up (abort), the core may be killed, the database may restart. Every answer is sorted into
 * acknowledged (200: applied or replayed), refused (a 422 the client may see) or unknown (no
 * answer, aborted, 503), and unknown keys are retried with the same Idempotency-Key until they
 * settle, as docs/ops.md tells a client to.
 */
const REFUSALS = new Set(['insufficient_funds', 'amount_too_small', 'amount_too_large']);

type TRequest = { user: TFixtureUser; body: { account_id: string; currency: string; amount: string } };

export type THttpRun = {
  requests: Map<string, TRequest>;
  /** key → transfer id of the 200 answer; every later 200 must carry the same id. */
  acked: Map<string, string>;
  refused: Set<string>;
  /** Keys whose outcome the client does not know (yet). */
  unknown: Set<string>;
  /** Answers that must never reach a client: 500s, other codes, ids that change between replays. */
  unexpected: string[];
  /** How many answers of each kind: "200", "200 replayed", "422", "503 database_unavailable", "network", "aborted". */
  answers: Record<string, number>;
};

export function newHttpRun(): THttpRun {
  return { requests: new Map(), acked: new Map(), refused: new Set(), unknown: new Set(), unexpected: [], answers: {} };
}

/** Sends one transfer and records what the client learnt. */
export async function sendTransfer(run: THttpRun, base: string, key: string, abortAfterMs?: number): Promise<void> {
  const { user, body } = run.requests.get(key)!;
  const count = (kind: string) => (run.answers[kind] = (run.answers[kind] ?? 0) + 1);
  let res: Response;
  let json: { code?: string; transfer?: { id: string } };
  try {
    res = await fetch(`${base}/api/transfer`, {
      method: 'POST',
      headers: { authorization: `Bearer ${user.token}`, 'content-type': 'application/json', 'idempotency-key': key },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(abortAfterMs ?? 30_000),
    });
    json = (await res.json()) as typeof json;
  } catch (err) {
    count((err as Error).name === 'TimeoutError' ? 'aborted' : 'network');
    if (!run.acked.has(key) && !run.refused.has(key)) run.unknown.add(key);
    return;
  }
  const replayed = res.headers.get('idempotent-replayed') === 'true';
  if (res.status === 200) {
    count(replayed ? '200 replayed' : '200');
    const id = json.transfer!.id;
    const earlier = run.acked.get(key);
    if (earlier !== undefined && earlier !== id) run.unexpected.push(`${key}: acknowledged as ${earlier}, then as ${id}`);
    run.acked.set(key, id);
    // A repeat of a refused key is a new attempt (a refusal stores nothing): it may now succeed.
    run.refused.delete(key);
    run.unknown.delete(key);
  } else if (res.status === 422 && REFUSALS.has(json.code ?? '')) {
    count('422');
    run.refused.add(key);
    run.unknown.delete(key);
  } else if (res.status === 503 && (json.code === 'database_unavailable' || json.code === 'busy')) {
    count(`503 ${json.code}`);
    expect(res.headers.get('retry-after')).toMatch(/^\d+$/);
    if (!run.acked.has(key) && !run.refused.has(key)) run.unknown.add(key);
  } else {
    count(String(res.status));
    run.unexpected.push(`${key}: ${res.status} ${JSON.stringify(json)}`);
  }
}

/**
 * `ops` random transfers between `users` from `workers` workers (20 % overdraw attempts, 10 %
 * repeats of an earlier key, `abortRate` of requests abandoned after 0-20 ms). `base()` is read
 * per request, so the test may move the core to another port mid-run.
 */
export async function runHttpTransfers(
  run: THttpRun,
  base: () => string,
  users: TFixtureUser[],
  options: { ops: number; workers: number; seed: number; prefix: string; abortRate?: number; onOperation?: (done: number) => Promise<void> | void },
): Promise<void> {
  let done = 0;
  const worker = async (index: number) => {
    const random = prng(options.seed + index * 7919);
    const pick = <T>(list: readonly T[]) => list[Math.floor(random() * list.length)]!;
    const mine: string[] = [];
    const share = Math.ceil(options.ops / options.workers);
    for (let n = 0; n < share && index * share + n < options.ops; n++) {
      const abort = random() < (options.abortRate ?? 0) ? Math.floor(random() * 20) : undefined;
      if (mine.length && random() < 0.1) {
        await sendTransfer(run, base(), pick(mine), abort);
      } else {
        const key = `${options.prefix}-${index}-${n}`;
        const user = pick(users);
        let recipient = pick(users);
        while (recipient === user) recipient = pick(users);
        const code = pick(CURRENCIES);
        const amount = random() < 0.2 ? INITIAL[code] * 20n : BigInt(Math.floor(1 + random() * 20)) * (INITIAL[code] / 1000n);
        run.requests.set(key, { user, body: { account_id: String(recipient.accountId), currency: code, amount: formatAmount(amount, PRECISION[code]) } });
        mine.push(key);
        await sendTransfer(run, base(), key, abort);
      }
      await options.onOperation?.(++done);
    }
  };
  await Promise.all(Array.from({ length: options.workers }, (_, index) => worker(index)));
}

/** Retries every unknown key with its Idempotency-Key until it is acknowledged or refused (bounded). */
export async function settleUnknown(run: THttpRun, base: string, limitMs = 60_000): Promise<number> {
  const retried = run.unknown.size;
  const started = Date.now();
  while (run.unknown.size && Date.now() - started < limitMs) {
    for (const key of [...run.unknown]) await sendTransfer(run, base, key);
    if (run.unknown.size) await new Promise((resolve) => setTimeout(resolve, 200));
  }
  expect([...run.unknown], 'keys still unknown after retrying').toEqual([]);
  return retried;
}

/**
 * The ledger after the run: every rule of checkLedger, per-currency sums unchanged, and every
 * key applied exactly as the client was told: acknowledged keys once, with the acknowledged
 * id; refused keys never.
 */
export async function expectTransfersExactlyOnce(db: Db, run: THttpRun, prefix: string, sumsBefore: Record<string, string>): Promise<void> {
  expect(run.unexpected, 'answers no client may see').toEqual([]);
  const report = await checkLedger(db);
  expect(report.violations, 'ledger rules').toEqual([]);
  expect(await currencySums(db), 'per-currency sums over all accounts').toEqual(sumsBefore);
  const rows = await db.query<{ key: string; id: string }>('SELECT idempotency_key AS key, id::text AS id FROM transfers WHERE idempotency_key LIKE $1', [
    `${prefix}-%`,
  ]);
  const stored = new Map<string, string[]>();
  for (const row of rows) stored.set(row.key, [...(stored.get(row.key) ?? []), row.id]);
  const wrong: string[] = [];
  for (const [key, id] of run.acked)
    if (stored.get(key)?.join() !== id) wrong.push(`${key}: acknowledged ${id}, stored ${stored.get(key)?.join() ?? 'nothing'}`);
  for (const key of run.refused) if (stored.has(key)) wrong.push(`${key}: refused, yet stored`);
  for (const key of stored.keys()) if (!run.acked.has(key)) wrong.push(`${key}: stored, never acknowledged`);
  expect(wrong, 'keys applied other than exactly as acknowledged').toEqual([]);
  expect(run.acked.size + run.refused.size).toBe(run.requests.size);
}
