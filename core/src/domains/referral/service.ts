import { randomInt } from 'node:crypto';
import {
  REFERRAL_INVITE_EVERY_DAYS,
  REFERRAL_MAX_CODES,
  formatAmount,
  maskEmail,
  readReferralCode,
  shortPersonName,
  translate,
  type TBonusDay,
  type TInviteBody,
  type TInviteCode,
  type TLocale,
  type TReferee,
  type TReferralMailingBody,
  type TReferralTerms,
  type TReferralTotals,
} from '@obmen/shared';
import type { Db, Queryable } from '../../db/index.ts';
import { AppError, notFoundOf } from '../../errors.ts';
import { queueMail } from '../../mail/outbox.ts';
import { consumeRateLimit } from '../../rate-limit.ts';
import { currencies, operatorCurrency, parseFraction, parseOperatorAmount } from '../currencies/service.ts';
import type { THistoryPage } from '../history/service.ts';

/*
 * The referral programme. Money moves only in SQL: referral_accrue() inside each
 * fee's transaction (money_exchange; card fees in cards/orders.ts and cards/fees.ts),
 * referral_reverse() in a refund's (a failed card order), referral_settle() in the settlement
 * job. Here: codes, binding at sign-up, terms, lists, invitations by mail.
 */

export type TReferralDeps = { db: Db; publicUrl: string; mailer?: { kick: () => void } };

const CODE_ALPHABET = 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789';
const CODE_LENGTH = 8;

function newCode(): string {
  let code = '';
  for (let i = 0; i < CODE_LENGTH; i++) code += CODE_ALPHABET[randomInt(CODE_ALPHABET.length)];
  return code;
}

export const inviteLink = (publicUrl: string, code: string) => `${publicUrl}/?ref=${code}`;

/** The user's main code, made on first use (a unique index keeps it one per user). */
export async function mainCode(db: Queryable, userId: string): Promise<string> {
  for (let attempt = 0; attempt < 10; attempt++) {
    const [existing] = await db.query<{ code: string }>('SELECT code FROM referral_codes WHERE user_id = $1 AND label IS NULL', [userId]);
    if (existing) return existing.code;
    await db.query('INSERT INTO referral_codes (code, user_id) VALUES ($1, $2) ON CONFLICT DO NOTHING', [newCode(), userId]);
  }
  throw new Error('could not allocate an invite code');
}

export type TInvite = { code: string; link: string; codes: TInviteCode[] };

/** GET /api/referral/invite: the main code and link, and every active code with its referees. */
export async function getInvite(deps: TReferralDeps, userId: string): Promise<TInvite> {
  const code = await mainCode(deps.db, userId);
  const rows = await deps.db.query<{ code: string; label: string | null; created_at: string; referees: number }>(
    `SELECT c.code, c.label, iso_time(c.created_at) AS created_at, (SELECT count(*) FROM referrals r WHERE r.code = c.code)::int AS referees
     FROM referral_codes c WHERE c.user_id = $1 AND c.retired_at IS NULL ORDER BY c.label IS NOT NULL, c.created_at, c.code`,
    [userId],
  );
  return { code, link: inviteLink(deps.publicUrl, code), codes: rows.map((row) => ({ ...row, link: inviteLink(deps.publicUrl, row.code) })) };
}

/**
 * POST /api/referral/invite: a new labelled code (at most REFERRAL_MAX_CODES active ones,
 * counted under the user's row lock), or one of the user's labelled codes retired. Another
 * user's code answers like a missing one; the main code cannot be retired.
 */
