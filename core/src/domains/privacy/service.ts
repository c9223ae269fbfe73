import { strToU8, zipSync } from 'fflate';
import { CLOSED_ACCOUNT_RETENTION_DAYS, DATA_EXPORT_TTL_MS, formatAmount, type TCloseAccountBody, type TLocale, type TPrivacyResponse } from '@obmen/shared';
import type { Db, Queryable } from '../../db/index.ts';
import { AppError, notFoundOf } from '../../errors.ts';
import { queueMail } from '../../mail/outbox.ts';
import { consumeRateLimit } from '../../rate-limit.ts';
import { newFileKey, type TFileStorage } from '../../storage/index.ts';
import { secondFactorNeed, verifySecondFactor } from '../security/second-factor.ts';
import type { TDocumentCipher } from '../verification/cipher.ts';
import { revokeAllSessions } from '../auth/sessions.ts';

/*
 * Leaving with your data. An export is asked for, then made by the data-exports job (so a big
 * account costs no request its time): a ZIP of JSON and CSV with the profile, the identity
 * verification as typed and decided (the documents' files only when asked), every ledger posting
 * with its running balance, the payments, withdrawals and transfers, and the chats; kept in
 * private storage and offered to its owner for 24 hours. An account is closed when every balance
 * is zero and nothing is under way: its sessions end, sign-in is refused, and its personal data
 * are erased by the same job once the legal period has passed.
 */

type TExportRow = {
  id: string;
  state: TPrivacyResponse['exports'][number]['state'];
  with_files: boolean;
  size: string | null;
  created_at: Date;
  expires_at: Date | null;
};

/** What stands in the way of closing the account (i18n keys); empty: it may be closed now. */
async function closeBlockers(db: Queryable, userId: string): Promise<string[]> {
  const [row] = await db.query<{ balance: boolean; withdrawals: boolean; payments: boolean; cards: boolean }>(
    `SELECT EXISTS (SELECT 1 FROM ledger_accounts WHERE user_id = $1 AND kind IN ('user', 'hold') AND balance <> 0) AS balance,
            EXISTS (SELECT 1 FROM withdrawals WHERE user_id = $1 AND state IN ('requested', 'approved', 'processing')) AS withdrawals,
            EXISTS (SELECT 1 FROM payments WHERE user_id = $1 AND state IN ('created', 'pending')) AS payments,
            EXISTS (SELECT 1 FROM cards WHERE user_id = $1 AND status NOT IN ('cancelled', 'failed', 'closed')) AS cards`,
    [userId],
  );
  return (['balance', 'withdrawals', 'payments', 'cards'] as const).filter((key) => row?.[key]).map((key) => `privacy.blocker_${key}`);
}

/** GET /api/user/privacy */
export async function privacyState(db: Queryable, userId: string): Promise<TPrivacyResponse> {
  const rows = await db.query<TExportRow>(
    `SELECT public_id::text AS id, state, with_files, size::text AS size, created_at, expires_at FROM data_exports WHERE user_id = $1 ORDER BY id DESC LIMIT 10`,
    [userId],
  );
  const blockers = await closeBlockers(db, userId);
  return {
    status: 'ok',
    exports: rows.map((row) => ({
      id: row.id,
      state: row.state,
      with_files: row.with_files,
      size: row.size === null ? null : Number(row.size),
      created_at: new Date(row.created_at).toISOString(),
      expires_at: row.expires_at ? new Date(row.expires_at).toISOString() : null,
    })),
    closable: { ok: blockers.length === 0, blockers },
    ...(await secondFactorNeed(db, userId)),
  };
}

/** POST /api/user/privacy/export: one waiting at a time; three a day. */
export async function requestExport(db: Db, userId: string, withFiles: boolean, now: Date): Promise<void> {
  const [waiting] = await db.query("SELECT 1 FROM data_exports WHERE user_id = $1 AND state = 'queued'", [userId]);
  if (waiting) return;
  await consumeRateLimit(db, 'data_export_user', userId);
  await db.query('INSERT INTO data_exports (user_id, with_files, created_at) VALUES ($1, $2, $3)', [userId, withFiles, now]);
}

