import fp from 'fastify-plugin';
import { purgeRateLimits } from '../rate-limit.ts';
import { purgeSessions } from '../domains/auth/sessions.ts';
import { purgeTokens } from '../domains/auth/service.ts';
import { purgePasswordFailures } from '../domains/auth/password-failures.ts';
import { purgeIdempotencyKeys } from '../domains/idempotency/service.ts';
import { purgeQuotes } from '../domains/exchange/service.ts';
import { expireDeposits } from '../domains/payments/deposits.ts';
import { chargeMonthlyFees } from '../domains/cards/fees.ts';
import { purgeSignIns } from '../domains/security/service.ts';
import { purgeEmailChanges } from '../domains/security/email.ts';
import { purgeEvents } from '../domains/events/service.ts';
import { settleReferralBonuses } from '../domains/referral/service.ts';
import { purgeInboxes } from '../inbox/refusals.ts';
import { isDatabaseUnavailable } from '../db/outage.ts';

const EVERY_MS = 10 * 60 * 1000;

/**
 * All periodic purging: ended rate-limit windows, forgotten wrong-password counts, long-dead sessions and links, old idempotency
 * keys and exchange quotes, realtime events past their replay window, sign-ins older than 90 days and ended
 * sign-in challenges; deposits left unpaid past their time; the cards' monthly fees (once per card
 * and month, whichever instances run it); referral bonuses past their hold paid out (settlement,
 * safe with several instances at once); and the webhook and issuer-callback deliveries processed
 * more than WEBHOOK_RETENTION_DAYS ago.
 */
export default fp<{ publicUrl: string; now: () => Date; webhookRetentionDays: number }>(
  async (app, { publicUrl, now, webhookRetentionDays }) => {
    const timer = setInterval(() => {
      Promise.all([
        purgeRateLimits(app.db),
        purgeSessions(app.db),
        purgeTokens(app.db),
        purgePasswordFailures(app.db),
        purgeIdempotencyKeys(app.db),
        purgeQuotes(app.db),
        purgeSignIns(app.db),
        purgeEmailChanges(app.db),
        expireDeposits(app.db, new Date()),
        chargeMonthlyFees(app.db, new Date()),
        purgeEvents(app.db),
        settleReferralBonuses({ db: app.db, publicUrl, mailer: app.mailer }, new Date()),
        purgeInboxes(app.db, now(), webhookRetentionDays),
      ]).catch((err: unknown) => {
        if (!isDatabaseUnavailable(err)) app.log.warn({ err }, 'housekeeping failed');
      });
    }, EVERY_MS);
    timer.unref();
    app.addHook('onClose', async () => clearInterval(timer));
  },
  { name: 'housekeeping', dependencies: ['db', 'mail'] },
);
