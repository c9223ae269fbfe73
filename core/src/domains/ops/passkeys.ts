import type { TOpsPasskeysResponse, TPasskeyOptionsResponse } from '@obmen/shared';
import type { Db, Queryable } from '../../db/index.ts';
import { writeAudit } from '../audit/service.ts';
import { addPasskey, deletePasskey, listPasskeys, passkeyAssertionOptions, passkeyRegistrationOptions, type TRelyingParty } from '../security/passkeys.ts';
import { operatorActor, type TOpsSession } from './service.ts';

/*
 * An operator's own passkeys: the same ceremonies as customers' (security/passkeys.ts) over the
 * operators' tables. Adding and removing one is on the audit chain; a sign-in with one is too
 * (service.ts signIn). The relying party is PUBLIC_URL's, as for customers.
 */

type TAuditMeta = { requestId: string; ip: string };

export async function listOperatorPasskeys(db: Queryable, session: TOpsSession): Promise<TOpsPasskeysResponse> {
  return { status: 'ok', passkeys: await listPasskeys(db, session.operator.id, 'operator') };
}

/** The options of a new passkey of the signed-in operator. */
export function operatorPasskeyOptions(db: Queryable, rp: TRelyingParty, session: TOpsSession, now: Date): Promise<TPasskeyOptionsResponse> {
  return passkeyRegistrationOptions(db, rp, session.operator, now, 'operator');
}

/** Keeps the new passkey and writes `ops.passkey_add` in the same transaction. */
export async function addOperatorPasskey(
  db: Db,
  session: TOpsSession,
  body: { name: string; credential: string },
  now: Date,
  meta: TAuditMeta,
): Promise<TOpsPasskeysResponse> {
  return db.transaction(async (tx) => {
    const id = await addPasskey(tx, session.operator.id, body.name, body.credential, now, 'operator');
    await writeAudit(tx, {
      actor: operatorActor(session.operator),
      action: 'ops.passkey_add',
      subject: `operator:${session.operator.id}`,
      details: { passkey: id, name: body.name },
      ...meta,
    });
    return listOperatorPasskeys(tx, session);
  });
}

/** Removes one of the operator's own passkeys (another's answers like a missing one); `ops.passkey_remove`. */
export async function removeOperatorPasskey(db: Db, session: TOpsSession, id: string, meta: TAuditMeta): Promise<TOpsPasskeysResponse> {
  return db.transaction(async (tx) => {
    const name = await deletePasskey(tx, session.operator.id, id, 'operator');
    await writeAudit(tx, {
      actor: operatorActor(session.operator),
      action: 'ops.passkey_remove',
      subject: `operator:${session.operator.id}`,
      details: { passkey: id, name },
      ...meta,
    });
    return listOperatorPasskeys(tx, session);
  });
}

/**
 * The options of the sign-in's assertion: any operator passkey of this site (discoverable), so
 * the answer tells nothing of who is an operator; the password then names the operator, and the
 * passkey must be theirs.
 */
export function opsSignInPasskeyOptions(db: Queryable, rp: TRelyingParty, now: Date): Promise<TPasskeyOptionsResponse> {
  return passkeyAssertionOptions(db, rp, null, now, 'operator');
}
