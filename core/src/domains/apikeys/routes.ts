import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { ZApiKeyParams } from '@obmen/shared';
import { CALLS } from '@obmen/shared/calls';
import { notFoundOf } from '../../errors.ts';
import { currentUser, requireUser } from '../user/current.ts';
import { schemaOf } from '../../lib/call-schema.ts';
import { createApiKey, listApiKeys, revokeApiKey, type TApiKeyDeps } from './service.ts';

/** /settings/api: the account's keys for bots. A person's session only: no key reaches these. */
const apiKeyRoutes: FastifyPluginAsyncZod<TApiKeyDeps> = async (app, deps) => {
  const tags = ['Auth'];

  app.get(
    '/api/security/api_keys',
    { onRequest: requireUser, schema: { tags, summary: "The account's API keys and their last use", ...schemaOf(CALLS['GET /api/security/api_keys']) } },
    (request) => listApiKeys(app.db, currentUser(request).id, deps.now()),
  );

  app.post(
    '/api/security/api_keys',
    {
      onRequest: requireUser,
      schema: {
        tags,
        summary: 'Create an API key (2FA on, with its code or a passkey): its secret is in this answer only',
        ...schemaOf(CALLS['POST /api/security/api_keys']),
      },
    },
    (request) => createApiKey(deps, currentUser(request), request.body, request.locale),
  );

  app.post(
    '/api/security/api_keys/:id/revoke',
    {
      onRequest: requireUser,
      // A malformed id names no key of this account: the same 404 as another account's key.
      config: { paramsError: () => notFoundOf('api_key') },
      schema: { tags, summary: 'Revoke an API key at once', params: ZApiKeyParams, ...schemaOf(CALLS['POST /api/security/api_keys/{id}/revoke']) },
    },
    (request) => revokeApiKey(app.db, currentUser(request).id, request.params.id, deps.now(), request.locale),
  );
};

export default apiKeyRoutes;
