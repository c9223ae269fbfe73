import { parseArgs } from 'node:util';
import { isAccountId, LEDGER_ADJUSTMENT_REASONS, OPS_REASONS, ZOpsProposeBody } from '@obmen/shared';
import type { Db } from '../db/index.ts';
import { checkLedger } from '../domains/ledger/invariants.ts';
import { transactionParties } from '../domains/ledger/service.ts';
import type { TOpsActor } from '../domains/ops/customers.ts';
import { decideRequest, listRequests, proposeRequest } from '../domains/ops/requests.ts';
import type { TCommand } from './command.ts';
import { cliOperator } from './ops-actor.ts';

const AS = '--as <operator e-mail>';
const BALANCE_USAGE = (verb: string) =>
  `usage: balance:${verb} <account_id> <CURRENCY> <amount> <memo…> ${AS} [--reason ${LEDGER_ADJUSTMENT_REASONS.join('|')}] [--why ${OPS_REASONS.join('|')}]
  proposes the ${verb} (four eyes: another finance operator approves it with request:approve), e.g.
  balance:${verb} 12345678 USDT 100 "support ticket 42" --as ann@obmen.example --reason compensation`;
const REVERSE_USAGE = `usage: ledger:reverse <ledger transaction id> <memo…> ${AS} [--account <account_id>] [--why <reason>]  (proposes the reversal)`;
const DECIDE_USAGE = (verb: string) => `usage: request:${verb} <request id> ${AS}`;

const OPTIONS = { as: { type: 'string' }, reason: { type: 'string' }, why: { type: 'string' }, account: { type: 'string' } } as const;

function parsed(args: string[]) {
  return parseArgs({ args, strict: true, allowPositionals: true, options: OPTIONS });
}

/**
 * A proposal as /ops sends it, checked by the same declaration: the request's reason from the
 * catalogue (`--why`, `other` by default) with the memo as its words.
 */
async function propose(db: Db, action: string, params: object, why: string | undefined, memo: string, actor: TOpsActor) {
  const body = ZOpsProposeBody.parse({ action, params, reason: why ?? 'other', text: memo });
  return proposeRequest(db, body, actor);
}

function adjust(direction: 'credit' | 'debit'): TCommand {
  return async (db, args) => {
    const usage = BALANCE_USAGE(direction);
    const { values, positionals } = parsed(args);
    const [account, currency, amount, ...words] = positionals;
    const memo = words.join(' ').trim();
    if (!account || !isAccountId(account) || !currency || !amount || !memo) throw new Error(usage);
    const params = { account_id: Number(account), currency, amount, direction, reason: values.reason ?? 'correction', memo };
    return propose(db, 'ledger.adjust', params, values.why, memo, await cliOperator(db, values.as, usage));
  };
}

function decide(decision: 'approve' | 'decline' | 'withdraw'): TCommand {
  return async (db, args) => {
    const { values, positionals } = parsed(args);
    const [id] = positionals;
    if (!id || !/^[1-9]\d{0,17}$/.test(id) || positionals.length !== 1) throw new Error(DECIDE_USAGE(decision));
    return decideRequest(db, id, decision, await cliOperator(db, values.as, DECIDE_USAGE(decision)));
  };
}

/**
 * Ledger operator commands: credits, debits and reversals are four-eyes proposals (approved by a
 * second operator: request:approve), and the rules check.
 */
export const LEDGER_COMMANDS: Record<string, TCommand> = {
  'balance:credit': adjust('credit'),
  'balance:debit': adjust('debit'),
  'ledger:reverse': async (db, args) => {
    const { values, positionals } = parsed(args);
    const [transaction, ...words] = positionals;
    const memo = words.join(' ').trim();
    if (!transaction || !/^[1-9]\d{0,17}$/.test(transaction) || !memo || (values.account && !isAccountId(values.account))) throw new Error(REVERSE_USAGE);
    const actor = await cliOperator(db, values.as, REVERSE_USAGE);
    // Without --account: the customer whose money it moved (the first, for a transfer between two).
    const [user] = (await transactionParties(db, transaction)).users;
    const [owner] = user ? await db.query<{ account_id: number }>('SELECT account_id FROM users WHERE id = $1', [user]) : [];
    const accountId = values.account ? Number(values.account) : owner?.account_id;
    if (!accountId) throw new Error(`ledger transaction ${transaction} moved no customer's money`);
    return propose(db, 'ledger.reverse', { account_id: accountId, transaction_id: transaction, memo }, values.why, memo, actor);
  },
  'request:list': async (db, args) => {
    const { values } = parsed(args);
    const actor = await cliOperator(db, values.as, `usage: request:list ${AS}`);
    return listRequests(db, actor.operator.id, actor.now);
  },
  'request:approve': decide('approve'),
  'request:decline': decide('decline'),
  'request:withdraw': decide('withdraw'),
  'ledger:check': async (db) => {
    const report = await checkLedger(db);
    if (!report.ok) process.exitCode = 1;
    return report;
  },
};
