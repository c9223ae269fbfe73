/**
 * Every timed job of the core by name (core/src/jobs/list.ts defines them). Here, with nothing
 * imported, so that config.ts can check JOBS against it without loading the domains.
 */
export const JOB_NAMES = [
  'purge',
  'data-exports',
  'deposit-expiry',
  'ops-request-lapse',
  'notifications-scheduled',
  'card-fees',
  'referral-settlement',
  'webhook-retry',
  'callback-retry',
  'payouts',
  'sandbox-chain',
  'evm-watcher',
  'sandbox-card-issuer',
  'realtime-check',
  'mail-outbox',
  'money-mails',
] as const;

export type TJobName = (typeof JOB_NAMES)[number];
