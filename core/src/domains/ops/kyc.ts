import { OPS_KYC_QUEUE, type TOpsKycRejectBody, type TOpsKycReview } from '@obmen/shared';
import type { Queryable } from '../../db/index.ts';
import { approveIn, findWaiting, listQueue, rejectIn, reviewFile, reviewSubmission, type TAuditBy } from '../verification/operator.ts';
import type { TVerificationContext } from '../verification/service.ts';
import { describeFile } from '../verification/service.ts';
import { claimItem, claimsOf, releaseClaim, type TClaim } from './claims.ts';
import { operatorActor, type TOperator } from './service.ts';

/*
 * Identity review as the back office does it: the verification domain's queue, review and
 * decisions, with the queue's claims and clock around them. A decision takes (or refreshes) the
 * operator's claim in the decision's own transaction, so a colleague's live claim refuses it
 * (409 `ops_claimed`) and nothing changes; once decided the item leaves the queue and its claim.
 */

export type TKycActing = { operator: TOperator; requestId: string; ip: string; now: Date };

const byOf = (acting: TKycActing): TAuditBy => ({ actor: operatorActor(acting.operator), requestId: acting.requestId, ip: acting.ip });

function holder(claim: TClaim | undefined, operator: TOperator) {
  return claim ? { email: claim.operatorEmail, mine: claim.operatorId === operator.id, lapses_at: claim.lapsesAt.toISOString() } : null;
}

/** The waiting submissions, oldest first, each with its waiting time against the target and who holds it. */
export async function kycQueue(db: Queryable, acting: TKycActing, targetMs: number) {
  const rows = await listQueue(db, byOf(acting), 200);
  const claims = await claimsOf(
    db,
    OPS_KYC_QUEUE,
    rows.map((row) => row.id),
    acting.now,
  );
  return rows.map((row) => {
    const waiting = Math.max(0, acting.now.getTime() - Date.parse(row.submitted_at));
    return { ...row, waiting_ms: waiting, overdue: waiting > targetMs, claim: holder(claims.get(row.id), acting.operator) };
  });
}

/** Takes a waiting submission for the operator (409 when a colleague holds it). */
export async function claimKyc(db: Queryable, acting: TKycActing, id: string) {
  await findWaiting(db, id);
  const claim = await claimItem(db, { queue: OPS_KYC_QUEUE, itemId: id, operator: acting.operator, now: acting.now });
  return holder(claim, acting.operator)!;
}

/** One submission for the reviewer, with each file's image address and the claim on it. */
export async function kycReview(ctx: TVerificationContext, acting: TKycActing, id: string): Promise<TOpsKycReview> {
  const review = await reviewSubmission({ ...ctx, now: () => acting.now }, byOf(acting), id);
  const claim = (await claimsOf(ctx.db, OPS_KYC_QUEUE, [id], acting.now)).get(id);
  return {
    ...review,
    files: review.files.map((file) => ({ ...describeFile(file), url: `/api/ops/kyc/file/${file.public_id}` })),
    claim: holder(claim, acting.operator),
  };
}

/** A document image for the reviewer: where it is stored, the look audited. */
export async function kycFile(db: Queryable, acting: TKycActing, fileId: string) {
  return reviewFile(db, byOf(acting), fileId);
}

type TDecision = { action: 'approve' } | ({ action: 'reject' } & TOpsKycRejectBody);

/** Approves or rejects (the customer may send the rejected files again) under the operator's claim. */
export async function decideKyc(ctx: Pick<TVerificationContext, 'db' | 'publicUrl'>, acting: TKycActing, id: string, decision: TDecision) {
  return ctx.db.transaction(async (tx) => {
    await findWaiting(tx, id, true);
    const key = { queue: OPS_KYC_QUEUE, itemId: id };
    await claimItem(tx, { ...key, operator: acting.operator, now: acting.now });
    if (decision.action === 'approve') await approveIn(tx, ctx.publicUrl, byOf(acting), id);
    else await rejectIn(tx, ctx.publicUrl, byOf(acting), id, { files: decision.files, retry: true, ...(decision.note ? { note: decision.note } : {}) });
    await releaseClaim(tx, key);
    return decision.action === 'approve' ? ('approved' as const) : ('rejected' as const);
  });
}
