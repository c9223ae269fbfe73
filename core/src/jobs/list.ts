import type { TConfig } from '../config.ts';
import { purgeRateLimits } from '../rate-limit.ts';
import { purgeSessions } from '../domains/auth/sessions.ts';
import { purgeTokens } from '../domains/auth/service.ts';
import { purgePasswordFailures } from '../domains/auth/password-failures.ts';
import { purgeIdempotencyKeys } from '../domains/idempotency/service.ts';
import { purgeQuotes } from '../domains/exchange/service.ts';
import { purgeSignIns } from '../domains/security/service.ts';
import { purgePasskeyChallenges } from '../domains/security/passkeys.ts';
import { purgeEmailChanges } from '../domains/security/email.ts';
import { purgeEvents } from '../domains/events/service.ts';
import { purgeRateCandles } from '../domains/rates/history.ts';
import { purgeApiKeyNonces } from '../domains/apikeys/service.ts';
import { lapseOpsRequests } from '../domains/ops/requests.ts';
import { publishDueNotifications } from '../domains/ops/config-notifications.ts';
import { purgeInboxes } from '../inbox/refusals.ts';
import { expireDeposits } from '../domains/payments/deposits.ts';
import { chargeMonthlyFees } from '../domains/cards/fees.ts';
import { settleReferralBonuses } from '../domains/referral/service.ts';
import { processDueWebhooks } from '../domains/payments/webhooks.ts';
import { dispatchApproved } from '../domains/payments/withdrawal-states.ts';
import { runSandboxPayouts } from '../providers/sandbox/payouts.ts';
import { chainTick, SANDBOX_BLOCK_MS } from '../providers/sandbox/payments.ts';
import type { TEvmAdapter } from '../providers/evm/index.ts';
import { watchEvmChain } from '../providers/evm/watcher.ts';
import type { TProviders } from '../domains/payments/providers.ts';
import { advanceSandboxIssuer, type sandboxIssuer } from '../providers/sandbox/issuer.ts';
import { processDueCallbacks, receiveIssuerCallback } from '../domains/cards/callbacks.ts';
import type { TIssuers } from '../domains/cards/issuer.ts';
import type { THub } from '../domains/realtime/hub.ts';
import type { TDocumentCipher } from '../domains/verification/cipher.ts';
import { writeMoneyMails } from '../mail/money.ts';
import { runPrivacyJobs } from '../domains/privacy/service.ts';
import type { TFileStorage } from '../storage/index.ts';
import type { TJob } from './scheduler.ts';

/** What the jobs work with besides the database and the clock (app.ts hands them in). */
export type TJobDeps = {
  config: Pick<TConfig, 'PUBLIC_URL' | 'WEBHOOK_RETENTION_DAYS' | 'EVENTS_CHECK_MS' | 'EVM_POLL_MS'>;
  providers: TProviders;
  issuers: TIssuers;
  cipher: TDocumentCipher;
  storage: TFileStorage;
  mailer: { kick: () => void; flush: () => Promise<number> };
  hub: THub;
};

const TEN_MINUTES = 10 * 60 * 1000;

/**
 * Every timed job of the core. To add one: its name in names.ts, an entry here calling a plain
 * function of its domain with `now` (never `new Date()`), a line in docs/ops.md's JOBS row.
 */