export async function changeInvite(deps: TReferralDeps, userId: string, body: TInviteBody): Promise<{ invite: TInvite; created: boolean }> {
  await deps.db.transaction(async (tx) => {
    await tx.query('SELECT 1 FROM users WHERE id = $1 FOR UPDATE', [userId]);
    await mainCode(tx, userId);
    if (body.retire !== undefined) {
      const [row] = await tx.query<{ label: string | null }>('SELECT label FROM referral_codes WHERE code = $1 AND user_id = $2 AND retired_at IS NULL', [
        body.retire,
        userId,
      ]);
      if (!row) throw notFoundOf('invite_code');
      if (row.label === null) throw new AppError('invite_code_default');
      await tx.query('UPDATE referral_codes SET retired_at = now() WHERE code = $1', [body.retire]);
      return;
    }
    const [{ n } = { n: 0 }] = await tx.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM referral_codes WHERE user_id = $1 AND label IS NOT NULL AND retired_at IS NULL',
      [userId],
    );
    if (n >= REFERRAL_MAX_CODES) throw new AppError('invite_codes_limit');
    for (let attempt = 0; ; attempt++) {
      const [made] = await tx.query('INSERT INTO referral_codes (code, user_id, label) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING RETURNING code', [
        newCode(),
        userId,
        body.label,
      ]);
      if (made) break;
      if (attempt > 10) throw new Error('could not allocate an invite code');
    }
  });
  return { invite: await getInvite(deps, userId), created: body.label !== undefined };
}

/** The same-IP window when no terms are set (the column's default). */
const SAME_IP_DAYS = 30;

/**
 * Sign-up: binds a new account to the owner of an active invite code, once (the referee is the
 * primary key: nothing re-binds it). A retired, unknown or own code binds nothing and says
 * nothing: sign-up goes on. Nor does a sign-up from an address (`ips`: the one that asked for
 * the link and the one that followed it) the referrer's account used within the terms'
 * `same_ip_days` (its sessions, its successful sign-ins): that refusal is recorded for operators
 * (referral_refusals) and answered like a retired code.
 */
export async function bindReferee(db: Queryable, refereeId: string, code: unknown, ips: readonly string[] = []): Promise<boolean> {
  const valid = readReferralCode(code);
  if (!valid) return false;
  const [owner] = await db.query<{ user_id: string; days: number }>(
    `SELECT c.user_id::text, coalesce((SELECT same_ip_days FROM referral_terms WHERE id), $3) AS days
     FROM referral_codes c WHERE c.code = $2 AND c.retired_at IS NULL AND c.user_id <> $1`,
    [refereeId, valid, SAME_IP_DAYS],
  );
  if (!owner) return false;
  if (owner.days > 0 && ips.length) {
    const [shared] = await db.query<{ ip: string }>(
      `SELECT ip FROM sessions WHERE user_id = $1 AND ip = ANY ($2::text[]) AND last_seen_at > now() - $3::int * interval '1 day'
       UNION ALL
       SELECT ip FROM sign_ins WHERE user_id = $1 AND success AND ip = ANY ($2::text[]) AND at > now() - $3::int * interval '1 day'
       LIMIT 1`,
      [owner.user_id, ips, owner.days],
    );
    if (shared) {
      await db.query(`INSERT INTO referral_refusals (referee_id, referrer_id, code, reason, ip) VALUES ($1, $2, $3, 'same_ip', $4)`, [
        refereeId,
        owner.user_id,
        valid,
        shared.ip,
      ]);
      return false;
    }
  }
  const rows = await db.query('INSERT INTO referrals (referee_id, referrer_id, code) VALUES ($1, $2, $3) ON CONFLICT (referee_id) DO NOTHING RETURNING 1', [
    refereeId,
    owner.user_id,
    valid,
  ]);
  return rows.length > 0;
}

/** `referral:refusals`: the latest sign-ups a valid code did not bind, and why. */
export async function listReferralRefusals(db: Queryable, limit = 100) {
  return db.query<{ referee_id: string; referrer_id: string; code: string; reason: string; ip: string; at: string }>(
    `SELECT referee_id::text, referrer_id::text, code, reason, ip, iso_time(created_at) AS at FROM referral_refusals ORDER BY id DESC LIMIT $1`,
    [limit],
  );
}

// ---- terms and totals -----------------------------------------------------------------------

type TTermsRow = { share: string; currency: string; hold_seconds: number; min_payout: string; enabled: boolean; same_ip_days: number };

