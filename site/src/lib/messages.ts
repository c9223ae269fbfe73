import { DICTIONARIES, type TLocale } from '@obmen/shared';

/**
 * The slice of a dictionary an island needs, by key prefix: islands get their strings as
 * props instead of downloading whole dictionaries.
 */
export function pickMessages(locale: TLocale, prefixes: readonly string[]): Record<string, string> {
  const dictionary = DICTIONARIES[locale];
  return Object.fromEntries(Object.entries(dictionary).filter(([key]) => prefixes.some((prefix) => key === prefix || key.startsWith(`${prefix}.`))));
}

/** What the account forms show: their own texts, validation and server messages. */
export const AUTH_MESSAGE_PREFIXES = ['authpage', 'secondfactor', 'passkey', 'validation', 'auth', 'user', 'error'] as const;

/** The back office's door (islands/OpsDoor.tsx): its own texts and the shared form and QR wording. */
export const OPS_MESSAGE_PREFIXES = [
  'ops',
  'authpage',
  'secondfactor',
  'securitypage.qr_label',
  'securitypage.scan_lead',
  'securitypage.secret_label',
  'passkey',
  'validation',
  'auth',
  'error',
] as const;

/** Identity review (islands/OpsKyc.tsx): the back office's texts and the verification wording it shows. */
export const KYC_MESSAGE_PREFIXES = [
  ...OPS_MESSAGE_PREFIXES,
  'verification.side',
  'verification.reason',
  'verification.redo',
  'kycpage.type',
  'kycpage.status',
  'kycpage.number',
  'kycpage.issuing_country',
  'kycpage.issue_date',
  'kycpage.expiry_date',
  'kycpage.redo',
  'settingspage.last_name',
  'settingspage.first_name',
  'settingspage.middle_name',
  'settingspage.birth_date',
] as const;
