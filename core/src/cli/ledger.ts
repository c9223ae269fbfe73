import { adjustBalance, reverseTransaction } from '../domains/ledger/service.ts';
import { checkLedger } from '../domains/ledger/invariants.ts';
import type { TCommand } from './command.ts';

const BALANCE_USAGE = (verb: string) =>
  `usage: balance:${verb} <account_id> <CURRENCY> <amount> <reason…>  e.g. balance:${verb} 12345678 USDT 100 "support ticket 42"`;

function adjust(direction: 'credit' | 'debit'): TCommand {
  return async (db, [account, currency, amount, ...reason]) => {
    if (!account || !/^\d{8}$/.test(account) || !currency || !amount || !reason.join(' ').trim()) throw new Error(BALANCE_USAGE(direction));
    return adjustBalance(db, { accountId: Number(account), currency, amount, direction, reason: reason.join(' '), actor: 'operator' });
  };
}

/** Ledger operator commands: balance corrections, reversals, the rules check. */
export const LEDGER_COMMANDS: Record<string, TCommand> = {
  'balance:credit': adjust('credit'),
  'balance:debit': adjust('debit'),
  'ledger:reverse': async (db, [transaction, ...reason]) => {
    if (!transaction || !reason.join(' ').trim()) throw new Error('usage: ledger:reverse <ledger transaction id> <reason…>');
    return reverseTransaction(db, transaction, reason.join(' '));
  },
  'ledger:check': async (db) => {
    const report = await checkLedger(db);
    if (!report.ok) process.exitCode = 1;
    return report;
  },
};
