import { formatAmount, OPS_REQUEST_TTL_MS, type TOpsPermission, type TOpsProposal, type TOpsRequest, type TOpsRequestAction } from '@obmen/shared';
import type { Db, Queryable } from '../../db/index.ts';
import { AppError, notFoundOf } from '../../errors.ts';
import { fromDbError } from '../../money-errors.ts';
import { writeAudit } from '../audit/service.ts';
import { currencies, enabledCurrency, parseUserAmount, precisionLookup } from '../currencies/service.ts';
import { recordEvent } from '../events/service.ts';
import { postAdjustment, postReversal, transactionParties } from '../ledger/service.ts';
import { checkMatch, depositFor, heldPayment, matchHeldPayment } from '../payments/bank-held.ts';
import { approveIn } from '../payments/withdrawal-states.ts';
import { applyConfigChange, configPermission, configSubject, tryConfigChange } from './config.ts';
import { removeSecondFactor } from '../security/service.ts';
import { customerSubject, findCustomer, type TOpsActor, type TOpsReason } from './customers.ts';
import { releaseClaim } from './claims.ts';
import { requirePermission } from './guard.ts';
import { operatorActor } from './service.ts';

/*
 * Four eyes: one mechanism for every action no operator may take alone. A proposal is stored as
 * a pending request; a second operator with the action's permission approves it (the action runs
 * in the same transaction as the approval) or declines it. The database refuses a decision by
 * the proposer and any change once decided (sql/functions/ops_request_guard.sql), whatever this
 * code does; a request not decided within 24 hours lapses.
 */

type TAction<P> = {
  /** Who may propose and decide it: one permission, or one per parameters (a setting's own). */
  permission: TOpsPermission | ((params: P) => TOpsPermission);
  /** What the request is about, checked at proposal (a missing customer or operator is refused then). */
  subjectOf: (db: Queryable, params: P) => Promise<string>;
  /** After the permission, before the request is stored: a change its service would refuse is refused now. */
  check?: (db: Db, params: P) => Promise<void>;
  /** Runs in the approval's transaction; `by` names the request on the ledger (the transaction's actor). */
  run: (tx: Queryable, params: P, by: string, now: Date) => Promise<object | TBeforeAfter>;
};
/** What an approval changed, kept on its audit row as before and after. */
type TBeforeAfter = { changed: { before: object | null; after: object | null } };
type TParamsOf<A extends TOpsRequestAction> = Extract<TOpsProposal, { action: A }>['params'];

const ACTIONS: { [A in TOpsRequestAction]: TAction<TParamsOf<A>> } = {
  'operators.set_roles': {
    permission: 'operators.manage',
    subjectOf: async (db, { email }) => `operator:${(await operatorIdOf(db, email)).id}`,
    run: async (tx, { email, roles }) => {
      const { id } = await operatorIdOf(tx, email);
      await tx.query('DELETE FROM operator_roles WHERE operator_id = $1', [id]);
      await tx.query('INSERT INTO operator_roles (operator_id, role) SELECT $1, unnest($2::text[])', [id, roles]);
      return { email, roles };
    },
  },
  'customers.reset_second_factor': {
    permission: 'customers.reset_second_factor',
    subjectOf: async (db, { account_id }) => customerSubject((await findCustomer(db, account_id)).account_id),
    run: async (tx, { account_id }) => {
      const { id } = await findCustomer(tx, account_id);
      const [user] = await tx.query<{ email: string; locale: 'ru' | 'en' }>('SELECT email, locale FROM users WHERE id = $1', [id]);
      await removeSecondFactor(tx, { id, email: user!.email, locale: user!.locale, account_id }, { passkeys: true });
      return { second_factor: 'removed' };
    },
  },
  'ledger.adjust': {
    permission: 'ledger.adjust',
    subjectOf: async (db, params) => {
      const { account_id } = await findCustomer(db, params.account_id);
      parseUserAmount(params.amount, await enabledCurrency(db, params.currency));
      return customerSubject(account_id);
    },
    run: async (tx, params, by) => {
      const { id } = await findCustomer(tx, params.account_id);
      const done = await postAdjustment(tx, {
        accountId: params.account_id,
        currency: params.currency,
        amount: params.amount,
        direction: params.direction,
        reason: `${params.reason}: ${params.memo}`,
        account: params.reason,
        actor: by,
      });
      await recordEvent(tx, id, 'wallets', null);
      return done;
    },
  },
  'ledger.reverse': {
    permission: 'ledger.adjust',
    // The transaction must have moved this customer's money: a stranger's answers as a missing one.
    subjectOf: async (db, { account_id, transaction_id }) => {
      const { id } = await findCustomer(db, account_id);
      const parties = await transactionParties(db, transaction_id);
      if (!parties.users.includes(id)) throw new AppError('transaction_not_found');
      if (parties.reversed) throw new AppError('already_reversed');
      // Held money is released or captured by its own state machine, which a reversal would leave stranded.
      if (parties.holds) throw new AppError('ops_reverse_hold');
      return `ledger_transaction:${transaction_id}`;
    },
    run: async (tx, { transaction_id, memo }, by) => {
      const done = await postReversal(tx, transaction_id, memo, by);
      for (const user of (await transactionParties(tx, transaction_id)).users) await recordEvent(tx, user, 'wallets', null);
      return done;
    },
  },
  'withdrawals.approve_large': {
    permission: 'withdrawals.approve_large',
    subjectOf: async (db, { withdrawal_id }) => {
      const [row] = await db.query<{ state: string }>('SELECT state FROM withdrawals WHERE public_id = $1', [withdrawal_id]);
      if (!row) throw notFoundOf('withdrawal');
      if (row.state !== 'requested') throw new AppError('withdrawal_state', { vars: { state: row.state } });
      return withdrawalSubject(withdrawal_id);
    },
    // Approved here (the desk's claim on it given back); the payouts job hands it to its provider after the commit.
    run: async (tx, { withdrawal_id }, by, now) => {
      await approveIn(tx, withdrawal_id, by, now);
      await releaseClaim(tx, { queue: 'withdrawals', itemId: withdrawal_id });
      return { withdrawal: withdrawal_id, state: 'approved' };
    },
  },
  'payments.match': {
    permission: 'payments.review',
    subjectOf: async (db, { bank_payment_id, deposit_id, currency, amount, expected }) => {
      const held = await heldPayment(db, bank_payment_id);
      const deposit = await depositFor(db, held.provider, deposit_id);
      checkMatch(held, deposit);
      const precision = (await currencies(db)).get(held.currency)?.precision ?? 0;
      // The amounts the approver reads are the real ones.
      if (currency !== held.currency || amount !== formatAmount(held.amount, precision) || expected !== formatAmount(deposit.amount, precision))
        throw new AppError('validation', { fields: { amount: 'validation.invalid' } });
      return `bank_payment:${bank_payment_id}`;
    },
    // The deposit credited with what arrived, in the approval's transaction.
    run: async (tx, { bank_payment_id, deposit_id }, by, now) => {
      const done = await matchHeldPayment(tx, { heldId: bank_payment_id, deposit: deposit_id, otherAmount: true, by, now });
      return { deposit: deposit_id, state: 'credited', replayed: done.replayed };
    },
  },
  'config.change': {
    permission: configPermission,
    subjectOf: async (_db, change) => configSubject(change),
    check: tryConfigChange,
    run: async (tx, change) => ({ changed: await applyConfigChange(tx, change) }),
  },
};

