import type { FastifyPluginAsync } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { LOCALES, NOTIFICATION_DISPLAYS, isLoopbackAddress, NOTIFICATION_TYPES, ZAuthType, ZLocale, ZNotificationButtonInput } from '@obmen/shared';
import { listOutbox } from '../../mail/outbox.ts';
import { setSiteSetting } from '../site/service.ts';
import { sendNotification, userIdOfAccount } from '../notifications/service.ts';
import { notFoundOf, routeNotFound } from '../../errors.ts';
import { approveSubmission, rejectSubmission, ZRejection } from '../verification/operator.ts';
import { setReferralTerms, settleReferralBonuses } from '../referral/service.ts';
import { adjustBalance } from '../ledger/service.ts';
import { replySupport, setSupportStatus } from '../chat/operator.ts';
import { approveWithdrawal } from '../payments/withdrawal-states.ts';
import { createOperator } from '../ops/service.ts';
import { recordRates } from '../rates/history.ts';
import { noticeRates } from '../events/service.ts';
import type { TDocumentCipher } from '../verification/cipher.ts';
import { CALLS } from '@obmen/shared/calls';
import { schemaOf } from '../../lib/call-schema.ts';

/** The operator's withdraw:approve, for e2e runs beside a live PGlite (the CLI cannot open it then). */
const ZDevWithdrawBody = z.object({ action: z.literal('approve'), id: z.uuid() });

/** The operator's support:reply / support:close (text only), for e2e runs beside a live PGlite. */
const ZDevSupportBody = z.discriminatedUnion('action', [
  z.object({ action: z.literal('reply'), account_id: z.number().int(), text: z.string().min(1) }),
  z.object({ action: z.literal('close'), account_id: z.number().int() }),
]);

/** The options of the operator's `notify:send`, for tests that cannot run the CLI beside a live PGlite. */
const ZDevNotifyBody = z.object({
  account_id: z.number().int().optional(),
  all: z.literal(true).optional(),
  display: z.enum(NOTIFICATION_DISPLAYS),
  type: z.enum(NOTIFICATION_TYPES),
  title: z.string().min(1),
  text: z.string().default(''),
  buttons: z.array(ZNotificationButtonInput).default([]),
  closable: z.boolean().default(true),
  /** One locale, or the same text for every locale when absent. */
  locale: ZLocale.optional(),
});

/** The operator's kyc:approve / kyc:reject, for e2e runs beside a live PGlite. */
const ZDevKycBody = z.discriminatedUnion('action', [
  z.object({ action: z.literal('approve'), id: z.uuid() }),
  ZRejection.extend({ action: z.literal('reject'), id: z.uuid() }),
]);

/** The operator's referral:terms / referral:settle, for e2e runs beside a live PGlite. */
const ZDevReferralBody = z.discriminatedUnion('action', [
  z.object({
    action: z.literal('terms'),
    share: z.string().optional(),
    currency: z.string().optional(),
    hold: z.string().optional(),
    min: z.string().optional(),
    enabled: z.enum(['true', 'false']).optional(),
    same_ip_days: z.string().optional(),
  }),
  /** `now`: settle as if it were that time (the hold passes without waiting). */
  z.object({ action: z.literal('settle'), now: z.iso.datetime().optional() }),
]);

/** The operator's balance:credit, for e2e runs beside a live PGlite. */
const ZDevCreditBody = z.object({ account_id: z.number().int(), currency: z.string(), amount: z.string() });

/** A made-up past for a pair's chart (e2e, screenshots): `days` back from now. */
const ZDevRateHistoryBody = z.object({ src: z.string(), dst: z.string(), days: z.number().int().min(1).max(366).default(365) });

/**
 * Ticks of a seeded random walk that ends at `rate` now: one a day beyond the last month, one an
 * hour within it, one every two minutes within the last day (what each chart range reads).
 */
