import { translate, type TLocale } from '@obmen/shared';
import type { Queryable } from '../db/index.ts';

/** Every mail core sends; the texts are the i18n keys `mail.<kind>.subject` and `mail.<kind>.text`. */
export type TMailKind =
  | 'sign_in'
  | 'signup_confirm'
  | 'signup_existing'
  | 'reset'
  | 'reset_unknown'
  | 'confirm_email'
  | 'password_changed'
  | 'verification_approved'
  | 'verification_rejected_retry'
  | 'verification_rejected_final'
  | 'second_factor_enabled'
  | 'second_factor_disabled'
  | 'email_change_confirm'
  | 'email_change_notice'
  | 'email_change_taken'
  | 'email_change_reported';

export type TMail = { kind: TMailKind; to: string; locale: TLocale; vars: Record<string, string | number> };
export type TRenderedMail = { subject: string; text: string; html: string };

const URL_PATTERN = /https?:\/\/[^\s<>"']+/g;

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);
}

/** Plain text from the dictionary; HTML is the same text escaped, with its links made clickable. */
export function renderMail(mail: Pick<TMail, 'kind' | 'locale' | 'vars'>): TRenderedMail {
  const subject = translate(mail.locale, `mail.${mail.kind}.subject`, mail.vars);
  const text = `${translate(mail.locale, `mail.${mail.kind}.text`, mail.vars)}\n\n${translate(mail.locale, 'mail.signature')}\n`;
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
 */
export async function queueMail(db: Queryable, mail: TMail): Promise<void> {
  const rendered = renderMail(mail);
  await db.query(`INSERT INTO mail_outbox (kind, to_address, subject, text_body, html_body, locale) VALUES ($1, $2, $3, $4, $5, $6)`, [
    mail.kind,
    mail.to,
    rendered.subject,
    rendered.text,
    rendered.html,
    mail.locale,
  ]);
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
  }>(
    `SELECT id::text, kind, to_address, subject, text_body, html_body, locale,
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
  }));
}
