import { VERIFICATION_PAGES, type TVerificationState, type TVerificationSubmission } from '@obmen/shared/verification';
import type { TLocale } from '@obmen/shared';
import type { TTranslate } from './i18n.ts';

/** What the user should do next, as a status key of kycpage.status.* (retry apart from final rejection). */
export function submissionStatus(submission: Pick<TVerificationSubmission, 'status' | 'retry_allowed'>): string {
  return submission.status === 'rejected' && submission.retry_allowed ? 'retry' : submission.status;
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
