import type { Queryable } from '../../db/index.ts';
import { AppError } from '../../errors.ts';
import type { TOperator } from './service.ts';

/** A claim left untouched this long lapses: the item is back in the queue for anyone. */
export const OPS_CLAIM_LAPSE_MS = 15 * 60_000;

export type TClaim = { itemId: string; operatorId: string; operatorEmail: string; claimedAt: Date; lapsesAt: Date };
type TClaimKey = { queue: string; itemId: string };

/**
 * Takes an item for the operator: free, lapsed, or already theirs (then refreshed). Held by a
 * colleague whose claim is live, it answers 409 `ops_claimed` and changes nothing. One statement,
 * so two operators claiming at once cannot both win.
 */
export async function claimItem(db: Queryable, key: TClaimKey & { operator: Pick<TOperator, 'id'>; now: Date }): Promise<TClaim> {
  const [row] = await db.query<{ item_id: string }>(
    `INSERT INTO ops_claims AS c (queue, item_id, operator_id, claimed_at, touched_at) VALUES ($1, $2, $3, $4, $4)
     ON CONFLICT (queue, item_id) DO UPDATE SET operator_id = EXCLUDED.operator_id, touched_at = EXCLUDED.touched_at,
       claimed_at = CASE WHEN c.operator_id = EXCLUDED.operator_id THEN c.claimed_at ELSE EXCLUDED.claimed_at END
     WHERE c.operator_id = EXCLUDED.operator_id OR c.touched_at <= $4::timestamptz - make_interval(secs => $5)
     RETURNING item_id`,
    [key.queue, key.itemId, key.operator.id, key.now, OPS_CLAIM_LAPSE_MS / 1000],
  );
  if (!row) throw new AppError('ops_claimed');
  const claim = (await claimsOf(db, key.queue, [key.itemId], key.now)).get(key.itemId);
  if (!claim) throw new AppError('ops_claimed');
  return claim;
}

/** The operator worked on the item (a reply, a decision): their claim lives on from now. */
export async function touchClaim(db: Queryable, key: TClaimKey & { operator: Pick<TOperator, 'id'>; now: Date }): Promise<void> {
  await db.query('UPDATE ops_claims SET touched_at = $4 WHERE queue = $1 AND item_id = $2 AND operator_id = $3', [
    key.queue,
    key.itemId,
    key.operator.id,
    key.now,
  ]);
}

/** Gives the item back (only the holder can); a decided item's claim goes too. */
export async function releaseClaim(db: Queryable, key: TClaimKey & { operator?: Pick<TOperator, 'id'> }): Promise<void> {
  if (key.operator) await db.query('DELETE FROM ops_claims WHERE queue = $1 AND item_id = $2 AND operator_id = $3', [key.queue, key.itemId, key.operator.id]);
  else await db.query('DELETE FROM ops_claims WHERE queue = $1 AND item_id = $2', [key.queue, key.itemId]);
}

/** The live claims on these items of a queue, by item id (lapsed ones are left out). */
export async function claimsOf(db: Queryable, queue: string, itemIds: readonly string[], now: Date): Promise<Map<string, TClaim>> {
  if (itemIds.length === 0) return new Map();
  const rows = await db.query<{ item_id: string; operator_id: string; email: string; claimed_at: Date; touched_at: Date }>(
    `SELECT c.item_id, c.operator_id::text AS operator_id, o.email, c.claimed_at, c.touched_at
       FROM ops_claims c JOIN operators o ON o.id = c.operator_id
      WHERE c.queue = $1 AND c.item_id = ANY($2::text[]) AND c.touched_at > $3::timestamptz - make_interval(secs => $4)`,
    [queue, itemIds, now, OPS_CLAIM_LAPSE_MS / 1000],
  );
  return new Map(
    rows.map((row) => [
      row.item_id,
      {
        itemId: row.item_id,
        operatorId: row.operator_id,
        operatorEmail: row.email,
        claimedAt: new Date(row.claimed_at),
        lapsesAt: new Date(new Date(row.touched_at).getTime() + OPS_CLAIM_LAPSE_MS),
      },
    ]),
  );
}
