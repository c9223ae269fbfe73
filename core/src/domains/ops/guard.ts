import fp from 'fastify-plugin';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { OPS_API_PREFIX, OPS_SESSION_STATE_HEADER, OPS_TOKEN_HEADER, SESSION_CLEARED, type TOpsAccess, type TOpsPermission } from '@obmen/shared';
import type { Queryable } from '../../db/index.ts';
import { AppError } from '../../errors.ts';
import { isAddressIn, parseCidrList } from '../../lib/cidr.ts';
import { writeAudit } from '../audit/service.ts';
import { findOpsSession, OPS_STEP_UP_MS, operatorActor, type TOpsSession } from './service.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * Every /api/ops route says what it needs: a permission, any signed-in operator
     * ('signed_in'), or nothing (null: enrolment and sign-in). A route without it fails at start.
     */
    ops?: TOpsAccess;
    /** A fresh second factor (at most OPS_STEP_UP_MS old): documents, personal data, changes. */
    stepUp?: boolean;
  }
  interface FastifyRequest {
    opsSession: TOpsSession | null;
  }
}

export type TOpsGuardOptions = { allowedIps?: string; now: () => Date };

/**
 * The back office's door. Anything under /api/ops that the caller may not know exists answers
 * exactly like a missing route (404 `route_not_found`): from outside OPS_ALLOWED_IPS, without an
 * operator's session, with a customer's session only. A signed-in operator without the route's
 * permission gets 403 `ops_forbidden`, written to the audit trail as a denied attempt; a route
 * that needs a fresh second factor answers 403 `step_up_required` until one is given.
 */
export default fp<TOpsGuardOptions>(
  async (app, { allowedIps, now }) => {
    const allowed = allowedIps ? parseCidrList(allowedIps) : null;
    app.decorateRequest('opsSession', null);

    app.addHook('onRoute', (route) => {
      if (!route.url.startsWith(OPS_API_PREFIX) || route.config?.ops !== undefined) return;
      throw new Error(`${[route.method].flat().join(',')} ${route.url}: an /api/ops route must declare config.ops (a permission, 'signed_in' or null)`);
    });

    const hidden = (reply: FastifyReply) => reply.callNotFound();

    app.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
      if (!request.url.startsWith(OPS_API_PREFIX)) return;
      if (allowed && !isAddressIn(allowed, request.ip)) return hidden(reply);
      // A path no route serves: the ordinary 404.
      const access = request.routeOptions.config?.ops;
      if (access === undefined) return;
      const header = request.headers[OPS_TOKEN_HEADER];
      const token = typeof header === 'string' ? header : '';
      const session = token ? await findOpsSession(app.db, token, now()) : null;
      if (token && !session) reply.header(OPS_SESSION_STATE_HEADER, SESSION_CLEARED);
      if (access === null) return;
      if (!session) return hidden(reply);
      request.opsSession = session;
      request.locale = session.operator.locale;
      if (access !== 'signed_in')
        await requirePermission(app.db, session.operator, access, {
          action: `${request.method} ${request.routeOptions.url}`,
          requestId: request.id,
          ip: request.ip,
        });
      if (request.routeOptions.config?.stepUp && now().getTime() - session.secondFactorAt.getTime() > OPS_STEP_UP_MS) throw new AppError('step_up_required');
    });
  },
  { name: 'ops-guard', dependencies: ['db', 'locale', 'errors'] },
);

/** The operator behind a route the guard let through (routes that declare a permission or 'signed_in'). */
export function opsSessionOf(request: FastifyRequest): TOpsSession {
  if (!request.opsSession) throw new AppError('route_not_found');
  return request.opsSession;
}

/**
 * 403 `ops_forbidden` for an operator without the permission, written to the audit trail as a
 * denied attempt: the guard's check for a route's permission, and a service's for what depends
 * on the request's content (which action a four-eyes request proposes).
 */
export async function requirePermission(
  db: Queryable,
  operator: TOpsSession['operator'],
  permission: TOpsPermission,
  attempt: { action: string; requestId: string; ip: string; subject?: string },
): Promise<void> {
  if (operator.permissions.includes(permission)) return;
  await writeAudit(db, {
    actor: operatorActor(operator),
    action: attempt.action,
    subject: attempt.subject ?? null,
    outcome: 'denied',
    reasonCode: `missing:${permission}`,
    requestId: attempt.requestId,
    ip: attempt.ip,
  });
  throw new AppError('ops_forbidden');
}
