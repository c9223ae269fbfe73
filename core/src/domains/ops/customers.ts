import { formatAmount, normalizeDocumentNumber, type TOpsCustomer, type TOpsCustomerHit, type TOpsReason as TOpsReasonCode } from '@obmen/shared';
import type { Db, Queryable } from '../../db/index.ts';
import { notFoundOf } from '../../errors.ts';
import { writeAudit } from '../audit/service.ts';
import { revokeAllSessions } from '../auth/sessions.ts';
import { currencies } from '../currencies/service.ts';
import { userLedgerHistory } from '../ledger/service.ts';
import { getSecurityOverview } from '../security/service.ts';
import { operatorActor, type TOperator } from './service.ts';

/*
 * The back office's customer view: one read over every domain a customer touches, and the
 * operator's actions on the customer. Each action writes its audit row (before and after, the
 * reason) in the transaction that makes the change; a view of personal data in full is audited
 * as `viewed`.
 */

/** How many of each kind of record the page shows (newest first). */
const SHOWN = 50;

export type TCustomerRef = { id: string; account_id: number };
/** Who acts and why: the operator from the session, the request's id and address, a catalogued reason. */
export type TOpsActor = { operator: TOperator; requestId: string; ip: string; now: Date };
/** The audit row's who, request and address for what this operator does. */
export const auditedActor = (actor: TOpsActor) => ({ actor: operatorActor(actor.operator), requestId: actor.requestId, ip: actor.ip });
export type TOpsReason = { reason: TOpsReasonCode; text: string };

export const customerSubject = (accountId: number) => `customer:${accountId}`;

/** A customer by account id; a wrong one answers like any missing account. */
export async function findCustomer(db: Queryable, accountId: number): Promise<TCustomerRef> {
  const [row] = await db.query<TCustomerRef>('SELECT id::text AS id, account_id FROM users WHERE account_id = $1', [accountId]);
  if (!row) throw notFoundOf('account');
  return row;
}

/**
 * Up to 20 customers matching an account id, e-mail, name, phone, deposit address (exact or
 * prefix) or document number: the number is found by its keyed hash, never decrypted.
 */
export async function searchCustomers(db: Queryable, q: string, numberHash: (plain: string) => Promise<Buffer>): Promise<TOpsCustomerHit[]> {
  const text = q.trim();
  const digits = text.replace(/[\s()+-]/g, '');
  const documentHash = await numberHash(normalizeDocumentNumber(text));
  const rows = await db.query<TOpsCustomerHit & { created_at: Date }>(
    `WITH hits AS (
       SELECT id, 'account_id' AS matched, 0 AS rank FROM users WHERE $2 ~ '^[0-9]{8}$' AND account_id = $2::int
       UNION ALL SELECT id, 'email', 1 FROM users WHERE lower(email) = lower($1) OR lower(email) LIKE lower($3) || '%'
       UNION ALL SELECT id, 'phone', 2 FROM users WHERE length($2) >= 5 AND $2 ~ '^[0-9]+$' AND regexp_replace(coalesce(phone, ''), '[^0-9]', '', 'g') LIKE '%' || $2 || '%'
       UNION ALL SELECT id, 'name', 3 FROM users WHERE lower(concat_ws(' ', first_name, last_name)) LIKE '%' || lower($3) || '%'
          OR lower(concat_ws(' ', last_name, first_name)) LIKE '%' || lower($3) || '%'
       UNION ALL SELECT user_id, 'address', 4 FROM deposit_addresses WHERE address = $1
       UNION ALL SELECT user_id, 'document', 5 FROM verifications WHERE number_hash = $4
     ), best AS (SELECT DISTINCT ON (id) id, matched, rank FROM hits ORDER BY id, rank)
     SELECT u.account_id, u.email, nullif(concat_ws(' ', u.first_name, u.last_name), '') AS name, u.verification_level AS level,
            u.created_at, b.matched
       FROM best b JOIN users u ON u.id = b.id ORDER BY b.rank, u.account_id LIMIT 20`,
    [text, digits, text.replace(/[%_\\]/g, '\\$&'), documentHash],
  );
  // Names stay masked in a list, whatever matched: the full name is shown only by a reveal.
  return rows.map((row) => ({ ...row, name: row.name && row.name.split(' ').map(mask).join(' '), created_at: new Date(row.created_at).toISOString() }));
}

