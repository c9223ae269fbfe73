import { randomUUID } from 'node:crypto';
import type { Db } from '../db/index.ts';
import type { TOpsActor } from '../domains/ops/customers.ts';
import { activeOperatorByEmail } from '../domains/ops/service.ts';

/**
 * Who acts in a command that moves money: an enrolled, enabled operator named by --as, acting
 * through the same services as on /ops (their permissions checked, the audit trail written as
 * them, the request id `cli:<uuid>`). The database refuses a decision by a request's proposer, so
 * one operator can never both propose and approve.
 */
export async function cliOperator(db: Db, email: string | undefined, usage: string): Promise<TOpsActor> {
  if (!email) throw new Error(usage);
  const operator = await activeOperatorByEmail(db, email);
  if (!operator) throw new Error(`no enrolled, enabled operator ${email}`);
  return { operator, requestId: `cli:${randomUUID()}`, ip: 'cli', now: new Date() };
}
