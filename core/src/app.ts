import type { FastifyPluginAsync } from 'fastify';
import formbody from '@fastify/formbody';
import fp from 'fastify-plugin';
import { sandboxesAllowed, type TConfig } from './config.ts';
import { setRateLimitFactor } from './rate-limit.ts';
import type { Db } from './db/index.ts';
import dbPlugin from './plugins/db.ts';
import localePlugin from './plugins/locale.ts';
import errorsPlugin from './plugins/errors.ts';
import schemasPlugin from './plugins/schemas.ts';
import siteRoutes from './domains/site/routes.ts';
import contentRoutes from './domains/content/routes.ts';
import notificationRoutes from './domains/notifications/routes.ts';
import authRoutes from './domains/auth/routes.ts';
import userRoutes from './domains/user/routes.ts';
import ratesPlugin from './domains/rates/plugin.ts';
import walletRoutes from './domains/wallets/routes.ts';
import exchangeRoutes from './domains/exchange/routes.ts';
import transferRoutes from './domains/transfer/routes.ts';
import historyRoutes from './domains/history/routes.ts';
import devRoutes from './domains/dev/routes.ts';
import verificationRoutes from './domains/verification/routes.ts';
import paymentRoutes from './domains/payments/routes.ts';
import withdrawRoutes from './domains/payments/withdraw-routes.ts';
import cardRoutes from './domains/cards/routes.ts';
import securityRoutes from './domains/security/routes.ts';
import chatRoutes from './domains/chat/routes.ts';
import opsGuard from './domains/ops/guard.ts';
import opsRoutes from './domains/ops/routes.ts';
import opsKycRoutes from './domains/ops/kyc-routes.ts';
import opsSupportRoutes from './domains/ops/support-routes.ts';
import { deskSource } from './domains/ops/support.ts';
import opsCustomerRoutes from './domains/ops/customers-routes.ts';
import opsRequestRoutes from './domains/ops/requests-routes.ts';
import opsWithdrawalRoutes from './domains/ops/withdrawals-routes.ts';
import opsPaymentRoutes from './domains/ops/payments-routes.ts';
import opsConfigRoutes from './domains/ops/config-routes.ts';
import opsReconciliationRoutes from './domains/ops/reconciliation-routes.ts';
import { queueTargetsOf } from './domains/ops/queues.ts';
import mailingRoutes from './domains/mailing/routes.ts';
import privacyRoutes from './domains/privacy/routes.ts';
import referralRoutes from './domains/referral/routes.ts';
import { registerPaymentProviders } from './domains/payments/providers.ts';
import { loadCardIssuers, loadPaymentProviders, providerDevCommands, providerRoutes } from './providers/index.ts';
import { sealPayoutCardNumbers } from './domains/payments/withdrawals.ts';
import { openDocumentCipher } from './domains/verification/cipher.ts';
import storagePlugin from './plugins/storage.ts';
import type { TFileStorage } from './storage/index.ts';
import sessionPlugin from './plugins/session.ts';
import apiKeyGuard from './domains/apikeys/guard.ts';
import apiKeyRoutes from './domains/apikeys/routes.ts';
import mailPlugin from './plugins/mail.ts';
import jobsPlugin from './jobs/plugin.ts';
import eventsPlugin from './domains/realtime/routes.ts';
import { prepareDummyHash, setPasswordHashCost } from './domains/auth/passwords.ts';

export type TAppOptions = {
  config: TConfig;
  db?: Db;
  /** Tests hand in their own storage and clock. */
  storage?: TFileStorage;
  now?: () => Date;
};