function mask(value: string): string;
function mask(value: string | null): string | null;
function mask(value: string | null) {
  return value ? `${[...value][0]}***` : null;
}
const iso = (value: Date | string | null) => (value === null ? null : new Date(value).toISOString());

/** Everything about one customer, personal data masked unless `revealed`. */
export async function customerDossier(db: Queryable, customer: TCustomerRef, options: { revealed: boolean }): Promise<TOpsCustomer> {
  const userId = customer.id;
  const byCode = await currencies(db);
  const money = (currency: string, minor: string) => ({ currency, amount: formatAmount(minor, byCode.get(currency)?.precision ?? 0) });
  const [[user], [verification], wallets, ledger, payments, exchanges, transfers, cards, [referral], security, [support], notes, audit] = await Promise.all([
    db.query<{
      email: string;
      email_confirmed_at: Date | null;
      locale: 'ru' | 'en';
      created_at: Date;
      verification_level: number;
      first_name: string | null;
      last_name: string | null;
      middle_name: string | null;
      birth_date: string | null;
      phone: string | null;
      country: string | null;
      city: string | null;
      address: string | null;
      sign_in_blocked_at: Date | null;
      withdrawals_blocked_until: Date | null;
    }>(
      `SELECT email, email_confirmed_at, locale, created_at, verification_level, first_name, last_name, middle_name,
              to_char(birth_date, 'YYYY-MM-DD') AS birth_date, phone, country, city, address, sign_in_blocked_at, withdrawals_blocked_until
         FROM users WHERE id = $1`,
      [userId],
    ),
    db.query<{ status: 'draft' | 'submitted' | 'approved' | 'rejected'; type: string; submitted_at: Date | null; decided_at: Date | null }>(
      'SELECT status, type, submitted_at, decided_at FROM verifications WHERE user_id = $1 ORDER BY id DESC LIMIT 1',
      [userId],
    ),
    db.query<{ currency: string; balance: string; held: string }>(
      `SELECT currency, sum(balance) FILTER (WHERE kind = 'user')::text AS balance, coalesce(sum(balance) FILTER (WHERE kind = 'hold'), 0)::text AS held
         FROM ledger_accounts WHERE (kind = 'user' AND user_id = $1) OR (kind = 'hold' AND holder_id = $1)
        GROUP BY currency HAVING sum(balance) FILTER (WHERE kind = 'user') IS NOT NULL ORDER BY currency`,
      [userId],
    ),
    userLedgerHistory(db, userId, SHOWN),
    db.query<{ id: string; at: Date; kind: 'deposit' | 'purchase' | 'withdrawal'; state: string; currency: string; amount: string }>(
      `(SELECT public_id::text AS id, created_at AS at, direction AS kind, state, currency, amount::text AS amount FROM payments WHERE user_id = $1
        UNION ALL SELECT public_id::text, created_at, 'withdrawal', state, currency, amount::text FROM withdrawals WHERE user_id = $1)
       ORDER BY at DESC LIMIT $2`,
      [userId, SHOWN],
    ),
    db.query<{ id: string; at: Date; src: string; pay: string; dst: string; receive: string }>(
      `SELECT id::text, created_at AS at, src, pay::text, dst, receive::text FROM exchanges WHERE user_id = $1 AND status = 'completed' ORDER BY id DESC LIMIT $2`,
      [userId, SHOWN],
    ),
    db.query<{ id: string; at: Date; direction: 'in' | 'out'; counterparty: number; currency: string; amount: string }>(
      `SELECT t.id::text, t.created_at AS at, CASE WHEN t.sender_id = $1 THEN 'out' ELSE 'in' END AS direction,
              u.account_id AS counterparty, t.currency, t.amount::text AS amount
         FROM transfers t JOIN users u ON u.id = CASE WHEN t.sender_id = $1 THEN t.recipient_id ELSE t.sender_id END
        WHERE t.sender_id = $1 OR t.recipient_id = $1 ORDER BY t.id DESC LIMIT $2`,
      [userId, SHOWN],
    ),
    db.query<{ id: string; at: Date; product: string; state: string; last4: string | null }>(
      'SELECT public_id::text AS id, created_at AS at, product_id AS product, status AS state, last4 FROM cards WHERE user_id = $1 ORDER BY id DESC',
      [userId],
    ),
    db.query<{ invited: number; referred_by: number | null }>(
      `SELECT (SELECT count(*)::int FROM referrals WHERE referrer_id = $1) AS invited,
              (SELECT u.account_id FROM referrals r JOIN users u ON u.id = r.referrer_id WHERE r.referee_id = $1) AS referred_by`,
      [userId],
    ),
    getSecurityOverview(db, userId, null),
    db.query<{ messages: number; last_at: Date | null; reports_against: number }>(
      `SELECT (SELECT count(*)::int FROM chat_messages m JOIN conversations c ON c.id = m.conversation_id WHERE c.kind = 'support' AND c.user_a = $1) AS messages,
              (SELECT max(last_message_at) FROM conversations WHERE kind = 'support' AND user_a = $1) AS last_at,
              (SELECT count(*)::int FROM chat_reports r JOIN conversations c ON c.id = r.conversation_id
                WHERE r.reporter_id <> $1 AND $1 IN (c.user_a, c.user_b)) AS reports_against`,
      [userId],
    ),
    db.query<{ at: Date; operator: string; text: string }>(
      'SELECT created_at AS at, operator, text FROM ops_customer_notes WHERE user_id = $1 ORDER BY id DESC',
      [userId],
    ),
    db.query<{ id: number; at: string; actor: string; action: string; outcome: 'done' | 'denied' | 'viewed' }>(
      `SELECT id::int, iso_time(at) AS at, operator AS actor, action, outcome FROM operator_audit
        WHERE subject = $1 OR subject IN (SELECT public_id::text FROM verifications WHERE user_id = $2) ORDER BY id DESC LIMIT $3`,
      [customerSubject(customer.account_id), userId, SHOWN],
    ),
  ]);
  if (!user) throw notFoundOf('account');
  const shown = (value: string | null) => (options.revealed ? value : mask(value));
  return {
    account_id: customer.account_id,
    email: user.email,
    email_confirmed: user.email_confirmed_at !== null,
    locale: user.locale,
    created_at: new Date(user.created_at).toISOString(),
    level: user.verification_level,
    personal: {
      revealed: options.revealed,
      first_name: shown(user.first_name),
      last_name: shown(user.last_name),
      middle_name: shown(user.middle_name),
      birth_date: options.revealed ? user.birth_date : user.birth_date && '****-**-**',
      phone: options.revealed ? user.phone : user.phone && `***${user.phone.slice(-2)}`,
      country: user.country,
      city: shown(user.city),
      address: shown(user.address),
    },
    sign_in_blocked_at: iso(user.sign_in_blocked_at),
    withdrawals_blocked_until: iso(user.withdrawals_blocked_until),
    verification: verification ? { ...verification, submitted_at: iso(verification.submitted_at), decided_at: iso(verification.decided_at) } : null,
    wallets: wallets.map((row) => ({ currency: row.currency, balance: money(row.currency, row.balance).amount, held: money(row.currency, row.held).amount })),
    ledger: ledger.map((row) => ({ ...row, at: new Date(row.at).toISOString(), ...money(row.currency, row.amount) })),
    payments: payments.map((row) => ({ ...row, at: new Date(row.at).toISOString(), ...money(row.currency, row.amount) })),
    exchanges: exchanges.map((row) => ({ id: row.id, at: new Date(row.at).toISOString(), from: money(row.src, row.pay), to: money(row.dst, row.receive) })),
    transfers: transfers.map((row) => ({ ...row, at: new Date(row.at).toISOString(), ...money(row.currency, row.amount) })),
    cards: cards.map((row) => ({ ...row, at: new Date(row.at).toISOString() })),
    referral: referral ?? { invited: 0, referred_by: null },
    security: {
      second_factor: security.second_factor,
      sessions: security.sessions,
      sign_ins: security.sign_ins,
      withdrawals_blocked_until: security.withdrawals_blocked_until,
    },
    support: { messages: support?.messages ?? 0, last_at: iso(support?.last_at ?? null), reports_against: support?.reports_against ?? 0 },
    notes: notes.map((row) => ({ ...row, at: new Date(row.at).toISOString() })),
    audit,
  };
}