async function termsRow(db: Queryable): Promise<TTermsRow | null> {
  const [row] = await db.query<TTermsRow>('SELECT share::text, currency, hold_seconds, min_payout::text, enabled, same_ip_days FROM referral_terms WHERE id');
  return row ?? null;
}

async function precisionOf(db: Queryable, code: string): Promise<number> {
  return (await currencies(db)).get(code)?.precision ?? 0;
}

async function money(db: Queryable, rows: Array<{ currency: string; amount: string }>) {
  const byCode = await currencies(db);
  return rows.map((row) => ({ currency: row.currency, amount: formatAmount(row.amount, byCode.get(row.currency)?.precision ?? 0) }));
}

/** The terms as users see them (the same-IP window is the operators' own: `operatorTerms`). */
export async function referralTerms(db: Queryable): Promise<TReferralTerms | null> {
  const row = await termsRow(db);
  if (!row) return null;
  const { same_ip_days: _, ...terms } = row;
  return { ...terms, min_payout: formatAmount(row.min_payout, await precisionOf(db, row.currency)) };
}

export type TOperatorTerms = TReferralTerms & { same_ip_days: number };

/** `referral:terms`: the terms with the same-IP window. */
export async function operatorTerms(db: Queryable): Promise<TOperatorTerms | null> {
  const [terms, row] = [await referralTerms(db), await termsRow(db)];
  return terms && row ? { ...terms, same_ip_days: row.same_ip_days } : null;
}

/** GET /api/referral/info: the terms and the user's totals in the payout currency. */
export async function referralInfo(db: Queryable, userId: string, now: Date): Promise<{ terms: TReferralTerms | null; totals: TReferralTotals | null }> {
  const terms = await referralTerms(db);
  if (!terms) return { terms: null, totals: null };
  const [row] = await db.query<{ pending: string; available: string; paid: string }>(
    // Reversed accruals (refunded fees) count nowhere; one reversed after it was paid is owed
    // back and comes off what is available (the next settlement takes it).
    `SELECT coalesce(sum(amount) FILTER (WHERE settlement_id IS NULL AND reversal_transaction_id IS NULL AND due_at > $3), 0)::text AS pending,
            (coalesce(sum(amount) FILTER (WHERE settlement_id IS NULL AND reversal_transaction_id IS NULL AND due_at <= $3), 0)
              - coalesce(sum(amount) FILTER (WHERE settlement_id IS NOT NULL AND reversal_transaction_id IS NOT NULL AND clawed_by IS NULL), 0))::text AS available,
            (SELECT coalesce(sum(s.amount), 0) FROM referral_settlements s WHERE s.referrer_id = $1 AND s.currency = $2)::text AS paid
     FROM referral_accruals WHERE referrer_id = $1 AND currency = $2`,
    [userId, terms.currency, now.toISOString()],
  );
  const precision = await precisionOf(db, terms.currency);
  return {
    terms,
    totals: {
      currency: terms.currency,
      pending: formatAmount(row!.pending, precision),
      available: formatAmount(row!.available, precision),
      paid: formatAmount(row!.paid, precision),
    },
  };
}

const HOLD_UNITS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86400 };

/** `14d`, `36h`, `90m`, `30s` or plain seconds. */
export function parseHold(text: string): number {
  const match = /^(\d{1,7})([smhd]?)$/.exec(text.trim());
  if (!match) throw new AppError('not_a_decimal', { vars: { name: 'hold', value: text } });
  return Number(match[1]) * HOLD_UNITS[match[2] || 's']!;
}

function parseDays(text: string): number {
  if (!/^\d{1,4}$/.test(text.trim())) throw new AppError('not_a_decimal', { vars: { name: 'same_ip_days', value: text } });
  return Number(text);
}

export type TTermsInput = { share?: string; currency?: string; hold?: string; min?: string; enabled?: string; same_ip_days?: string };