/** A ready export of the user's, to stream (another user's, or an expired one, is not found). */
export async function exportFile(db: Queryable, userId: string, id: string, now: Date): Promise<{ key: string; name: string }> {
  const [row] = await db.query<{ key: string; created_at: Date }>(
    `SELECT storage_key AS key, created_at FROM data_exports WHERE public_id = $1 AND user_id = $2 AND state = 'ready' AND expires_at > $3`,
    [id, userId, now],
  );
  if (!row) throw notFoundOf('data_export');
  return { key: row.key, name: `obmen-data-${new Date(row.created_at).toISOString().slice(0, 10)}.zip` };
}

const csvCell = (value: unknown) => {
  const text = value === null || value === undefined ? '' : value instanceof Date ? value.toISOString() : String(value);
  return /[",\n\r]/.test(text) || /^[=+\-@]/.test(text) ? `"${text.replace(/^([=+\-@])/, "'$1").replace(/"/g, '""')}"` : text;
};
const csv = (rows: Array<Record<string, unknown>>, columns: string[]) =>
  `${[columns.join(','), ...rows.map((row) => columns.map((column) => csvCell(row[column])).join(','))].join('\n')}\n`;
const json = (value: unknown) => strToU8(`${JSON.stringify(value, (_key, v) => (typeof v === 'bigint' ? v.toString() : v), 2)}\n`);

/** The ZIP of one account's data. */
async function buildExport(db: Queryable, storage: TFileStorage, cipher: TDocumentCipher, userId: string, withFiles: boolean): Promise<Uint8Array> {
  const precisions = new Map(
    (await db.query<{ code: string; precision: number }>('SELECT code, precision FROM currencies')).map((row) => [row.code, Number(row.precision)]),
  );
  const money = (minor: string | null, currency: string) => (minor === null ? null : formatAmount(minor, precisions.get(currency) ?? 0));
  const [profile] = await db.query(
    `SELECT account_id, email, locale, first_name, last_name, verification_level, created_at, email_confirmed_at, anti_phishing_code FROM users WHERE id = $1`,
    [userId],
  );
  const signIns = await db.query('SELECT at, ip, user_agent, method, success, failure FROM sign_ins WHERE user_id = $1 ORDER BY id', [userId]);
  const verifications = await db.query<{ id: string; number_enc: Buffer | null } & Record<string, unknown>>(
    `SELECT id::text AS id, type, status, number_enc, issuing_country, issue_date::text AS issue_date, expiry_date::text AS expiry_date, first_name, last_name,
            middle_name, birth_date::text AS birth_date, decision_note, created_at, submitted_at, decided_at
       FROM verifications WHERE user_id = $1 ORDER BY id`,
    [userId],
  );
  const files = await db.query<{ verification_id: string; side: string; storage_key: string; mime: string; created_at: Date }>(
    `SELECT f.verification_id::text AS verification_id, f.side, f.storage_key, f.mime, f.created_at FROM verification_files f
       JOIN verifications v ON v.id = f.verification_id WHERE v.user_id = $1 ORDER BY f.id`,
    [userId],
  );
  const entries: Record<string, Uint8Array> = {};
  const documents = [];
  for (const { number_enc, ...row } of verifications) {
    documents.push({
      ...row,
      number: number_enc ? await cipher.decrypt(Buffer.from(number_enc)) : null,
      files: files.filter((file) => file.verification_id === row.id).map((file) => ({ side: file.side, type: file.mime, added_at: file.created_at })),
    });
    if (!withFiles) continue;
    for (const [i, file] of files.filter((f) => f.verification_id === row.id).entries()) {
      const object = await storage.get(file.storage_key);
      if (!object) continue;
      const chunks: Buffer[] = [];
      for await (const chunk of object.body) chunks.push(Buffer.from(chunk));
      entries[`verification/${row.id}-${file.side}-${i + 1}.${file.mime.split('/')[1] === 'jpeg' ? 'jpg' : file.mime.split('/')[1]}`] = Buffer.concat(chunks);
    }
  }
  const postings = await db.query<{ at: Date; transaction: string; kind: string; account: string; currency: string; amount: string; memo: string | null }>(
    `SELECT t.created_at AS at, t.id::text AS transaction, t.kind, a.kind AS account, p.currency, p.amount::text AS amount, t.memo
       FROM postings p JOIN ledger_accounts a ON a.id = p.account_id JOIN ledger_transactions t ON t.id = p.transaction_id
      WHERE a.user_id = $1 AND a.kind IN ('user', 'hold') ORDER BY p.id`,
    [userId],
  );
  const running = new Map<string, bigint>();
  const ledger = postings.map((row) => {
    const key = `${row.account}/${row.currency}`;
    const balance = (running.get(key) ?? 0n) + BigInt(row.amount);
    running.set(key, balance);
    return { ...row, amount: money(row.amount, row.currency), balance: money(balance.toString(), row.currency) };
  });
  const payments = await db.query<Record<string, unknown> & { currency: string; amount: string; fee: string }>(
    `SELECT public_id::text AS id, direction, system_id, currency, amount::text AS amount, fee::text AS fee, state, reason, created_at, credited_at
       FROM payments WHERE user_id = $1 ORDER BY id`,
    [userId],
  );
  const withdrawals = await db.query<Record<string, unknown> & { currency: string; amount: string; fee: string; receive: string }>(
    `SELECT public_id::text AS id, system_id, currency, amount::text AS amount, fee::text AS fee, receive::text AS receive, details_shown AS destination,
            state, reason, created_at, finished_at FROM withdrawals WHERE user_id = $1 ORDER BY id`,
    [userId],
  );
  const transfers = await db.query<Record<string, unknown> & { currency: string; amount: string; fee: string }>(
    `SELECT t.id::text AS id, CASE WHEN t.sender_id = $1 THEN 'out' ELSE 'in' END AS direction,
            (SELECT account_id FROM users WHERE id = CASE WHEN t.sender_id = $1 THEN t.recipient_id ELSE t.sender_id END) AS other_account,
            t.currency, t.amount::text AS amount, CASE WHEN t.sender_id = $1 THEN t.fee ELSE 0 END::text AS fee, t.comment, t.created_at
       FROM transfers t WHERE t.sender_id = $1 OR t.recipient_id = $1 ORDER BY t.id`,
    [userId],
  );
  const chats = await db.query(
    `SELECT c.kind, m.created_at AS at, CASE WHEN m.sender_id = $1 THEN 'me' WHEN m.operator IS NOT NULL THEN 'support' ELSE 'other' END AS sender, m.text
       FROM conversations c JOIN chat_messages m ON m.conversation_id = c.id
      WHERE c.user_a = $1 OR c.user_b = $1 ORDER BY c.id, m.id`,
    [userId],
  );
  const priced = <T extends { currency: string }>(rows: T[], columns: Array<keyof T>) =>
    rows.map((row) => ({ ...row, ...Object.fromEntries(columns.map((column) => [column, money(row[column] as string, row.currency)])) }));
  Object.assign(entries, {
    'profile.json': json({ profile, sign_ins: signIns }),
    'verification.json': json(documents),
    'ledger.csv': strToU8(csv(ledger, ['at', 'transaction', 'kind', 'account', 'currency', 'amount', 'balance', 'memo'])),
    'payments.csv': strToU8(
      csv(priced(payments, ['amount', 'fee']), ['id', 'direction', 'system_id', 'currency', 'amount', 'fee', 'state', 'reason', 'created_at', 'credited_at']),
    ),
    'withdrawals.csv': strToU8(
      csv(priced(withdrawals, ['amount', 'fee', 'receive']), [
        'id',
        'system_id',
        'currency',
        'amount',
        'fee',
        'receive',
        'destination',
        'state',
        'reason',
        'created_at',
        'finished_at',
      ]),
    ),
    'transfers.csv': strToU8(
      csv(priced(transfers, ['amount', 'fee']), ['id', 'direction', 'other_account', 'currency', 'amount', 'fee', 'comment', 'created_at']),
    ),
    'chats.json': json(chats),
  });
  return zipSync(entries, { level: 6 });
}

/**
 * The data-exports job: makes the waiting exports (each claimed with SKIP LOCKED, so two cores
 * never make one twice), forgets the expired ones (their files removed), and erases the closed
 * accounts whose legal period has passed.
 */
export async function runPrivacyJobs(
  deps: { db: Db; storage: TFileStorage; cipher: TDocumentCipher },
  now: Date,
): Promise<{ made: number; expired: number; erased: number }> {
  const { db, storage, cipher } = deps;
  let made = 0;
  for (;;) {
    const done = await db.transaction(async (tx) => {
      const [row] = await tx.query<{ id: string; user_id: string; with_files: boolean }>(
        `SELECT id::text AS id, user_id::text AS user_id, with_files FROM data_exports WHERE state = 'queued' ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED`,
      );
      if (!row) return false;
      const bytes = await buildExport(tx, storage, cipher, row.user_id, row.with_files);
      const key = newFileKey('exports', 'zip', now);
      await storage.put(key, Buffer.from(bytes), bytes.length, 'application/zip');
      await tx.query(`UPDATE data_exports SET state = 'ready', storage_key = $2, size = $3, ready_at = $4, expires_at = $5 WHERE id = $1`, [
        row.id,
        key,
        bytes.length,
        now,
        new Date(now.getTime() + DATA_EXPORT_TTL_MS),
      ]);
      return true;
    });
    if (!done || ++made >= 10) break;
  }
  const expired = await db.query<{ id: string; key: string }>(
    `SELECT id::text AS id, storage_key AS key FROM data_exports WHERE state = 'ready' AND expires_at <= $1 LIMIT 100`,
    [now],
  );
  for (const { id, key } of expired) {
    await db.query(`UPDATE data_exports SET state = 'expired', storage_key = NULL WHERE id = $1 AND state = 'ready'`, [id]);
    await storage.remove(key);
  }
  return { made, expired: expired.length, erased: await eraseClosedAccounts(db, storage, now) };
}

/** Closed accounts past their legal period: personal data gone; the ledger keeps its rows under the account number. */
async function eraseClosedAccounts(db: Db, storage: TFileStorage, now: Date): Promise<number> {
  const due = await db.query<{ id: string }>('SELECT id::text AS id FROM users WHERE erase_after <= $1 AND erased_at IS NULL LIMIT 50', [now]);
  for (const { id } of due) {
    const keys = await db.transaction(async (tx) => {
      const files = await tx.query<{ key: string }>(
        `SELECT f.storage_key AS key FROM verification_files f JOIN verifications v ON v.id = f.verification_id WHERE v.user_id = $1
         UNION ALL SELECT storage_key FROM data_exports WHERE user_id = $1 AND storage_key IS NOT NULL`,
        [id],
      );
      await tx.query('DELETE FROM verifications WHERE user_id = $1', [id]);
      await tx.query('DELETE FROM data_exports WHERE user_id = $1', [id]);
      await tx.query('DELETE FROM sign_ins WHERE user_id = $1', [id]);
      await tx.query('DELETE FROM sign_in_places WHERE user_id = $1', [id]);
      await tx.query('DELETE FROM withdraw_destinations WHERE user_id = $1', [id]);
      await tx.query(
        `UPDATE users SET email = 'erased-' || id || '@erased.invalid', first_name = NULL, last_name = NULL, anti_phishing_code = NULL, erased_at = $2
          WHERE id = $1`,
        [id, now],
      );
      return files.map((row) => row.key);
    });
    for (const key of keys) await storage.remove(key);
  }
  return due.length;
}

/**
 * POST /api/user/close: the account's e-mail typed again and the second factor (2FA on); refused
 * while money or anything under way remains. Sessions end at once, sign-in is refused from now,
 * and the data are erased after the legal period; a mail confirms it.
 */
export async function closeAccount(db: Db, userId: string, body: TCloseAccountBody, now: Date): Promise<void> {
  await verifySecondFactor(db, userId, { code: body.code, passkey: body.passkey }, now.getTime());
  await db.transaction(async (tx) => {
    const [user] = await tx.query<{ email: string; locale: TLocale; account_id: number }>(
      'SELECT email, locale, account_id FROM users WHERE id = $1 AND closed_at IS NULL FOR UPDATE',
      [userId],
    );
    if (!user) throw new AppError('unauthorized');
    if (user.email.toLowerCase() !== body.email.trim().toLowerCase()) throw new AppError('validation', { fields: { email: 'privacy.email_mismatch' } });
    const blockers = await closeBlockers(tx, userId);
    if (blockers.length) throw new AppError('account_not_closable', { key: blockers[0] as never });
    await tx.query(`UPDATE users SET closed_at = $2, erase_after = $2::timestamptz + make_interval(days => $3) WHERE id = $1`, [
      userId,
      now,
      CLOSED_ACCOUNT_RETENTION_DAYS,
    ]);
    await revokeAllSessions(tx, userId);
    await tx.query('UPDATE auth_tokens SET used_at = now() WHERE user_id = $1 AND used_at IS NULL', [userId]);
    await queueMail(tx, { kind: 'account_closed', to: user.email, locale: user.locale, vars: { account_id: user.account_id } });
  });
}
