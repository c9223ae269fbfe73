import { loadConfig } from '../config.ts';
import { openDocumentCipher } from '../domains/verification/cipher.ts';
import { loadPaymentProviders } from '../providers/index.ts';
import { reconciliationReport } from '../domains/ops/reconciliation.ts';
import { runSandboxPayouts } from '../providers/sandbox/payouts.ts';
import { parseArgs } from 'node:util';
import { WITHDRAWAL_REJECT_REASONS } from '@obmen/shared';
import type { Db } from '../db/index.ts';
import { listWithdrawals, setAutoApproval, setLargeAmount } from '../domains/payments/withdrawals.ts';
import type { TPayoutDeps } from '../domains/payments/withdrawal-states.ts';
import { approveOnDesk, failOnDesk, rejectOnDesk, retryOnDesk } from '../domains/ops/withdrawals.ts';
import { options, type TCommand } from './command.ts';
import { cliOperator } from './ops-actor.ts';

const LIST_USAGE = 'usage: withdraw:list [state=requested|approved|processing|paid|rejected|failed|cancelled] [limit=<1..1000>]';
const SANDBOX_USAGE = 'usage: payouts:sandbox [id=<withdrawal id>] [outcome=succeeded|failed]  (settles due payouts; with id: that one now)';
const RECONCILE_USAGE =
  'usage: payments:reconcile from=<YYYY-MM-DD> to=<YYYY-MM-DD> [provider=<id>]  (to inclusive, UTC days; differences go to the suspense list, as on /ops/reconciliation)';

const AS = { as: { type: 'string' } } as const;

const payoutDeps = (db: Db): TPayoutDeps => ({ db, cipher: openDocumentCipher(loadConfig(), (msg) => console.error(msg)) });

function day(text: string | undefined): string {
  if (!text || !/^\d{4}-\d{2}-\d{2}$/.test(text) || Number.isNaN(new Date(`${text}T00:00:00Z`).getTime())) throw new Error(RECONCILE_USAGE);
  return text;
}

/**
 * Withdrawals for operators, as the desk (/ops/withdrawals) does them and as a named operator
 * (--as): the queue, approve (a large one becomes a four-eyes request), reject with a catalogued
 * reason, retry or give up a stuck payout; the auto-approval and four-eyes amounts; the sandbox providers' payouts; reconciliation of providers against the ledger.
 */
/** A desk action on one withdrawal, as the operator named by --as. */
function onOneWithdrawal(usage: string, run: (db: Db, actor: Awaited<ReturnType<typeof cliOperator>>, id: string) => Promise<unknown>): TCommand {
  return async (db, args) => {
    const { values, positionals } = parseArgs({ args, strict: true, allowPositionals: true, options: AS });
    if (positionals.length !== 1) throw new Error(usage);
    return run(db, await cliOperator(db, values.as, usage), positionals[0]!);
  };
}

export const WITHDRAW_COMMANDS: Record<string, TCommand> = {
  'withdraw:list': async (db, args) => {
    const { state, limit } = options(args, ['state', 'limit'], LIST_USAGE);
    const count = limit === undefined ? 50 : Number(limit);
    if (!Number.isInteger(count) || count < 1 || count > 1000) throw new Error(LIST_USAGE);
    return listWithdrawals(db, { state, limit: count });
  },
  'withdraw:approve': onOneWithdrawal(
    'usage: withdraw:approve <withdrawal id> --as <operator e-mail>  (a large one becomes a request: request:approve)',
    (db, actor, id) => approveOnDesk(payoutDeps(db), actor, id),
  ),
  'withdraw:reject': async (db, args) => {
    const { values, positionals } = parseArgs({ args, strict: true, allowPositionals: true, options: AS });
    const usage = `usage: withdraw:reject <withdrawal id> <${WITHDRAWAL_REJECT_REASONS.join('|')}> [words…] --as <operator e-mail>`;
    const [id, reason, ...words] = positionals;
    const code = WITHDRAWAL_REJECT_REASONS.find((known) => known === reason);
    if (!id || !code) throw new Error(usage);
    return rejectOnDesk(db, await cliOperator(db, values.as, usage), id, code, words.join(' '));
  },
  'withdraw:retry': onOneWithdrawal('usage: withdraw:retry <withdrawal id> --as <operator e-mail>  (a stuck payout, to its provider again)', (db, actor, id) =>
    retryOnDesk(payoutDeps(db), actor, id),
  ),
  'withdraw:fail': onOneWithdrawal('usage: withdraw:fail <withdrawal id> --as <operator e-mail>  (a stuck payout given up; the hold released)', failOnDesk),
  'withdraw:large': async (db, [currency, amount]) => {
    if (!currency || !amount) throw new Error('usage: withdraw:large <CURRENCY> <amount>  (from it on, an approval needs a second operator; 0: never)');
    return setLargeAmount(db, currency, amount);
  },
  'withdraw:auto': async (db, [currency, amount]) => {
    if (!currency || !amount) throw new Error('usage: withdraw:auto <CURRENCY> <amount>  (requests up to it are approved without an operator; 0: none)');
    return setAutoApproval(db, currency, amount);
  },
  'payouts:sandbox': async (db, args) => {
    const { id, outcome } = options(args, ['id', 'outcome'], SANDBOX_USAGE);
    if (outcome !== undefined && outcome !== 'succeeded' && outcome !== 'failed') throw new Error(SANDBOX_USAGE);
    return runSandboxPayouts(db, loadPaymentProviders(loadConfig()), new Date(), { reference: id, outcome, force: id !== undefined });
  },
  'payments:reconcile': async (db, args) => {
    const { from, to, provider } = options(args, ['from', 'to', 'provider'], RECONCILE_USAGE);
    const report = await reconciliationReport(db, { from: day(from), to: day(to), ...(provider ? { provider } : {}) }, new Date());
    if (!report.ok) process.exitCode = 1;
    return report;
  },
};