/** The operator's `referral:terms`: what is given changes; the first call must name share and currency. */
export async function setReferralTerms(db: Queryable, input: TTermsInput): Promise<TOperatorTerms> {
  const current = await termsRow(db);
  const currency = input.currency !== undefined ? (await operatorCurrency(db, input.currency)).code : current?.currency;
  const share = input.share !== undefined ? parseFraction('share', input.share) : current?.share;
  if (!currency || share === undefined) throw new AppError('bad_request', { fields: { share: 'validation.required', currency: 'validation.required' } });
  const holdSeconds = input.hold !== undefined ? parseHold(input.hold) : (current?.hold_seconds ?? 14 * 86400);
  const min =
    input.min !== undefined
      ? parseOperatorAmount('min', input.min, await operatorCurrency(db, currency))
      : current && current.currency === currency
        ? current.min_payout
        : '0';
  const enabled = input.enabled !== undefined ? input.enabled === 'true' : (current?.enabled ?? true);
  const sameIpDays = input.same_ip_days !== undefined ? parseDays(input.same_ip_days) : (current?.same_ip_days ?? SAME_IP_DAYS);
  await db.query(
    `INSERT INTO referral_terms (share, currency, hold_seconds, min_payout, enabled, same_ip_days) VALUES ($1, $2, $3, $4, $5, $6)
     ON CONFLICT (id) DO UPDATE SET share = $1, currency = $2, hold_seconds = $3, min_payout = $4, enabled = $5, same_ip_days = $6, updated_at = now()`,
    [share, currency, holdSeconds, min, enabled, sameIpDays],
  );
  return (await operatorTerms(db))!;
}

// ---- referees and bonus history -------------------------------------------------------------

type TRefereeRow = { id: string; email: string; joined_at: string; code: string; code_label: string | null; active: boolean };

const REFEREE_SELECT = `SELECT u.id::text AS id, u.email, iso_time(r.created_at) AS joined_at, r.code, c.label AS code_label,
    EXISTS (SELECT 1 FROM referral_accruals a WHERE a.referee_id = r.referee_id AND a.referrer_id = r.referrer_id AND a.reversal_transaction_id IS NULL
      AND a.created_at > $2::timestamptz - interval '30 days') AS active
  FROM referrals r JOIN users u ON u.id = r.referee_id JOIN referral_codes c ON c.code = r.code`;

async function earnedBy(db: Queryable, referrerId: string, refereeIds: string[]) {
  if (!refereeIds.length) return new Map<string, Array<{ currency: string; amount: string }>>();
  const rows = await db.query<{ referee_id: string; currency: string; amount: string }>(
    `SELECT referee_id::text, currency, sum(amount)::text AS amount FROM referral_accruals
     WHERE referrer_id = $1 AND referee_id = ANY ($2::bigint[]) AND reversal_transaction_id IS NULL GROUP BY referee_id, currency ORDER BY currency`,
    [referrerId, refereeIds],
  );
  const formatted = await money(db, rows);
  const out = new Map<string, Array<{ currency: string; amount: string }>>();
  rows.forEach((row, i) => out.set(row.referee_id, [...(out.get(row.referee_id) ?? []), formatted[i]!]));
  return out;
}

function referee(row: TRefereeRow, earned: Map<string, Array<{ currency: string; amount: string }>>): TReferee {
  return { ...row, email: maskEmail(row.email), earned: earned.get(row.id) ?? [] };
}

function pageOf<T>(items: T[], total: number, page: number, perPage: number): THistoryPage<T> {
  return { items, page, per_page: perPage, total, pages: Math.max(1, Math.ceil(total / perPage)) };
}

