import { translate, type TLocale, type TMailTopic } from '@obmen/shared';
import type { Queryable } from '../db/index.ts';
import { linkKey, ONE_CLICK_PATH, UNSUBSCRIBE_PATH, unsubscribeTokenWith } from './preferences.ts';

/** Every mail core sends; the texts are the i18n keys `mail.<kind>.subject` and `mail.<kind>.text`. */
export type TMailKind =
  | 'sign_in'
  | 'signup_confirm'
  | 'signup_existing'
  | 'reset'
  | 'reset_unknown'
  | 'confirm_email'
  | 'password_changed'
  | 'password_failures'
  | 'verification_approved'
  | 'verification_rejected_retry'
  | 'verification_rejected_final'
  | 'second_factor_enabled'
  | 'second_factor_disabled'
  | 'passkey_added'
  | 'api_key_created'
  | 'email_change_confirm'
  | 'email_change_notice'
  | 'email_change_taken'
  | 'email_change_reported'
  | 'referral_invite'
  | 'referral_paid'
  | 'anti_phishing_changed'
  | 'account_closed'
  | 'withdraw_destination_added'
  | 'sign_in_new_device'
  | 'deposit_credited'
  | 'withdrawal_requested'
  | 'withdrawal_sent'
  | 'withdrawal_failed'
  | 'transfer_received'
  | 'card_ordered'
  | 'card_issued';

/**
 * The optional mails and their topic (/settings/mail). Every other kind is a security or
 * account mail: always sent, no unsubscribe link (a withdrawal requested is one: whoever asked
 * for it, the owner must hear of it).
 */
export const OPTIONAL_MAILS: Partial<Record<TMailKind, TMailTopic>> = {
  referral_invite: 'referral',
  referral_paid: 'referral',
  deposit_credited: 'deposits',
  withdrawal_sent: 'withdrawals',
  withdrawal_failed: 'withdrawals',
  transfer_received: 'transfers',
  card_ordered: 'cards',
  card_issued: 'cards',
};

export type TMail = {
  kind: TMailKind;
  to: string;
  locale: TLocale;
  vars: Record<string, string | number>;
  /** The site's address (PUBLIC_URL): optional mails need it for their unsubscribe link. */
  publicUrl?: string;
};
export type TRenderedMail = { subject: string; text: string; html: string };

const URL_PATTERN = /https?:\/\/[^\s<>"']+/g;

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);
}

/**
 * Plain text from the dictionary; HTML is the same text escaped, with its links made clickable.
 * The recipient's anti-phishing code, when they chose one, is the first line of both.
 */
export function renderMail(mail: Pick<TMail, 'kind' | 'locale' | 'vars'> & { unsubscribeLink?: string; antiPhishingCode?: string | null }): TRenderedMail {
  const subject = translate(mail.locale, `mail.${mail.kind}.subject`, mail.vars);
  const footer = mail.unsubscribeLink ? `\n\n${translate(mail.locale, 'mail.unsubscribe', { link: mail.unsubscribeLink })}` : '';
  const code = mail.antiPhishingCode ? `${translate(mail.locale, 'mail.anti_phishing', { code: mail.antiPhishingCode })}\n\n` : '';
  const text = `${code}${translate(mail.locale, `mail.${mail.kind}.text`, mail.vars)}\n\n${translate(mail.locale, 'mail.signature')}${footer}\n`;
  const paragraphs = text
    .trim()
    .split(/\n{2,}/)
    .map((paragraph) => {
      const parts = paragraph.split(URL_PATTERN);
      const links = paragraph.match(URL_PATTERN) ?? [];
      const html = parts
        .map((part, i) => {
          const link = links[i];
          const anchor = link ? `<a href="${escapeHtml(link)}">${escapeHtml(link)}</a>` : '';
          return escapeHtml(part).replace(/\n/g, '<br>') + anchor;
        })
        .join('');
      return `<p>${html}</p>`;
    })
    .join('\n');
  const html =
    `<!doctype html><html lang="${mail.locale}"><head><meta charset="utf-8"><title>${escapeHtml(subject)}</title></head>` +
    `<body style="font-family:Arial,sans-serif;color:#2e3440;line-height:1.5">${paragraphs}</body></html>`;
  return { subject, text, html };
}

export function extractLinks(text: string): string[] {
  return text.match(URL_PATTERN) ?? [];
}

/**
 * Writes the mail to the outbox, in the caller's transaction: a mail exists exactly when the
 * change that caused it was committed. Delivery (SMTP) happens after, see sender.ts.
 *
 * The one place mails are queued, so the one place preferences are respected and the
 * recipient's anti-phishing code is added (to an address with an account that chose one): an optional
 * mail (OPTIONAL_MAILS) to an address that switched its topic off, or unsubscribed, is not
 * written (false); one that goes carries the signed unsubscribe link in its text and the
 * List-Unsubscribe / List-Unsubscribe-Post (RFC 8058 one-click) headers.
 */
