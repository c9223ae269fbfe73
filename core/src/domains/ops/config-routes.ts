import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { CALLS } from '@obmen/shared/calls';
import {
  ZOpsArticleParams,
  ZOpsNotificationParams,
  type TOpsArticleBody,
  type TOpsCardCreateBody,
  type TOpsCardEnableBody,
  type TOpsFooterRemoveBody,
  type TOpsMenuItemBody,
  type TOpsMenuRemoveBody,
  type TOpsNotificationBody,
  type TOpsPaymentEnableBody,
  type TOpsRateBody,
} from '@obmen/shared';
import { z } from 'zod';
import { schemaOf } from '../../lib/call-schema.ts';
import { receiveUpload, refuseOversizedUpload } from '../../storage/upload.ts';
import type { ZOpsNotificationPreviewBody } from '@obmen/shared';
import {
  articleList,
  articleOf,
  cardProducts,
  createCardProduct,
  enableCardProduct,
  limitsConfig,
  changeMenu,
  changeRate,
  menusConfig,
  moneyConfig,
  previewArticle,
  publishArticle,
  enablePaymentSystem,
  paymentSystems,
  ratesConfig,
  siteConfig,
} from './config.ts';
import { cancelScheduledNotification, previewNotification, publishNotification, recentNotifications, removeNotification } from './config-notifications.ts';
import { footerConfig, removeFooterLogo, uploadFooterLogo } from './config-footer.ts';
import { opsActorOf } from './customers-routes.ts';
import { operatorTerms } from '../referral/service.ts';

const tags = ['Ops'];

/**
 * Configuration (/ops/config): each screen's reads and its direct changes (a fresh second
 * factor, an audit row with before and after). Sensitive settings are `config.change` requests,
 * proposed through POST /api/ops/requests, whose service checks the setting's permission.
 */
