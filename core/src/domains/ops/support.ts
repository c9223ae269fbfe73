import type { TOpsClaim, TOpsSupportItem } from '@obmen/shared';
import type { Db } from '../../db/index.ts';
import type { TReceivedFile } from '../../storage/upload.ts';
import type { TChatContext } from '../chat/service.ts';
import {
  deskState,
  listReports,
  replySupport,
  requireSupport,
  resolveReport,
  setSupportStatus,
  supportQueue,
  supportThread,
  type TSupportRow,
  type TWho,
} from '../chat/operator.ts';
import { claimItem, claimsOf, releaseClaim, type TClaim } from './claims.ts';
import { findOpsSession, liveOpsSessions, operatorActor, type TOperator } from './service.ts';

/*
 * The support desk: the chat domain's operator services with the back office's claims around
 * them. A conversation is claimed by its customer's account id in the 'support' queue; replying
 * or closing takes (or refreshes) the claim first, so a colleague's live claim refuses them
 * (409 ops_claimed) before anything changes, and a reply keeps the claim from lapsing.
 */

const QUEUE = 'support';

/** The desk's caller: the operator, and the request's id and address for the trail. */
export type TDeskCaller = { operator: TOperator; requestId: string; ip: string; now: Date };
export type TDeskOptions = { targetMs: number };

const whoOf = (caller: TDeskCaller): TWho => ({ actor: operatorActor(caller.operator), requestId: caller.requestId, ip: caller.ip });

const publicClaim = (claim: TClaim, caller: TDeskCaller): TOpsClaim => ({
  operator: claim.operatorEmail,
  mine: claim.operatorId === caller.operator.id,
  lapses_at: claim.lapsesAt.toISOString(),
});

async function withClaims(db: Db, caller: TDeskCaller, rows: TSupportRow[]): Promise<TOpsSupportItem[]> {
  const claims = await claimsOf(
    db,
    QUEUE,
    rows.map((row) => String(row.account_id)),
    caller.now,
  );
  return rows.map((row) => {
    const claim = claims.get(String(row.account_id));
    return { ...row, claim: claim ? publicClaim(claim, caller) : null };
  });
}

export async function deskList(db: Db, caller: TDeskCaller, status: 'open' | 'closed', options: TDeskOptions) {
  const rows = await supportQueue(db, status, { now: caller.now, targetMs: options.targetMs });
  const conversations = await withClaims(db, caller, rows);
  const unread = status === 'open' ? rows.reduce((sum, row) => sum + row.unread, 0) : 0;
  return { target_ms: options.targetMs, unread, conversations };
}

export async function deskThread(db: Db, caller: TDeskCaller, accountId: number, options: TDeskOptions) {
  const thread = await supportThread(db, whoOf(caller), accountId, { now: caller.now, targetMs: options.targetMs });
  const [conversation] = await withClaims(db, caller, [thread.conversation]);
  return { conversation: conversation!, messages: thread.messages };
}

/** Claims the conversation for the caller; an unknown account is 404 before any claim is made. */
async function claimOf(db: Db, caller: TDeskCaller, accountId: number): Promise<TClaim> {
  await requireSupport(db, accountId);
  return claimItem(db, { queue: QUEUE, itemId: String(accountId), operator: caller.operator, now: caller.now });
}

export const deskClaim = async (db: Db, caller: TDeskCaller, accountId: number) => publicClaim(await claimOf(db, caller, accountId), caller);

export const deskRelease = (db: Db, caller: TDeskCaller, accountId: number) =>
  releaseClaim(db, { queue: QUEUE, itemId: String(accountId), operator: caller.operator });

/** A reply holds the conversation: claimed (or the claim refreshed) first, then sent. */
export async function deskReply(ctx: TChatContext, caller: TDeskCaller, accountId: number, text: string, files: TReceivedFile[]) {
  await claimOf(ctx.db, caller, accountId);
  return replySupport(ctx, whoOf(caller), accountId, text, files);
}

/** Closing needs the conversation free or one's own, and gives the claim back; reopening puts it on the desk again. */
export async function deskSetStatus(db: Db, caller: TDeskCaller, accountId: number, status: 'open' | 'closed') {
  if (status === 'closed') await claimOf(db, caller, accountId);
  await setSupportStatus(db, whoOf(caller), accountId, status);
  if (status === 'closed') await releaseClaim(db, { queue: QUEUE, itemId: String(accountId) });
}

export const deskReports = (db: Db, caller: TDeskCaller) => listReports(db, whoOf(caller), caller.now);

export const deskResolveReport = (db: Db, caller: TDeskCaller, reportId: number, decision: { outcome: string; note: string }) =>
  resolveReport(db, whoOf(caller), reportId, { ...decision, now: caller.now });

export { whoOf };

/**
 * The desk's live line for the realtime hub: an operator who may reply, the sessions still
 * alive, and the state the desk's header shows (the hub sends it when it changes).
 */
export function deskSource(db: Db, now: () => Date) {
  return {
    async session(token: string) {
      const session = await findOpsSession(db, token, now());
      return session?.operator.permissions.includes('support.reply') ? { sessionId: session.id } : null;
    },
    alive: (sessionIds: string[]) => liveOpsSessions(db, sessionIds, now()),
    state: () => deskState(db),
  };
}