/** GET /api/referral/list: the user's referees, newest first. */
export async function listReferees(db: Queryable, userId: string, query: { page: number; per_page: number }, now: Date): Promise<THistoryPage<TReferee>> {
  const [{ total } = { total: 0 }] = await db.query<{ total: number }>('SELECT count(*)::int AS total FROM referrals WHERE referrer_id = $1', [userId]);
  const rows = await db.query<TRefereeRow>(`${REFEREE_SELECT} WHERE r.referrer_id = $1 ORDER BY r.created_at DESC, r.referee_id DESC LIMIT $3 OFFSET $4`, [
    userId,
    now.toISOString(),
    query.per_page,
    (query.page - 1) * query.per_page,
  ]);
  const earned = await earnedBy(
    db,
    userId,
    rows.map((row) => row.id),
  );
  return pageOf(
    rows.map((row) => referee(row, earned)),
    total,
    query.page,
    query.per_page,
  );
}

/** GET /api/referral/recruit/{id}: one of the user's own referees (anyone else's: 404 as a missing one). */
export async function recruit(db: Queryable, userId: string, refereeId: string, now: Date) {
  const [row] = await db.query<TRefereeRow>(`${REFEREE_SELECT} WHERE r.referrer_id = $1 AND r.referee_id = $3`, [userId, now.toISOString(), refereeId]);
  if (!row) throw notFoundOf('recruit');
  const monthRows = await db.query<{ month: string; currency: string; amount: string }>(
    `SELECT to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM') AS month, currency, sum(amount)::text AS amount
     FROM referral_accruals WHERE referrer_id = $1 AND referee_id = $2 AND reversal_transaction_id IS NULL GROUP BY 1, 2 ORDER BY 1 DESC, 2`,
    [userId, refereeId],
  );
  const formatted = await money(db, monthRows);
  return {
    ...referee(row, await earnedBy(db, userId, [row.id])),
    months: monthRows.map((month, i) => ({ month: month.month, ...formatted[i]! })),
  };
}

/**
 * GET /api/referral/bonus/history: the user's bonuses summed per day (UTC) and referee, never
 * per trade (no count, no time of day): a referrer cannot read a referee's trading from it.
 */
export async function bonusHistory(db: Queryable, userId: string, query: { page: number; per_page: number }, limit?: number): Promise<THistoryPage<TBonusDay>> {
  const grouped = `FROM referral_accruals a JOIN users u ON u.id = a.referee_id WHERE a.referrer_id = $1 AND a.reversal_transaction_id IS NULL
    GROUP BY (a.created_at AT TIME ZONE 'UTC')::date, a.referee_id, u.email, a.currency`;
  const [{ total } = { total: 0 }] = await db.query<{ total: number }>(`SELECT count(*)::int AS total FROM (SELECT 1 ${grouped}) g`, [userId]);
  const perPage = limit ?? query.per_page;
  const rows = await db.query<{ date: string; referee_id: string; email: string; currency: string; amount: string; paid: string }>(
    `SELECT to_char((a.created_at AT TIME ZONE 'UTC')::date, 'YYYY-MM-DD') AS date, a.referee_id::text AS referee_id, u.email, a.currency,
            sum(a.amount)::text AS amount, coalesce(sum(a.amount) FILTER (WHERE a.settlement_id IS NOT NULL), 0)::text AS paid
     ${grouped} ORDER BY 1 DESC, 2 DESC, 4 LIMIT $2 OFFSET $3`,
    [userId, perPage, limit ? 0 : (query.page - 1) * query.per_page],
  );
  const byCode = await currencies(db);
  const items = rows.map((row) => {
    const precision = byCode.get(row.currency)?.precision ?? 0;
    return {
      date: row.date,
      referee_id: row.referee_id,
      referee: maskEmail(row.email),
      currency: row.currency,
      amount: formatAmount(row.amount, precision),
      paid: formatAmount(row.paid, precision),
    };
  });
  return pageOf(items, total, query.page, perPage);
}

export const BONUS_CSV_COLUMNS: Array<keyof TBonusDay & string> = ['date', 'referee', 'currency', 'amount', 'paid'];

// ---- invitations by mail --------------------------------------------------------------------

/**
 * POST /api/referral/mailing: the user's invite link to up to 10 addresses in the chosen
 * language. Every address counts against the user's daily limit. An address with an account,
 * one invited in the last 30 days (by anyone) or one that unsubscribed gets nothing, and the
 * answer is the same as for any other: it tells nobody who has an account.
 */