export async function queueMail(db: Queryable, mail: TMail): Promise<boolean> {
  return (await queueMails(db, [mail])) === 1;
}

/**
 * Many mails at once, as queueMail writes one: the recipients' switches and codes in one query,
 * the link key once, the mails in one insert. Answers how many were written.
 */
export async function queueMails(db: Queryable, mails: TMail[]): Promise<number> {
  if (!mails.length) return 0;
  for (const mail of mails)
    if (OPTIONAL_MAILS[mail.kind] && !mail.publicUrl) throw new Error(`queueMail: the optional mail ${mail.kind} needs publicUrl for its unsubscribe link`);
  const addresses = [...new Set(mails.map((mail) => mail.to.trim().toLowerCase()))];
  const recipients = await db.query<{
    address: string;
    code: string | null;
    account: boolean;
    switches: Record<string, boolean> | null;
    unsubscribed: string[] | null;
  }>(
    `SELECT a.address, u.anti_phishing_code AS code, u.id IS NOT NULL AS account, to_jsonb(p) AS switches,
            (SELECT array_agg(m.topic) FROM mail_unsubscribed m WHERE m.address = a.address) AS unsubscribed
       FROM unnest($1::text[]) AS a(address) LEFT JOIN users u ON lower(u.email) = a.address LEFT JOIN mail_preferences p ON p.user_id = u.id`,
    [addresses],
  );
  const byAddress = new Map(recipients.map((row) => [row.address, row]));
  // The account's switch when the address has an account, else the unsubscribed-address list (as mayMail).
  const allowed = (address: string, topic: TMailTopic) => {
    const row = byAddress.get(address);
    return row?.account ? row.switches?.[topic] !== false : !row?.unsubscribed?.includes(topic);
  };
  const key = mails.some((mail) => OPTIONAL_MAILS[mail.kind]) ? await linkKey(db) : null;
  const rows = mails.flatMap((mail) => {
    const address = mail.to.trim().toLowerCase();
    const topic = OPTIONAL_MAILS[mail.kind];
    if (topic && !allowed(address, topic)) return [];
    const token = topic ? unsubscribeTokenWith(key!, mail.to, topic) : null;
    const rendered = renderMail({
      ...mail,
      ...(token ? { unsubscribeLink: `${mail.publicUrl}${UNSUBSCRIBE_PATH}${token}` } : {}),
      antiPhishingCode: byAddress.get(address)?.code ?? null,
    });
    const headers = token
      ? { 'List-Unsubscribe': `<${mail.publicUrl}${ONE_CLICK_PATH}${token}>`, 'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click' }
      : null;
    return [{ mail, rendered, headers }];
  });
  if (!rows.length) return 0;
  await db.query(
    `INSERT INTO mail_outbox (kind, to_address, subject, text_body, html_body, locale, headers)
     SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::jsonb[])`,
    [
      rows.map((row) => row.mail.kind),
      rows.map((row) => row.mail.to),
      rows.map((row) => row.rendered.subject),
      rows.map((row) => row.rendered.text),
      rows.map((row) => row.rendered.html),
      rows.map((row) => row.mail.locale),
      rows.map((row) => (row.headers === null ? null : JSON.stringify(row.headers))),
    ],
  );
  return rows.length;
}

export type TOutboxMail = {
  id: number;
  kind: string;
  to: string;
  subject: string;
  text: string;
  html: string;
  locale: TLocale;
  created_at: string;
  sent_at: string | null;
  links: string[];
  headers: Record<string, string>;
};

/** The newest mails first, optionally to one address: the dev mailbox. */
export async function listOutbox(db: Queryable, options: { to?: string; limit?: number } = {}): Promise<TOutboxMail[]> {
  const rows = await db.query<{
    id: string;
    kind: string;
    to_address: string;
    subject: string;
    text_body: string;
    html_body: string;
    locale: TLocale;
    created_at: string;
    sent_at: string | null;
    headers: Record<string, string> | null;
  }>(
    `SELECT id::text, kind, to_address, subject, text_body, html_body, locale, headers,
            to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS created_at,
            to_char(sent_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS sent_at
     FROM mail_outbox WHERE ($1::text IS NULL OR lower(to_address) = lower($1)) ORDER BY id DESC LIMIT $2`,
    [options.to ?? null, options.limit ?? 50],
  );
  return rows.map((row) => ({
    id: Number(row.id),
    kind: row.kind,
    to: row.to_address,
    subject: row.subject,
    text: row.text_body,
    html: row.html_body,
    locale: row.locale,
    created_at: row.created_at,
    sent_at: row.sent_at,
    links: extractLinks(row.text_body),
    headers: row.headers ?? {},
  }));
}