type TBlockState = { sign_in_blocked_at: string | null; withdrawals_blocked_until: string | null };

async function blockState(tx: Queryable, userId: string): Promise<TBlockState> {
  const [row] = await tx.query<TBlockState>(
    'SELECT iso_time(sign_in_blocked_at) AS sign_in_blocked_at, iso_time(withdrawals_blocked_until) AS withdrawals_blocked_until FROM users WHERE id = $1 FOR UPDATE',
    [userId],
  );
  return row!;
}

/** One change to a customer: the row locked, changed, and audited with before and after, in one transaction. */
async function changeCustomer(
  db: Db,
  customer: TCustomerRef,
  actor: TOpsActor & TOpsReason & { action: string },
  change: (tx: Queryable) => Promise<void>,
): Promise<void> {
  await db.transaction(async (tx) => {
    const before = await blockState(tx, customer.id);
    await change(tx);
    const after = await blockState(tx, customer.id);
    await writeAudit(tx, {
      actor: operatorActor(actor.operator),
      action: actor.action,
      subject: customerSubject(customer.account_id),
      reasonCode: actor.reason,
      reasonText: actor.text || null,
      requestId: actor.requestId,
      ip: actor.ip,
      before,
      after,
    });
  });
}

/** Blocks (or unblocks) the customer's sign-in; a block also ends every session at once. */
export async function setSignInBlocked(db: Db, customer: TCustomerRef, blocked: boolean, actor: TOpsActor & TOpsReason): Promise<void> {
  await changeCustomer(db, customer, { ...actor, action: blocked ? 'customers.block_sign_in' : 'customers.unblock_sign_in' }, async (tx) => {
    await tx.query('UPDATE users SET sign_in_blocked_at = $2 WHERE id = $1', [customer.id, blocked ? actor.now : null]);
    if (blocked) await revokeAllSessions(tx, customer.id);
  });
}