export async function sendInvitations(deps: TReferralDeps, userId: string, body: TReferralMailingBody): Promise<number> {
  const addresses = [...new Set(body.addresses.map((address) => address.trim().toLowerCase()))];
  for (const _ of addresses) await consumeRateLimit(deps.db, 'referral_mailing_user', userId);
  const code = await mainCode(deps.db, userId);
  const [inviter] = await deps.db.query<{ first_name: string | null; last_name: string | null }>('SELECT first_name, last_name FROM users WHERE id = $1', [
    userId,
  ]);
  const name = shortPersonName(inviter?.first_name, inviter?.last_name) ?? translate(body.locale, 'referral.someone');
  await deps.db.transaction(async (tx) => {
    for (const address of addresses) {
      const [account] = await tx.query('SELECT 1 FROM users WHERE lower(email) = $1', [address]);
      if (account) continue;
      const [claimed] = await tx.query(
        `INSERT INTO referral_invitations AS i (address, inviter_id) VALUES ($1, $2)
         ON CONFLICT (address) DO UPDATE SET inviter_id = $2, sent_at = now()
           WHERE i.sent_at <= now() - $3::int * interval '1 day'
         RETURNING address`,
        [address, userId, REFERRAL_INVITE_EVERY_DAYS],
      );
      if (!claimed) continue;
      // queueMail skips an address that unsubscribed (mail preferences): the claim stays, harmless.
      await queueMail(tx, {
        kind: 'referral_invite',
        to: address,
        locale: body.locale as TLocale,
        vars: { name, link: inviteLink(deps.publicUrl, code) },
        publicUrl: deps.publicUrl,
      });
    }
  });
  deps.mailer?.kick();
  return addresses.length;
}

// ---- settlement -----------------------------------------------------------------------------

export type TSettled = { referrer_id: string; currency: string; id: string; amount: string; clawed: string; accruals: number };

/**
 * The settlement job (referral-settlement, core/src/jobs; `referral:settle`): for each referrer and currency with
 * bonuses past their hold at `now`, referral_settle() in its own transaction pays them as ONE
 * ledger transaction and marks them settled in that transaction, and the referrer gets a notice
 * (an optional mail). Safe with many cores at once: the accruals are claimed with SKIP LOCKED.
 */
export async function settleReferralBonuses(deps: TReferralDeps, now: Date, limit = 500): Promise<TSettled[]> {
  const due = await deps.db.query<{ referrer_id: string; currency: string }>(
    `SELECT DISTINCT referrer_id::text, currency FROM referral_accruals
     WHERE settlement_id IS NULL AND reversal_transaction_id IS NULL AND due_at <= $1 ORDER BY 1, 2 LIMIT $2`,
    [now.toISOString(), limit],
  );
  const settled: TSettled[] = [];
  for (const { referrer_id, currency } of due) {
    const done = await deps.db.transaction(async (tx) => {
      const [row] = await tx.query<{ r: { id: string; amount: string; clawed: string; accruals: number } | null }>('SELECT referral_settle($1, $2, $3) AS r', [
        referrer_id,
        currency,
        now.toISOString(),
      ]);
      if (!row?.r) return null;
      tx.announce?.([referrer_id]);
      const [user] = await tx.query<{ email: string; locale: TLocale }>('SELECT email, locale FROM users WHERE id = $1', [referrer_id]);
      if (user) {
        await queueMail(tx, {
          kind: 'referral_paid',
          to: user.email,
          locale: user.locale,
          vars: { amount: formatAmount(row.r.amount, await precisionOf(tx, currency)), currency, link: `${deps.publicUrl}/referral` },
          publicUrl: deps.publicUrl,
        });
      }
      return { referrer_id, currency, ...row.r };
    });
    if (done) settled.push(done);
  }
  if (settled.length) deps.mailer?.kick();
  return settled;
}