export function listJobs({ config, providers, issuers, cipher, storage, mailer, hub }: TJobDeps): TJob[] {
  const sandbox = issuers.get('sandbox') as ReturnType<typeof sandboxIssuer> | undefined;
  return [
    {
      // Ended rate-limit windows, forgotten wrong-password counts, long-dead sessions and links,
      // old idempotency keys and quotes, realtime events past their replay window, rate candles
      // past their keeping (rates/history.ts), old sign-ins
      // and ended sign-in challenges, and inbox deliveries processed WEBHOOK_RETENTION_DAYS ago.
      name: 'purge',
      everyMs: TEN_MINUTES,
      run: async ({ db, now }) => {
        const purged = await Promise.all([
          purgeRateLimits(db),
          purgeSessions(db),
          purgeTokens(db),
          purgePasswordFailures(db),
          purgeIdempotencyKeys(db),
          purgeQuotes(db),
          purgeSignIns(db),
          purgePasskeyChallenges(db, now),
          purgeEmailChanges(db),
          purgeEvents(db),
          purgeInboxes(db, now, config.WEBHOOK_RETENTION_DAYS),
          purgeRateCandles(db, now),
          purgeApiKeyNonces(db, now),
        ]);
        return { tasks: purged.length };
      },
    },
    // Data exports asked for, made and (after 24 hours) removed; closed accounts erased after the legal period.
    { name: 'data-exports', everyMs: 10_000, run: ({ db, now }) => runPrivacyJobs({ db, storage, cipher }, now) },
    { name: 'deposit-expiry', everyMs: TEN_MINUTES, run: async ({ db, now }) => ({ expired: await expireDeposits(db, now) }) },
    // Four-eyes requests nobody decided within 24 hours (reads lapse them too; this keeps the queue's figures true).
    { name: 'ops-request-lapse', everyMs: TEN_MINUTES, run: async ({ db, now }) => ({ lapsed: await lapseOpsRequests(db, now) }) },
    // Notifications operators scheduled, each published once when due (the row's claim, not only the job's, keeps it once).
    { name: 'notifications-scheduled', everyMs: 60_000, run: ({ db, now }) => publishDueNotifications(db, now) },
    // Once per card and month whichever core runs it (the charge is keyed by card and month).
    { name: 'card-fees', everyMs: TEN_MINUTES, run: ({ db, now }) => chargeMonthlyFees(db, now) },
    {
      name: 'referral-settlement',
      everyMs: TEN_MINUTES,
      run: async ({ db, now }) => ({ settled: (await settleReferralBonuses({ db, publicUrl: config.PUBLIC_URL, mailer }, now)).length }),
    },
    {
      // Failed or interrupted webhook deliveries, each at its own next attempt; at a core's start
      // also those a previous process stored and never processed (it died before its commit).
      name: 'webhook-retry',
      everyMs: 15_000,
      atStart: true,
      run: ({ db, now, first }) => processDueWebhooks(db, providers, now, first ? { receivedBefore: now } : {}),
    },
    {
      // The card issuers' callbacks the same way: failed ones at their next attempt, a dead core's at start.
      name: 'callback-retry',
      everyMs: 15_000,
      atStart: true,
      run: ({ db, now, first }) => processDueCallbacks(db, issuers, now, first ? { receivedBefore: now } : {}),
    },
    {
      // Approved withdrawals a crash left undispatched, then the sandbox providers' settlements.
      name: 'payouts',
      everyMs: 5_000,
      run: async ({ db, now }) => ({ dispatched: await dispatchApproved({ db, cipher }, now), ...(await runSandboxPayouts(db, providers, now)) }),
    },
    { name: 'sandbox-chain', everyMs: SANDBOX_BLOCK_MS, run: async ({ db, now }) => ({ reported: await chainTick(db, providers, now) }) },
    {
      // The EVM chain's new blocks: transfers to our addresses reported to our webhook with their confirmations (nothing without EVM_RPC_URL).
      name: 'evm-watcher',
      everyMs: config.EVM_POLL_MS,
      run: async ({ db, now }) => {
        const evm = providers.get('evm') as TEvmAdapter | undefined;
        return evm ? watchEvmChain(db, evm, now) : { configured: false };
      },
    },
    {
      // The built-in issuer works on its own, as a remote issuer would, and calls our callback.
      name: 'sandbox-card-issuer',
      everyMs: 2_000,
      run: async ({ db, now }) => ({
        delivered: sandbox
          ? await advanceSandboxIssuer(db, sandbox, (rawBody, signature) => receiveIssuerCallback(db, sandbox, { rawBody, signature, now }), now)
          : 0,
      }),
    },
    {
      // This core's sockets: sessions ended elsewhere (logout closes them within this), notices missed.
      name: 'realtime-check',
      everyMs: config.EVENTS_CHECK_MS,
      scope: 'core',
      run: async () => {
        await Promise.all([hub.checkSessions(), hub.catchUp(), hub.checkBroadcast()]);
      },
    },
    {
      // Mails a kick missed or whose delivery failed (back-off per mail); rows are claimed with
      // SKIP LOCKED, so every core's sender takes its share.
      name: 'mail-outbox',
      everyMs: 15_000,
      scope: 'core',
      run: async () => ({ sent: await mailer.flush() }),
    },
    {
      // The money mails owed by deposits, withdrawals, transfers and cards, written in each
      // user's language (batches of 200 until the queue is empty or 2,000 are written), then sent.
      name: 'money-mails',
      everyMs: 5_000,
      run: async ({ db }) => {
        let written = 0;
        for (;;) {
          const batch = await writeMoneyMails(db, config.PUBLIC_URL, 200);
          written += batch;
          if (batch < 200 || written >= 2_000) break;
        }
        if (written) mailer.kick();
        return { written };
      },
    },
  ] satisfies TJob[];
}
