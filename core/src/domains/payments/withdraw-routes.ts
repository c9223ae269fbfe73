import type { FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { translate, ZTokenParams, ZWithdrawalParams, ZWithdrawSystemParams, type TI18nKey } from '@obmen/shared';
import { AppError, notFoundOf } from '../../errors.ts';
import { addDestination, confirmDestination, removeDestination, setAllowlist, withdrawBook } from './destinations.ts';
import { consumeRateLimit } from '../../rate-limit.ts';
import { callWithIdempotencyKey } from '../idempotency/service.ts';
import { sendCsv } from '../history/service.ts';
import { secondFactorNeed, withdrawalsBlockedUntil } from '../security/second-factor.ts';
import { getWalletEnvelope } from '../wallets/service.ts';
import { currentUser, requireUser } from '../user/current.ts';
import { groupByCurrency, listPaymentSystems } from './catalogue.ts';
import { userLevel } from '../limits/service.ts';
import type { TDocumentCipher } from '../verification/cipher.ts';
import { WITHDRAW_CSV_COLUMNS, withdrawHistory } from './payment-history.ts';
import { cancelWithdrawal, requestWithdrawal } from './withdrawal-states.ts';
import { checkWithdrawal, openWithdrawals, withdrawalStatus, withdrawLimits } from './withdrawals.ts';
import { CALLS } from '@obmen/shared/calls';
import { csvSchemaOf, schemaOf } from '../../lib/call-schema.ts';

type TWithdrawOptions = { now: () => Date; cipher: TDocumentCipher; publicUrl: string };

const tags = ['Withdraw'];

/** Spec §7 "Withdraw": the systems, the check, the request, its status and cancel, the history. */
const withdrawRoutes: FastifyPluginAsyncZod<TWithdrawOptions> = async (app, { now, cipher, publicUrl }) => {
  const deps = { db: app.db, now, cipher };
  const book = { ...deps, publicUrl, mailer: app.mailer };
  /** The book as it stands after a change, with what the change did. */
  const bookAnswer = async (request: FastifyRequest, key: TI18nKey) => ({
    ...(await withdrawBook(app.db, currentUser(request).id, now())),
    message: translate(request.locale, key),
  });

  app.get(
    '/api/withdraw/book',
    { onRequest: requireUser, schema: { tags, summary: 'The address book and the allow-list switch', ...schemaOf(CALLS['GET /api/withdraw/book']) } },
    (request) => withdrawBook(app.db, currentUser(request).id, now()),
  );

  app.post(
    '/api/withdraw/book',
    {
      onRequest: requireUser,
      schema: {
        tags,
        summary: 'Add a destination (second factor when 2FA is on; confirmed by a mailed link; usable 24 hours later)',
        ...schemaOf(CALLS['POST /api/withdraw/book']),
      },
    },
    async (request) => {
      await addDestination(book, currentUser(request).id, request.body);
      return bookAnswer(request, 'withdraw.book_added');
    },
  );

  app.post(
    '/api/withdraw/book/confirm/:token',
    {
      onRequest: requireUser,
      config: { paramsError: () => new AppError('invalid_token') },
      schema: {
        tags,
        summary: 'Confirm a destination by its mailed link',
        params: ZTokenParams,
        ...schemaOf(CALLS['POST /api/withdraw/book/confirm/{token}']),
      },
    },
    async (request) => {
      await confirmDestination(app.db, currentUser(request).id, request.params.token, now());
      return bookAnswer(request, 'withdraw.book_confirmed');
    },
  );

  app.post(
    '/api/withdraw/book/:id/remove',
    {
      onRequest: requireUser,
      schema: { tags, summary: 'Remove a destination', params: ZWithdrawalParams, ...schemaOf(CALLS['POST /api/withdraw/book/{id}/remove']) },
    },
    async (request) => {
      await removeDestination(app.db, currentUser(request).id, request.params.id, now());
      return bookAnswer(request, 'withdraw.book_removed');
    },
  );

  app.post(
    '/api/withdraw/book/allowlist',
    {
      onRequest: requireUser,
      schema: {
        tags,
        summary: '"Allow-list only": on at once; off 24 hours later, with the second factor',
        ...schemaOf(CALLS['POST /api/withdraw/book/allowlist']),
      },
    },
    async (request) => {
      await setAllowlist(deps, currentUser(request).id, request.body);
      return bookAnswer(request, 'withdraw.book_allowlist_saved');
    },
  );

  app.get(
    '/api/withdraw/ps',
    {
      onRequest: requireUser,
      schema: {
        tags,
        summary: 'Withdrawal systems per currency, the limits left, the security pause and the requests under way',
        ...schemaOf(CALLS['GET /api/withdraw/ps']),
      },
    },
    async (request) => {
      const user = currentUser(request);
      const level = await userLevel(app.db, user.id);
      const entries = await listPaymentSystems(app.db, { direction: 'withdraw', userLevel: level });
      const blocked = await withdrawalsBlockedUntil(app.db, user.id);
      return {
        status: 'ok' as const,
        currencies: await groupByCurrency(app.db, entries, request.locale),
        limits: await withdrawLimits(app.db, user.id, now()),
        blocked_until: blocked ? blocked.toISOString() : null,
        ...(await secondFactorNeed(app.db, user.id)),
        open: await openWithdrawals(app.db, user.id, request.locale),
      };
    },
  );

  app.post(
    '/api/withdraw/check',
    {
      onRequest: requireUser,
      schema: {
        tags,
        summary: 'Check a withdrawal form: fee, amount received, limits left, field errors (form)',
        ...schemaOf(CALLS['POST /api/withdraw/check']),
      },
    },
    async (request) => {
      const user = currentUser(request);
      await consumeRateLimit(app.db, 'withdraw_check_user', user.id);
      return { status: 'ok' as const, ...(await checkWithdrawal(app.db, user.id, request.body, request.locale, now())) };
    },
  );

  app.post(
    '/api/withdraw/form/:id',
    {
      onRequest: requireUser,
      config: { idempotent: true, paramsError: () => notFoundOf('payment_provider') },
      schema: {
        tags,
        summary: 'Request a withdrawal through system {id} and hold its amount (form; code when 2FA is on)',
        params: ZWithdrawSystemParams,
        ...schemaOf(CALLS['POST /api/withdraw/form/{id}']),
      },
    },
    async (request, reply) => {
      const user = currentUser(request);
      const { withdrawal } = await callWithIdempotencyKey(request, reply, (key) =>
        requestWithdrawal(deps, user.id, key, request.params.id, request.body, request.locale),
      );
      return { status: 'ok' as const, message: translate(request.locale, 'withdraw.placed'), withdrawal, ...(await getWalletEnvelope(app.db, user.id)) };
    },
  );

  app.get(
    '/api/withdraw/status/:id',
    {
      onRequest: requireUser,
      config: { paramsError: () => notFoundOf('withdrawal') },
      schema: {
        tags,
        summary: "One of the caller's withdrawals: state, reason, expected time",
        params: ZWithdrawalParams,
        ...schemaOf(CALLS['GET /api/withdraw/status/{id}']),
      },
    },
    async (request) => ({ status: 'ok' as const, withdrawal: await withdrawalStatus(app.db, currentUser(request).id, request.params.id, request.locale) }),
  );

  app.post(
    '/api/withdraw/cancel/:id',
    {
      onRequest: requireUser,
      config: { idempotent: true, paramsError: () => notFoundOf('withdrawal') },
      schema: {
        tags,
        summary: 'Cancel a withdrawal still awaiting review; the held amount comes back',
        params: ZWithdrawalParams,
        ...schemaOf(CALLS['POST /api/withdraw/cancel/{id}']),
      },
    },
    async (request) => {
      const user = currentUser(request);
      const withdrawal = await cancelWithdrawal(deps, user.id, request.params.id, request.locale);
      return { status: 'ok' as const, message: translate(request.locale, 'withdraw.cancelled_ok'), withdrawal, ...(await getWalletEnvelope(app.db, user.id)) };
    },
  );

  app.get(
    '/api/withdraw/history',
    {
      onRequest: requireUser,
      config: { apiKey: 'read' },
      schema: {
        tags,
        summary: "The caller's withdrawals, filtered and paged (format=csv: a CSV file)",
        ...csvSchemaOf(CALLS['GET /api/withdraw/history']),
      },
    },
    async (request, reply) => {
      const page = await withdrawHistory(app.db, currentUser(request).id, request.query, request.locale);
      if (request.query.format === 'csv') return sendCsv(reply, 'withdraw-history.csv', WITHDRAW_CSV_COLUMNS, page.items);
      return { status: 'ok' as const, ...page };
    },
  );
};

export default withdrawRoutes;
