import type { FastifyRequest } from 'fastify';
import { unauthorized } from '../../errors.ts';
import type { TAuthUser } from './public.ts';

/*
 * The signed-in user of a request. plugins/session.ts fills it in from the Bearer token; routes
 * of every domain read it here, so no domain depends on the session plugin (and through it on auth).
 */

declare module 'fastify' {
  interface FastifyRequest {
    /** The signed-in user of `Authorization: Bearer <token>`, or null. */
    user: TAuthUser | null;
    sessionId: string | null;
  }
}

/** preHandler for routes that need a signed-in user: 401 with an anonymous `user` otherwise. */
export async function requireUser(request: FastifyRequest): Promise<void> {
  if (!request.user) throw unauthorized();
}

/** The signed-in user of a route guarded by requireUser. */
export function currentUser(request: FastifyRequest): TAuthUser {
  if (!request.user) throw unauthorized();
  return request.user;
}
