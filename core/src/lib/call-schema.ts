import type { z } from 'zod';
import { ZCsv } from '@obmen/shared';
import { ZEmptyBody, type TCall } from '@obmen/shared/calls';

type TNone = Record<never, never>;
// An empty body is what the client sends to a call that reads none: the route neither checks nor documents it.
type TBodyOf<C extends TCall> = C extends { body: infer B extends z.ZodType } ? ([typeof ZEmptyBody] extends [B] ? TNone : { body: B }) : TNone;
type TQueryOf<C extends TCall> = C extends { query: infer Q extends z.ZodType } ? { querystring: Q } : TNone;
type TInputOf<C extends TCall> = TBodyOf<C> & TQueryOf<C>;

function inputOf<C extends TCall>(call: C): TInputOf<C> {
  const input: { body?: z.ZodType; querystring?: z.ZodType } = {};
  if (call.body && call.body !== ZEmptyBody) input.body = call.body;
  if (call.query) input.querystring = call.query;
  return input as TInputOf<C>;
}

/**
 * The route schema of a call the site makes (shared/src/calls.ts): its body, query and answer are
 * the declaration's own objects (core/test/contract.test.ts), so the route cannot drift from it.
 * The route adds its tags, summary and params.
 */
export function schemaOf<C extends TCall>(call: C): TInputOf<C> & { response: { 200: C['answer'] } } {
  return Object.assign(inputOf(call), { response: { 200: call.answer } });
}

/** The same for a history call that also answers a CSV file (format=csv). */
export function csvSchemaOf<C extends TCall>(call: C) {
  return Object.assign(inputOf(call), { response: { 200: { content: { 'application/json': { schema: call.answer }, 'text/csv': { schema: ZCsv } } } } });
}