/** The core as a plugin: server.ts listens, tests inject (and reach its decorations: app.db, app.jobs). */
const app: FastifyPluginAsync<TAppOptions> = async (fastify, { config, db, storage, now }) => {
  const clock = now ?? (() => new Date());
  setRateLimitFactor(config.RATE_LIMIT_FACTOR);
  setPasswordHashCost(config.PASSWORD_SCRYPT_LN);
  await fastify.register(localePlugin);
  await fastify.register(errorsPlugin);
  // Before any route: validation, serialisation and the OpenAPI document come from route schemas.
  await fastify.register(schemasPlugin, { strict: config.NODE_ENV !== 'production' });
  await fastify.register(dbPlugin, { config, db });
  await fastify.register(formbody);
  const sandboxes = sandboxesAllowed(config);
  if (config.NODE_ENV === 'production' && sandboxes) {
    fastify.log.error(
      'SANDBOX_PROVIDERS_IN_PRODUCTION=true: sandbox providers are enabled, their test payments credit balances with money nobody paid (staging only)',
    );
  }
  // Document numbers, issued cards' and payout cards' numbers are sealed with this key.
  const documents = openDocumentCipher(config, (msg) => fastify.log.warn(msg));
  const sealed = await sealPayoutCardNumbers(fastify.db, documents);
  if (sealed) fastify.log.info({ sealed }, 'payout card numbers sealed');
  await fastify.register(sessionPlugin);
  // Bots' signed requests, checked before any route's own hooks and before any body is parsed.
  await fastify.register(apiKeyGuard, { cipher: documents, now: clock });
  // The back office's door, before any route: every /api/ops route must say what it needs.
  await fastify.register(opsGuard, { now: clock, ...(config.OPS_ALLOWED_IPS ? { allowedIps: config.OPS_ALLOWED_IPS } : {}) });
  await fastify.register(mailPlugin, { config });
  // The realtime bus and the BFFs' event stream (before any route that records events).
  await fastify.register(eventsPlugin, { config, desk: deskSource(fastify.db, clock) });
  await fastify.register(storagePlugin, { config, ...(storage ? { storage } : {}) });
  void prepareDummyHash();
  await fastify.register(siteRoutes);
  await fastify.register(contentRoutes, { now: clock });
  await fastify.register(notificationRoutes);
  await fastify.register(authRoutes, { config, now: clock });
  await fastify.register(userRoutes);
  await fastify.register(mailingRoutes, { now: clock });
  await fastify.register(privacyRoutes, { now: clock, storage: fastify.storage });
  await fastify.register(ratesPlugin, { config, now: clock });
  await fastify.register(walletRoutes);
  await fastify.register(exchangeRoutes, { now: clock });
  await fastify.register(transferRoutes, { now: clock });
  await fastify.register(historyRoutes, { now: clock, publicUrl: config.PUBLIC_URL });
  await fastify.register(apiKeyRoutes, { db: fastify.db, cipher: documents, mailer: fastify.mailer, now: clock });
  await fastify.register(securityRoutes, { publicUrl: config.PUBLIC_URL, ...(now ? { now } : {}) });
  await fastify.register(verificationRoutes, { config, ...(now ? { now } : {}) });
  await fastify.register(referralRoutes, { publicUrl: config.PUBLIC_URL, now: clock });
  await fastify.register(chatRoutes);
  await fastify.register(opsRoutes, { now: clock, publicUrl: config.PUBLIC_URL });
  await fastify.register(opsKycRoutes, {
    now: clock,
    targetMs: config.KYC_REVIEW_TARGET_MS,
    verification: { storage: fastify.storage, cipher: documents, publicUrl: config.PUBLIC_URL },
  });
  await fastify.register(opsSupportRoutes, { config, now: clock });
  await fastify.register(opsCustomerRoutes, { now: clock, cipher: documents });
  await fastify.register(opsRequestRoutes, { now: clock });
  await fastify.register(opsWithdrawalRoutes, { now: clock, targetMs: config.WITHDRAWAL_REVIEW_TARGET_MS, payouts: { cipher: documents } });
  await fastify.register(opsConfigRoutes, { now: clock });
  // The providers this configuration runs with: the domains reach them through their adapters.
  const providers = loadPaymentProviders(config);
  registerPaymentProviders(providers);
  const issuers = loadCardIssuers(config, documents);
  await fastify.register(opsPaymentRoutes, { now: clock, providers, issuers });
  await fastify.register(providerRoutes, { providers, now: clock });
  await fastify.register(paymentRoutes, { providers, now: clock });
  await fastify.register(withdrawRoutes, { now: clock, cipher: documents, publicUrl: config.PUBLIC_URL });
  await fastify.register(cardRoutes, { issuers, ...(now ? { now } : {}) });
  // Every timed job (purges, retries, payouts, fees, settlement, the sandboxes, realtime checks), as JOBS says.
  await fastify.register(jobsPlugin, {
    enabled: config.JOBS,
    now: clock,
    config,
    providers,
    issuers,
    cipher: documents,
    storage: fastify.storage,
    mailer: fastify.mailer,
    hub: fastify.events.hub,
  });
  // After the jobs: the home reads their last runs.
  await fastify.register(opsReconciliationRoutes, { now: clock, dashboard: { targets: queueTargetsOf(config), jobs: () => fastify.jobs.status() } });
  // The outbox viewer and the auth-type switch exist outside production only.
  if (config.NODE_ENV !== 'production') {
    await fastify.register(devRoutes, { publicUrl: config.PUBLIC_URL, cipher: documents, providerCommands: providerDevCommands(providers) });
  }
};

export default fp(app, { name: 'core' });