const opsConfigRoutes: FastifyPluginAsyncZod<{ now: () => Date }> = async (app, { now }) => {
  app.get(
    '/api/ops/config/site',
    {
      config: { ops: 'config.site' },
      schema: { tags, summary: "The site's settings (changed through config.change requests)", ...schemaOf(CALLS['GET /api/ops/config/site']) },
    },
    async () => ({ status: 'ok' as const, ...(await siteConfig(app.db)) }),
  );

  app.get(
    '/api/ops/config/referral',
    {
      config: { ops: 'config.money' },
      schema: { tags, summary: 'The referral terms (changed through config.change requests)', ...schemaOf(CALLS['GET /api/ops/config/referral']) },
    },
    async () => ({ status: 'ok' as const, terms: await operatorTerms(app.db) }),
  );

  app.get(
    '/api/ops/config/rates',
    {
      config: { ops: 'config.money' },
      schema: { tags, summary: "Every pair's rate and terms, and the rate feed's state", ...schemaOf(CALLS['GET /api/ops/config/rates']) },
    },
    async () => ({ status: 'ok' as const, ...(await ratesConfig(app.db, app.rates)) }),
  );

  app.post(
    '/api/ops/config/rates',
    {
      config: { ops: 'config.money', stepUp: true },
      schema: { tags, summary: "Sets a pair's rate, spread, fee or limits (what rates:set does)", ...schemaOf(CALLS['POST /api/ops/config/rates']) },
    },
    async (request) => ({ status: 'ok' as const, pair: await changeRate(app.db, opsActorOf(request, now), request.body as TOpsRateBody) }),
  );

  app.get(
    '/api/ops/config/payments',
    {
      config: { ops: 'config.money' },
      schema: { tags, summary: 'Every payment system per currency, with its terms', ...schemaOf(CALLS['GET /api/ops/config/payments']) },
    },
    async () => ({ status: 'ok' as const, ...(await paymentSystems(app.db)) }),
  );

  app.post(
    '/api/ops/config/payments/enabled',
    {
      config: { ops: 'config.money', stepUp: true },
      schema: { tags, summary: 'Turns a payment system, or one of its currencies, on or off', ...schemaOf(CALLS['POST /api/ops/config/payments/enabled']) },
    },
    async (request) => ({ status: 'ok' as const, ...(await enablePaymentSystem(app.db, opsActorOf(request, now), request.body as TOpsPaymentEnableBody)) }),
  );

  app.get(
    '/api/ops/config/cards',
    {
      config: { ops: 'config.money' },
      schema: { tags, summary: 'The card catalogue, disabled products too (what cards:products lists)', ...schemaOf(CALLS['GET /api/ops/config/cards']) },
    },
    async () => ({ status: 'ok' as const, ...(await cardProducts(app.db)) }),
  );

  app.post(
    '/api/ops/config/cards/enabled',
    {
      config: { ops: 'config.money', stepUp: true },
      schema: { tags, summary: 'Puts a card product into the catalogue or takes it out', ...schemaOf(CALLS['POST /api/ops/config/cards/enabled']) },
    },
    async (request) => ({ status: 'ok' as const, ...(await enableCardProduct(app.db, opsActorOf(request, now), request.body as TOpsCardEnableBody)) }),
  );

  app.post(
    '/api/ops/config/cards',
    {
      config: { ops: 'config.money', stepUp: true },
      schema: {
        tags,
        summary: 'Adds a card product, out of the catalogue until put in (what cards:product:create does)',
        ...schemaOf(CALLS['POST /api/ops/config/cards']),
      },
    },
    async (request) => ({ status: 'ok' as const, ...(await createCardProduct(app.db, opsActorOf(request, now), request.body as TOpsCardCreateBody)) }),
  );

  app.get(
    '/api/ops/config/limits',
    {
      config: { ops: 'config.money' },
      schema: { tags, summary: "Every verification level's limits (changed through config.change requests)", ...schemaOf(CALLS['GET /api/ops/config/limits']) },
    },
    async () => ({ status: 'ok' as const, ...(await limitsConfig(app.db)) }),
  );

  app.get(
    '/api/ops/config/money',
    {
      config: { ops: 'config.money' },
      schema: {
        tags,
        summary: 'Per currency: transfer terms, the four-eyes and auto-approval withdrawal amounts (changed through config.change requests)',
        ...schemaOf(CALLS['GET /api/ops/config/money']),
      },
    },
    async () => ({ status: 'ok' as const, ...(await moneyConfig(app.db)) }),
  );

  app.get(
    '/api/ops/config/footer',
    {
      config: { ops: 'config.site' },
      schema: { tags, summary: 'The footer images, uploaded logos and site files (what footer:list lists)', ...schemaOf(CALLS['GET /api/ops/config/footer']) },
    },
    async () => ({ status: 'ok' as const, ...(await footerConfig(app.db)) }),
  );

  app.post(
    '/api/ops/config/footer',
    {
      config: { ops: 'config.site', stepUp: true },
      preValidation: refuseOversizedUpload,
      schema: {
        tags,
        summary: 'Uploads a footer logo (re-encoded), replacing the image of its name',
        ...schemaOf(CALLS['POST /api/ops/config/footer']),
        // The fields and the picture come as multipart, read and checked by the upload path.
        body: z.unknown().describe('multipart/form-data: name, url, order, file'),
      },
    },
    async (request) => {
      const upload = await receiveUpload(request);
      try {
        return { status: 'ok' as const, ...(await uploadFooterLogo(app.db, app.storage, opsActorOf(request, now), upload)) };
      } finally {
        await upload.cleanup();
      }
    },
  );

  app.post(
    '/api/ops/config/footer/remove',
    {
      config: { ops: 'config.site', stepUp: true },
      schema: { tags, summary: 'Takes an image out of the footer (what footer:remove does)', ...schemaOf(CALLS['POST /api/ops/config/footer/remove']) },
    },
    async (request) => ({
      status: 'ok' as const,
      ...(await removeFooterLogo(app.db, app.storage, opsActorOf(request, now), (request.body as TOpsFooterRemoveBody).name)),
    }),
  );

  app.get(
    '/api/ops/config/articles',
    {
      config: { ops: 'content.publish' },
      schema: { tags, summary: 'Every article and language, without bodies', ...schemaOf(CALLS['GET /api/ops/config/articles']) },
    },
    async () => ({ status: 'ok' as const, ...(await articleList(app.db)) }),
  );

  app.get(
    '/api/ops/config/articles/:name/:locale',
    {
      config: { ops: 'content.publish' },
      schema: {
        tags,
        summary: 'One article as stored (sanitised HTML), to edit',
        params: ZOpsArticleParams,
        ...schemaOf(CALLS['GET /api/ops/config/articles/{name}/{locale}']),
      },
    },
    async (request) => ({ status: 'ok' as const, ...(await articleOf(app.db, request.params.name, request.params.locale)) }),
  );

  app.post(
    '/api/ops/config/articles/preview',
    {
      config: { ops: 'content.publish' },
      schema: { tags, summary: 'Markdown as a page would serve it (the sanitiser applied)', ...schemaOf(CALLS['POST /api/ops/config/articles/preview']) },
    },
    async (request) => ({ status: 'ok' as const, ...previewArticle((request.body as { markdown: string }).markdown) }),
  );

  app.post(
    '/api/ops/config/articles',
    {
      config: { ops: 'content.publish', stepUp: true },
      schema: {
        tags,
        summary: 'Publishes an article in one language from Markdown (what article:set does)',
        ...schemaOf(CALLS['POST /api/ops/config/articles']),
      },
    },
    async (request) => ({ status: 'ok' as const, ...(await publishArticle(app.db, opsActorOf(request, now), request.body as TOpsArticleBody)) }),
  );

  app.get(
    '/api/ops/config/menus',
    {
      config: { ops: 'content.publish' },
      schema: { tags, summary: 'The header, footer and main menus in each language', ...schemaOf(CALLS['GET /api/ops/config/menus']) },
    },
    async () => ({ status: 'ok' as const, ...(await menusConfig(app.db)) }),
  );

  app.post(
    '/api/ops/config/menus',
    {
      config: { ops: 'content.publish', stepUp: true },
      schema: { tags, summary: 'Adds a menu item or changes the one at that address (what menu:set does)', ...schemaOf(CALLS['POST /api/ops/config/menus']) },
    },
    async (request) => ({ status: 'ok' as const, ...(await changeMenu(app.db, opsActorOf(request, now), { set: request.body as TOpsMenuItemBody })) }),
  );

  app.post(
    '/api/ops/config/menus/remove',
    {
      config: { ops: 'content.publish', stepUp: true },
      schema: { tags, summary: 'Removes a menu item (what menu:remove does)', ...schemaOf(CALLS['POST /api/ops/config/menus/remove']) },
    },
    async (request) => ({ status: 'ok' as const, ...(await changeMenu(app.db, opsActorOf(request, now), { remove: request.body as TOpsMenuRemoveBody })) }),
  );

  app.get(
    '/api/ops/config/notifications',
    {
      config: { ops: 'content.publish' },
      schema: { tags, summary: 'The latest notifications, newest first, and the scheduled ones', ...schemaOf(CALLS['GET /api/ops/config/notifications']) },
    },
    async () => ({ status: 'ok' as const, ...(await recentNotifications(app.db)) }),
  );

  app.post(
    '/api/ops/config/notifications/preview',
    {
      config: { ops: 'content.publish' },
      schema: {
        tags,
        summary: 'A notification as customers would get it, per language (the sanitiser applied)',
        ...schemaOf(CALLS['POST /api/ops/config/notifications/preview']),
      },
    },
    async (request) => ({ status: 'ok' as const, texts: previewNotification((request.body as z.infer<typeof ZOpsNotificationPreviewBody>).texts) }),
  );

  app.post(
    '/api/ops/config/notifications',
    {
      config: { ops: 'content.publish', stepUp: true },
      schema: {
        tags,
        summary: 'Publishes a notification to everyone or to chosen accounts, now or at its send_at',
        ...schemaOf(CALLS['POST /api/ops/config/notifications']),
      },
    },
    async (request) => ({ status: 'ok' as const, ...(await publishNotification(app.db, opsActorOf(request, now), request.body as TOpsNotificationBody)) }),
  );

  app.post(
    '/api/ops/config/notifications/scheduled/:id/cancel',
    {
      config: { ops: 'content.publish', stepUp: true },
      schema: {
        tags,
        summary: 'Cancels a scheduled notification before it goes out',
        params: ZOpsNotificationParams,
        ...schemaOf(CALLS['POST /api/ops/config/notifications/scheduled/{id}/cancel']),
      },
    },
    async (request) => {
      await cancelScheduledNotification(app.db, opsActorOf(request, now), Number(request.params.id));
      return { status: 'ok' as const };
    },
  );

  app.post(
    '/api/ops/config/notifications/:id/delete',
    {
      config: { ops: 'content.publish', stepUp: true },
      schema: {
        tags,
        summary: 'Takes a notification off every page',
        params: ZOpsNotificationParams,
        ...schemaOf(CALLS['POST /api/ops/config/notifications/{id}/delete']),
      },
    },
    async (request) => {
      await removeNotification(app.db, opsActorOf(request, now), Number(request.params.id));
      return { status: 'ok' as const };
    },
  );
};

export default opsConfigRoutes;
