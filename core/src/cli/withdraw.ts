import { userInfo } from 'node:os';
import { loadConfig } from '../config.ts';
import { openDocumentCipher } from '../domains/verification/cipher.ts';
import { loadPaymentProviders } from '../providers/index.ts';
import { reconcile } from '../domains/payments/reconcile.ts';
import { runSandboxPayouts } from '../providers/sandbox/payouts.ts';
import { approveWithdrawal, rejectWithdrawal } from '../domains/payments/withdrawal-states.ts';
import { listWithdrawals, setAutoApproval } from '../domains/payments/withdrawals.ts';
import { options, type TCommand } from './command.ts';

const LIST_USAGE = 'usage: withdraw:list [state=requested|approved|processing|paid|rejected|failed|cancelled] [limit=<1..1000>]';
const SANDBOX_USAGE = 'usage: payouts:sandbox [id=<withdrawal id>] [outcome=succeeded|failed]  (settles due payouts; with id: that one now)';
const RECONCILE_USAGE = 'usage: payments:reconcile from=<YYYY-MM-DD> to=<YYYY-MM-DD>  (to inclusive, UTC days)';

/** Who is acting, for the audit log: OBMEN_OPERATOR, else the login name. */
function operator(): string {
  return `operator:${(process.env.OBMEN_OPERATOR ?? userInfo().username).trim() || 'unknown'}`;
}

function day(text: string | undefined, end: boolean): Date {
  if (!text || !/^\d{4}-\d{2}-\d{2}$/.test(text)) throw new Error(RECONCILE_USAGE);
  const date = new Date(`${text}T00:00:00Z`);
  if (Number.isNaN(date.getTime())) throw new Error(RECONCILE_USAGE);
  return end ? new Date(date.getTime() + 86_400_000) : date;
}

/**
 * Withdrawals for operators: the queue, approve, reject with a reason, the auto-approval
 * amounts; the sandbox providers' payouts; reconciliation of providers against the ledger.
 */
export const WITHDRAW_COMMANDS: Record<string, TCommand> = {
  'withdraw:list': async (db, args) => {
    const { state, limit } = options(args, ['state', 'limit'], LIST_USAGE);
    const count = limit === undefined ? 50 : Number(limit);
    if (!Number.isInteger(count) || count < 1 || count > 1000) throw new Error(LIST_USAGE);
    return listWithdrawals(db, { state, limit: count });
  },
  'withdraw:approve': async (db, [id]) => {
    if (!id) throw new Error('usage: withdraw:approve <withdrawal id>');
    return approveWithdrawal({ db, cipher: openDocumentCipher(loadConfig(), (msg) => console.error(msg)) }, id, operator(), new Date());
  },
  'withdraw:reject': async (db, [id, ...reason]) => {
    if (!id || !reason.join(' ').trim()) throw new Error('usage: withdraw:reject <withdrawal id> <reason…>');
    return rejectWithdrawal(db, id, reason.join(' '), operator(), new Date());
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
    const { from, to } = options(args, ['from', 'to'], RECONCILE_USAGE);
    const report = await reconcile(db, day(from, false), day(to, true));
    if (!report.ok) process.exitCode = 1;
    return report;
  },
};