/** Withdrawals blocked until the start of a day (UTC); null lifts the operator's block. */
export async function setWithdrawalsBlocked(db: Db, customer: TCustomerRef, until: string | null, actor: TOpsActor & TOpsReason): Promise<void> {
  await changeCustomer(db, customer, { ...actor, action: 'customers.block_withdrawals' }, async (tx) => {
    await tx.query('UPDATE users SET withdrawals_blocked_until = $2 WHERE id = $1', [customer.id, until === null ? null : `${until}T00:00:00Z`]);
  });
}

/** Signs the customer out everywhere, leaving sign-in open. */
export async function revokeCustomerSessions(db: Db, customer: TCustomerRef, actor: TOpsActor & TOpsReason): Promise<void> {
  await changeCustomer(db, customer, { ...actor, action: 'customers.revoke_sessions' }, (tx) => revokeAllSessions(tx, customer.id));
}

/** A note on the customer for colleagues: notes only add up. */
export async function addCustomerNote(db: Db, customer: TCustomerRef, text: string, actor: TOpsActor): Promise<void> {
  await db.transaction(async (tx) => {
    await tx.query('INSERT INTO ops_customer_notes (user_id, operator, text, created_at) VALUES ($1, $2, $3, $4)', [
      customer.id,
      actor.operator.email,
      text,
      actor.now,
    ]);
    await writeAudit(tx, {
      actor: operatorActor(actor.operator),
      action: 'customers.note',
      subject: customerSubject(customer.account_id),
      requestId: actor.requestId,
      ip: actor.ip,
      after: { text },
    });
  });
}

/** Personal data in full: the view itself is audited, with the reason given. */
export async function revealCustomer(db: Db, customer: TCustomerRef, actor: TOpsActor & TOpsReason): Promise<TOpsCustomer> {
  await writeAudit(db, {
    actor: operatorActor(actor.operator),
    action: 'customers.reveal_personal',
    subject: customerSubject(customer.account_id),
    outcome: 'viewed',
    reasonCode: actor.reason,
    reasonText: actor.text || null,
    requestId: actor.requestId,
    ip: actor.ip,
  });
  return customerDossier(db, customer, { revealed: true });
}

/** The customer's page was opened (masked data): a view of a customer, audited too. */
export async function viewCustomer(db: Db, customer: TCustomerRef, actor: TOpsActor): Promise<TOpsCustomer> {
  await writeAudit(db, {
    actor: operatorActor(actor.operator),
    action: 'customers.view',
    subject: customerSubject(customer.account_id),
    outcome: 'viewed',
    requestId: actor.requestId,
    ip: actor.ip,
  });
  return customerDossier(db, customer, { revealed: false });
}