const permissionOf = <P>(action: TAction<P>, params: P): TOpsPermission =>
  typeof action.permission === 'function' ? action.permission(params) : action.permission;

const audited = (outcome: object | TBeforeAfter | null) =>
  outcome === null ? {} : 'changed' in outcome ? { before: outcome.changed.before, after: outcome.changed.after } : { after: outcome };

export const withdrawalSubject = (publicId: string) => `withdrawal:${publicId}`;

async function operatorIdOf(db: Queryable, email: string): Promise<{ id: string }> {
  const [row] = await db.query<{ id: string }>('SELECT id::text AS id FROM operators WHERE email = lower($1)', [email]);
  if (!row) throw notFoundOf('account');
  return row;
}

const actionOf = <A extends TOpsRequestAction>(action: A) => ACTIONS[action] as unknown as TAction<TParamsOf<A>>;

type TRow = Omit<TOpsRequest, 'mine'> & { proposer_id: string };

const SELECT = `SELECT r.id::text, r.action, r.params, r.subject, r.reason_code, r.reason_text, p.email AS proposed_by, r.proposed_by::text AS proposer_id,
    iso_time(r.proposed_at) AS proposed_at, iso_time(r.expires_at) AS expires_at, r.state, d.email AS decided_by, iso_time(r.decided_at) AS decided_at
  FROM ops_requests r JOIN operators p ON p.id = r.proposed_by LEFT JOIN operators d ON d.id = r.decided_by`;

const shown = (row: TRow, operatorId: string): TOpsRequest => {
  const { proposer_id, ...request } = row;
  return { ...request, mine: proposer_id === operatorId };
};

/** Requests past their 24 hours are lapsed: nobody decided in time. */
export async function lapseOpsRequests(db: Queryable, now: Date): Promise<number> {
  const rows = await db.query(`UPDATE ops_requests SET state = 'lapsed', decided_at = expires_at WHERE state = 'pending' AND expires_at <= $1 RETURNING id`, [
    now,
  ]);
  return rows.length;
}

