import { displayMoney, formatAmount, isI18nKey, translate, type TLocale } from '@obmen/shared';
import type { Db, Queryable } from '../db/index.ts';
import { queueMails, type TMailKind } from './outbox.ts';

/*
 * Mails when money moves. The movement puts a row in money_mail_queue in its own transaction (the
 * ledger's SQL functions too: money_transfer_many for transfers received), so a mail is owed
 * exactly when the money moved; the money-mails job writes the owed mails into the outbox in the
 * user's language, with their anti-phishing code, and deletes the rows in the same transaction.
 * The hot paths pay one small insert; rendering, preferences and the recipient's address are the
 * job's.
 */

export const MONEY_MAIL_KINDS = [
  'deposit_credited',
  'withdrawal_requested',
  'withdrawal_sent',
  'withdrawal_failed',
  'transfer_received',
  'card_ordered',
  'card_issued',
] as const satisfies readonly TMailKind[];
export type TMoneyMailKind = (typeof MONEY_MAIL_KINDS)[number];

/** What a money mail says: amounts in minor units of `currency`, the other party as a user id. */
export type TMoneyMailVars = { currency?: string; amount?: string; fee?: string; id?: string; from_user?: string; reason?: string };

/** Owes the user a money mail, in the caller's transaction (the movement's). */
export async function oweMoneyMail(tx: Queryable, userId: string, kind: TMoneyMailKind, vars: TMoneyMailVars): Promise<void> {
  await tx.query('INSERT INTO money_mail_queue (user_id, kind, vars) VALUES ($1, $2, $3::jsonb)', [userId, kind, JSON.stringify(vars)]);
}

/** Where each mail's link leads on the site. */
const PAGE: Record<TMoneyMailKind, string> = {
  deposit_credited: '/history/deposit',
  withdrawal_requested: '/history/withdraw',
  withdrawal_sent: '/history/withdraw',
  withdrawal_failed: '/history/withdraw',
  transfer_received: '/history/transfer',
  card_ordered: '/cards',
  card_issued: '/cards',
};

type TOwed = {
  id: string;
  kind: TMoneyMailKind;
  vars: TMoneyMailVars;
  email: string;
  locale: TLocale;
  precision: number | null;
  from_account: number | null;
  from_name: string | null;
};

/**
 * Writes up to `limit` owed mails into the outbox (oldest first, one insert) and forgets them, in
 * one transaction; rows another core is writing are skipped (SKIP LOCKED). Answers how many were owed.
 */
export async function writeMoneyMails(db: Db, publicUrl: string, limit = 200): Promise<number> {
  return db.transaction(async (tx) => {
    const owed = await tx.query<TOwed>(
      `WITH taken AS (
         DELETE FROM money_mail_queue WHERE id IN (SELECT id FROM money_mail_queue ORDER BY id LIMIT $1 FOR UPDATE SKIP LOCKED)
         RETURNING id, user_id, kind, vars
       )
       SELECT t.id::text AS id, t.kind, t.vars, u.email, u.locale, c.precision, f.account_id AS from_account,
              mask_person(f.first_name, f.last_name, f.email) AS from_name
         FROM taken t JOIN users u ON u.id = t.user_id
         LEFT JOIN currencies c ON c.code = t.vars->>'currency'
         LEFT JOIN users f ON f.id = (t.vars->>'from_user')::bigint
        ORDER BY t.id`,
      [limit],
    );
    const money = (mail: TOwed, minor: string | undefined) =>
      minor === undefined || mail.precision === null ? '' : displayMoney(formatAmount(minor, Number(mail.precision)), mail.vars.currency!, mail.locale);
    await queueMails(
      tx,
      owed.map((mail) => ({
        kind: mail.kind,
        to: mail.email,
        locale: mail.locale,
        publicUrl,
        vars: {
          amount: money(mail, mail.vars.amount),
          fee: money(mail, mail.vars.fee),
          // As the transfer's recipient sees the sender in history: a masked name and the account number.
          from: mail.from_account === null ? '' : `${mail.from_name} (${mail.from_account})`,
          reason: mail.vars.reason && isI18nKey(mail.vars.reason) ? translate(mail.locale, mail.vars.reason) : '',
          link: `${publicUrl}${PAGE[mail.kind]}`,
        },
      })),
    );
    return owed.length;
  });
}