export function madeUpTicks(seedText: string, rate: string, now: number, days: number): Array<{ at: Date; rate: string }> {
  let seed = [...seedText].reduce((hash, char) => (Math.imul(hash, 31) + char.charCodeAt(0)) >>> 0, 2026);
  const random = () => {
    seed = (seed + 0x6d2b79f5) >>> 0;
    let t = Math.imul(seed ^ (seed >>> 15), seed | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const day = 86_400_000;
  const times: number[] = [];
  for (let at = now - days * day; at < now - 30 * day; at += day) times.push(at);
  for (let at = now - 30 * day; at < now - day; at += 3_600_000) times.push(at);
  for (let at = now - day; at < now; at += 120_000) times.push(at);
  // Backwards from today's rate: each step's move scales with the square root of its length.
  const ticks: Array<{ at: Date; rate: string }> = [];
  let level = Number(rate);
  for (let i = times.length - 1; i >= 0; i--) {
    ticks.push({ at: new Date(times[i]!), rate: level.toFixed(18).replace(/\.?0+$/, '') });
    const step = (times[i]! - (times[i - 1] ?? times[i]!)) / day;
    level *= Math.exp((random() - 0.5) * 0.06 * Math.sqrt(step));
  }
  return ticks.reverse();
}

/** The operator's operator:create, for e2e runs beside a live PGlite. */
const ZDevOperatorBody = z.object({ email: z.string().min(3), roles: z.array(z.string()).min(1) });

/**
 * Development and test only (app.ts never registers this when NODE_ENV is production):
 *   GET  /api/dev/mailbox?to=&limit=  → {mails: [{id, kind, to, subject, text, html, locale, created_at, sent_at, links}]}, newest first
 *   POST /api/dev/auth_type {auth_type: 'password'|'email'} → {status:'ok', auth_type}  (switch login modes in e2e)
 *   POST /api/dev/notify {account_id? | all?, display, type, title, text?, buttons?, closable?, locale?} → {status:'ok', id}
 *   POST /api/dev/level {account_id, level} → {status:'ok', level}  (an account at a verification level, for e2e)
 *   POST /api/dev/kyc {action: 'approve', id} | {action: 'reject', id, files: [{side, reason, note?}], retry} → the decision (as kyc:approve / kyc:reject)
 *   POST /api/dev/referral {action: 'terms', share?, currency?, hold?, min?, enabled?} | {action: 'settle', now?} → as referral:terms / referral:settle
 *   POST /api/dev/credit {account_id, currency, amount} → as balance:credit
 *   POST /api/dev/support {action: 'reply', account_id, text} | {action: 'close', account_id} → as support:reply / support:close
 *   POST /api/dev/operator {email, roles} → {email, enrol_link}  (as operator:create)
 *   POST /api/dev/operator/stale-factor {email} → the operator's sessions need a step-up again
 *   POST /api/dev/rates/history {src, dst, days?} → a made-up past of the pair's rate for its chart
 *   and the providers' own commands (`providerCommands`, e.g. POST /api/dev/payments of the sandboxes)
 * They hand out sign-in and reset links, so they answer loopback clients only: the socket's peer
 * (the BFF beside the core) and the client it forwards must both be loopback; anyone else gets
 * the same 404 as a route that does not exist.
 */
const devRoutes: FastifyPluginAsyncZod<{ publicUrl: string; cipher: TDocumentCipher; providerCommands: FastifyPluginAsync }> = async (
  app,
  { publicUrl, cipher, providerCommands },
) => {
  app.addHook('onRequest', async (request) => {
    if (!isLoopbackAddress(request.socket.remoteAddress) || !isLoopbackAddress(request.ip)) throw routeNotFound();
  });
  // Not part of the API: kept out of the document.
  app.addHook('onRoute', (route) => {
    route.schema = { ...route.schema, hide: true };
  });
  await app.register(providerCommands);

  app.get('/api/dev/mailbox', { schema: { ...schemaOf(CALLS['GET /api/dev/mailbox']) } }, async (request, reply) => {
    const query = request.query;
    reply.header('cache-control', 'no-store');
    return { mails: await listOutbox(app.db, { limit: query.limit, ...(query.to ? { to: query.to } : {}) }) };
  });

  app.post('/api/dev/auth_type', { schema: { body: z.object({ auth_type: ZAuthType }) } }, async (request) => {
    const { auth_type } = request.body;
    await setSiteSetting(app.db, 'auth_type', auth_type);
    return { status: 'ok', auth_type };
  });

  app.post('/api/dev/notify', { schema: { body: ZDevNotifyBody } }, async (request) => {
    const body = request.body;
    let userId: string | null = null;
    if (body.account_id !== undefined) {
      userId = await userIdOfAccount(app.db, body.account_id);
      if (!userId) throw notFoundOf('account');
    }
    const locales = body.locale ? [body.locale] : LOCALES;
    const id = await sendNotification(app.db, {
      userId,
      display: body.display,
      type: body.type,
      closable: body.closable,
      texts: locales.map((locale) => ({ locale, title: body.title, text: body.text, buttons: body.buttons })),
    });
    return { status: 'ok', id };
  });

  app.post('/api/dev/kyc', { schema: { body: ZDevKycBody } }, async (request) => {
    const body = request.body;
    const ctx = { db: app.db, publicUrl };
    return body.action === 'approve' ? approveSubmission(ctx, { actor: 'dev' }, body.id) : rejectSubmission(ctx, { actor: 'dev' }, body.id, body);
  });

  // An account at a verification level at once (e2e: card orders need level 1 without uploads).
  app.post('/api/dev/level', { schema: { body: z.object({ account_id: z.number().int(), level: z.number().int().min(0).max(1) }) } }, async (request) => {
    const { account_id, level } = request.body as { account_id: number; level: number };
    const userId = await userIdOfAccount(app.db, account_id);
    if (!userId) throw notFoundOf('account');
    await app.db.query('UPDATE users SET verification_level = $2 WHERE id = $1', [userId, level]);
    return { status: 'ok', level };
  });

  // The 24-hour withdrawal pause after a security change, lifted (e2e: a passkey just added approves a withdrawal).
  app.post('/api/dev/security_hold', { schema: { body: z.object({ account_id: z.number().int() }) } }, async (request) => {
    const userId = await userIdOfAccount(app.db, request.body.account_id);
    if (!userId) throw notFoundOf('account');
    await app.db.query('UPDATE users SET security_changed_at = NULL WHERE id = $1', [userId]);
    return { status: 'ok' };
  });

  app.post('/api/dev/referral', { schema: { body: ZDevReferralBody } }, async (request) => {
    const body = request.body;
    if (body.action === 'terms') {
      const { action: _, ...terms } = body;
      return { status: 'ok', terms: await setReferralTerms(app.db, terms) };
    }
    const now = body.now ? new Date(body.now) : new Date();
    return { status: 'ok', settled: await settleReferralBonuses({ db: app.db, publicUrl, mailer: app.mailer }, now) };
  });

  app.post('/api/dev/credit', { schema: { body: ZDevCreditBody } }, async (request) => {
    const body = request.body;
    return adjustBalance(app.db, {
      accountId: body.account_id,
      currency: body.currency,
      amount: body.amount,
      direction: 'credit',
      reason: 'e2e',
      actor: 'dev',
    });
  });

  app.post('/api/dev/support', { schema: { body: ZDevSupportBody } }, async (request) => {
    const body = request.body;
    const who = { actor: 'cli:dev' };
    if (body.action === 'close') await setSupportStatus(app.db, who, body.account_id, 'closed');
    const message = body.action === 'reply' ? await replySupport({ db: app.db, storage: app.storage }, who, body.account_id, body.text, []) : null;
    return { status: 'ok', account_id: body.account_id, ...(message ? { message_id: message.id } : { closed: true }) };
  });

  app.post('/api/dev/operator', { schema: { body: ZDevOperatorBody } }, async (request) => {
    const created = await createOperator(app.db, { email: request.body.email, roles: request.body.roles, actor: 'cli:dev', now: new Date() });
    return { email: created.email, enrol_link: `${publicUrl}/ops/enrol#${created.token}` };
  });

  // The second factor as if last given an hour ago (its TOTP step too): the next step-up route
  // asks for it again, and the current code answers it (e2e cannot wait 5 minutes).
  app.post('/api/dev/operator/stale-factor', { schema: { body: ZDevOperatorBody.pick({ email: true }) } }, async (request) => {
    await app.db.transaction(async (tx) => {
      const [operator] = await tx.query<{ id: string }>(
        `UPDATE operators SET totp_last_step = totp_last_step - 120 WHERE email = lower($1) RETURNING id::text`,
        [request.body.email],
      );
      await tx.query(`UPDATE ops_sessions SET second_factor_at = second_factor_at - interval '1 hour' WHERE operator_id = $1`, [operator?.id ?? null]);
    });
    return { status: 'ok' };
  });

  app.post('/api/dev/rates/history', { schema: { body: ZDevRateHistoryBody } }, async (request) => {
    const { src, dst, days } = request.body;
    const [pair] = await app.db.query<{ rate: string }>('SELECT rate::text AS rate FROM rates WHERE src = $1 AND dst = $2', [src, dst]);
    if (!pair) throw notFoundOf('pair');
    const ticks = madeUpTicks(`${src}/${dst}`, pair.rate, Date.now(), days);
    await app.db.transaction(async (tx) => {
      for (const tick of ticks) await recordRates(tx, [{ src, dst, rate: tick.rate }], tick.at);
    });
    noticeRates(app.db);
    return { status: 'ok', ticks: ticks.length };
  });

  app.post('/api/dev/withdraw', { schema: { body: ZDevWithdrawBody } }, async (request) => ({
    status: 'ok',
    withdrawal: await approveWithdrawal({ db: app.db, cipher }, request.body.id, 'operator:dev', new Date()),
  }));
};

export default devRoutes;
