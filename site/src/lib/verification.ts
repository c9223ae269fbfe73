import { VERIFICATION_PAGES, type TVerificationState, type TVerificationSubmission, type TVerificationType } from '@obmen/shared/verification';
import type { TLocale, TUser } from '@obmen/shared';
import type { TTranslate } from './i18n.ts';
import { callCore, type TCoreLocals } from './core.ts';
import { CALLS } from '@obmen/shared/calls';
import { loginPath } from './money-pages.ts';

/** What the user should do next, as a status key of kycpage.status.* (retry apart from final rejection). */
/** How a submission reads to its owner: a rejection that may be retried is `retry`. */
export function submissionStatus(submission: Pick<TVerificationSubmission, 'status' | 'retry_allowed'>): TVerificationSubmission['status'] | 'retry' {
  return submission.status === 'rejected' && submission.retry_allowed ? 'retry' : submission.status;
}

/** What the owner of an open submission (see openSubmission) does next: finish the draft, wait, or send new photos. */
export function nextStep(open: TVerificationSubmission): 'draft' | 'submitted' | 'retry' {
  const status = submissionStatus(open);
  return status === 'draft' || status === 'submitted' ? status : 'retry';
}

/** An open submission (draft, waiting, rejected with a retry), if any. */
export function openSubmission(state: TVerificationState): TVerificationSubmission | null {
  const current = state.current;
  if (!current) return null;
  return current.status === 'draft' || current.status === 'submitted' || (current.status === 'rejected' && current.retry_allowed) ? current : null;
}

export function pageOf(submission: TVerificationSubmission): string {
  return VERIFICATION_PAGES[submission.type];
}

/** "1 000 USD", or "not available" for a zero limit. */
export function formatLimit(amount: string, currency: string, locale: TLocale, t: TTranslate): string {
  if (/^0(\.0+)?$/.test(amount)) return t('kycpage.limits_none');
  const [whole = '0', fraction] = amount.split('.');
  const grouped = Number(whole).toLocaleString(locale === 'ru' ? 'ru-RU' : 'en-US');
  return `${grouped}${fraction ? (locale === 'ru' ? ',' : '.') + fraction : ''} ${currency}`;
}

export type TDocumentPage = {
  open: TVerificationSubmission | null;
  waiting: TVerificationSubmission | null;
  /** What the form starts with: the sent document on a retry (its number typed again), else the personal data. */
  prefill: Record<'issuing_country' | 'issue_date' | 'expiry_date' | 'first_name' | 'last_name' | 'middle_name' | 'birth_date', string>;
};

/**
 * What a document page shows, or where it sends the visitor instead (pages redirect in their
 * own frontmatter: a component cannot once the response streams): signed out → login; verified
 * → verification_success; an open submission of another type → its page; a final rejection →
 * the overview.
 */
export async function loadDocumentPage(
  type: TVerificationType,
  url: URL,
  locals: TCoreLocals & { user: TUser; locale: TLocale; sessionToken?: string | undefined },
): Promise<{ redirect: string } | { page: TDocumentPage }> {
  if (!locals.user.is_authenticated) return { redirect: loginPath(url) };
  const call = { token: locals.sessionToken };
  const [{ verification }, { info }] = await Promise.all([
    callCore(locals, CALLS['GET /api/verification'], call),
    callCore(locals, CALLS['GET /api/user/info'], call),
  ]);
  if (verification.level >= 1) return { redirect: '/settings/verification_success' };
  const open = openSubmission(verification);
  if (open && open.type !== type) return { redirect: VERIFICATION_PAGES[open.type] };
  if (!open && verification.current?.status === 'rejected') return { redirect: '/settings/verification' };
  const sent = open?.document;
  return {
    page: {
      open,
      waiting: open?.status === 'submitted' ? open : null,
      prefill: {
        issuing_country: sent?.issuing_country ?? info.country ?? '',
        issue_date: sent?.issue_date ?? '',
        expiry_date: sent?.expiry_date ?? '',
        first_name: sent?.first_name ?? info.first_name ?? '',
        last_name: sent?.last_name ?? info.last_name ?? '',
        middle_name: sent?.middle_name ?? info.middle_name ?? '',
        birth_date: sent?.birth_date ?? info.birth_date ?? '',
      },
    },
  };
}