/** A proposal: the proposer must hold the action's permission; audited with its reason. */
export async function proposeRequest(db: Db, proposal: TOpsProposal & TOpsReason, actor: TOpsActor): Promise<TOpsRequest> {
  const action = actionOf(proposal.action);
  const subject = await action.subjectOf(db, proposal.params as never);
  await requirePermission(db, actor.operator, permissionOf(action, proposal.params as never), {
    action: `propose ${proposal.action}`,
    requestId: actor.requestId,
    ip: actor.ip,
    subject,
  });
  await action.check?.(db, proposal.params as never);
  return db.transaction(async (tx) => {
    await lapseOpsRequests(tx, actor.now);
    const [open] = await tx.query("SELECT 1 FROM ops_requests WHERE action = $1 AND subject = $2 AND state = 'pending'", [proposal.action, subject]);
    if (open) throw new AppError('ops_request_pending');
    const [created] = await tx.query<{ id: string }>(
      `INSERT INTO ops_requests (action, params, subject, reason_code, reason_text, proposed_by, proposed_at, expires_at)
       VALUES ($1, $2::jsonb, $3, $4, $5, $6, $7, $8) RETURNING id::text`,
      [
        proposal.action,
        JSON.stringify(proposal.params),
        subject,
        proposal.reason,
        proposal.text || null,
        actor.operator.id,
        actor.now,
        new Date(actor.now.getTime() + OPS_REQUEST_TTL_MS),
      ],
    );
    await writeAudit(tx, {
      actor: operatorActor(actor.operator),
      action: `request.propose:${proposal.action}`,
      subject,
      reasonCode: proposal.reason,
      reasonText: proposal.text || null,
      requestId: actor.requestId,
      ip: actor.ip,
      details: { request: created!.id },
      after: proposal.params,
    });
    return requestById(tx, created!.id, actor.operator.id);
  });
}

async function requestById(db: Queryable, id: string, operatorId: string, lock = false): Promise<TOpsRequest> {
  const [row] = await db.query<TRow>(`${SELECT} WHERE r.id = $1${lock ? ' FOR UPDATE OF r' : ''}`, [id]);
  if (!row) throw notFoundOf('ops_request');
  return shown(row, operatorId);
}

/**
 * A second operator's decision. Approval runs the action in this transaction, so the request is
 * approved exactly when its effect happened; the database refuses the proposer as decider.
 */
export async function decideRequest(db: Db, id: string, decision: 'approve' | 'decline' | 'withdraw', actor: TOpsActor): Promise<TOpsRequest> {
  await lapseOpsRequests(db, actor.now);
  const before = await requestById(db, id, actor.operator.id);
  const action = actionOf(before.action);
  if (decision !== 'withdraw')
    await requirePermission(db, actor.operator, permissionOf(action, before.params as never), {
      action: `${decision} ${before.action}`,
      requestId: actor.requestId,
      ip: actor.ip,
      subject: before.subject,
    });
  try {
    return await db.transaction(async (tx) => {
      const request = await requestById(tx, id, actor.operator.id, true);
      const state = decision === 'approve' ? 'approved' : decision === 'decline' ? 'declined' : 'withdrawn';
      await tx.query('UPDATE ops_requests SET state = $2, decided_by = $3, decided_at = $4 WHERE id = $1', [id, state, actor.operator.id, actor.now]);
      const outcome = decision === 'approve' ? await action.run(tx, request.params as never, `ops_request:${id}`, actor.now) : null;
      await writeAudit(tx, {
        actor: operatorActor(actor.operator),
        action: `request.${decision}:${request.action}`,
        subject: request.subject,
        reasonCode: request.reason_code,
        reasonText: request.reason_text,
        requestId: actor.requestId,
        ip: actor.ip,
        details: { request: id, proposed_by: request.proposed_by },
        ...audited(outcome),
      });
      return requestById(tx, id, actor.operator.id);
    });
  } catch (err) {
    // A ledger refusal (an overdraft, a transaction reversed meanwhile) rolls the approval back
    // with it: the request stays pending, to be declined or approved once the balance allows.
    throw fromDbError(err, precisionLookup(await currencies(db)));
  }
}

/** The pending requests of an action about these subjects, by subject (a desk's rows). */
export async function pendingRequestsFor(db: Queryable, action: TOpsRequestAction, subjects: string[], operatorId: string): Promise<Map<string, TOpsRequest>> {
  if (subjects.length === 0) return new Map();
  const rows = await db.query<TRow>(`${SELECT} WHERE r.state = 'pending' AND r.action = $1 AND r.subject = ANY($2::text[])`, [action, subjects]);
  return new Map(rows.map((row) => [row.subject, shown(row, operatorId)]));
}

/** The pending requests (oldest first) and the 50 latest decided ones; with `accountId`, those about that customer. */
export async function listRequests(
  db: Queryable,
  operatorId: string,
  now: Date,
  accountId?: number,
): Promise<{ pending: TOpsRequest[]; decided: TOpsRequest[] }> {
  await lapseOpsRequests(db, now);
  const about = accountId === undefined ? '' : ` AND (r.subject = $1 OR r.params->>'account_id' = $2)`;
  const params = accountId === undefined ? [] : [customerSubject(accountId), String(accountId)];
  const [pending, decided] = await Promise.all([
    db.query<TRow>(`${SELECT} WHERE r.state = 'pending'${about} ORDER BY r.proposed_at, r.id`, params),
    db.query<TRow>(`${SELECT} WHERE r.state <> 'pending'${about} ORDER BY r.decided_at DESC, r.id DESC LIMIT 50`, params),
  ]);
  return { pending: pending.map((row) => shown(row, operatorId)), decided: decided.map((row) => shown(row, operatorId)) };
}
