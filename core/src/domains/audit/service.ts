import { createHash } from 'node:crypto';
import type { Queryable } from '../../db/index.ts';

/*
 * The operators' audit trail: one append-only table (operator_audit), written for every action
 * on a customer, every denied attempt and every view of personal data, by the web and the
 * command line alike. The database chains the rows (migration 097): each row's hash is
 * sha256(previous hash || its canonical content), so an edited or removed row is found by
 * verifyAuditChain, and an export carries what an offline check needs.
 */

export type TAuditOutcome = 'done' | 'denied' | 'viewed';

export type TAuditEntry = {
  /** An operator (`operator:<id>`), a command line user (`cli:<name>`) or the system. */
  actor: string;
  action: string;
  subject?: string | null;
  details?: object;
  outcome?: TAuditOutcome;
  reasonCode?: string | null;
  reasonText?: string | null;
  requestId?: string | null;
  ip?: string | null;
  before?: object | null;
  after?: object | null;
};

const json = (value: object | null | undefined) => (value === undefined || value === null ? null : JSON.stringify(value));

/** One row of the trail, in the caller's transaction (an action and its audit commit together). */
export async function writeAudit(db: Queryable, entry: TAuditEntry): Promise<void> {
  await db.query(
    `INSERT INTO operator_audit (operator, action, subject, details, outcome, reason_code, reason_text, request_id, ip, before, after)
     VALUES ($1, $2, $3, $4::jsonb, $5, $6, $7, $8, $9, $10::jsonb, $11::jsonb)`,
    [
      entry.actor,
      entry.action,
      entry.subject ?? null,
      json(entry.details) ?? '{}',
      entry.outcome ?? 'done',
      entry.reasonCode ?? null,
      entry.reasonText ?? null,
      entry.requestId ?? null,
      entry.ip ?? null,
      json(entry.before),
      json(entry.after),
    ],
  );
}

/** A row as exported: its fields, its links and the exact text its hash covers. */
export type TAuditLine = {
  id: number;
  at: string;
  actor: string;
  action: string;
  subject: string | null;
  outcome: TAuditOutcome;
  prev_hash: string | null;
  hash: string;
  content: string;
};

export type TChainReport = { rows: number; intact: boolean; head: string | null; broken_at?: number; problem?: string };

type TLinkedRow = { id: number; prev_hash: string | null; hash: string; computed: string };

/** The first row whose link or hash does not hold, over rows in id order. */
function firstBreak(rows: TLinkedRow[]): TChainReport {
  let prev: string | null = null;
  for (const row of rows) {
    if (row.prev_hash !== prev) return { rows: rows.length, intact: false, head: null, broken_at: row.id, problem: 'the row before it was removed or changed' };
    if (row.computed !== row.hash)
      return { rows: rows.length, intact: false, head: null, broken_at: row.id, problem: 'the row was changed after it was written' };
    prev = row.hash;
  }
  return { rows: rows.length, intact: true, head: prev };
}

/**
 * Walks the chain in the database. Removing the newest rows leaves a shorter chain that holds:
 * `head` is the last hash, to compare with one noted (or exported) earlier.
 */
export async function verifyAuditChain(db: Queryable): Promise<TChainReport> {
  const rows = await db.query<TLinkedRow>(
    `SELECT id::int AS id, encode(prev_hash, 'hex') AS prev_hash, encode(hash, 'hex') AS hash,
       encode(operator_audit_hash(prev_hash, operator_audit_content(a)), 'hex') AS computed
     FROM operator_audit a ORDER BY id`,
  );
  return firstBreak(rows);
}

export type TAuditFilter = {
  actor?: string;
  subject?: string;
  action?: string;
  from?: Date;
  to?: Date;
  afterId?: number;
  /** Newest first (a page of the back office), below `beforeId` when given; otherwise oldest first after `afterId`. */
  newestFirst?: boolean;
  beforeId?: number;
  limit?: number;
};

/** Rows of the trail with what an offline check needs (see verifyAuditLines). */
export async function listAudit(db: Queryable, filter: TAuditFilter = {}): Promise<TAuditLine[]> {
  return db.query<TAuditLine>(
    `SELECT id::int AS id, to_char(at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS at, operator AS actor, action, subject,
       outcome, encode(prev_hash, 'hex') AS prev_hash, encode(hash, 'hex') AS hash, operator_audit_content(a) AS content
     FROM operator_audit a
     WHERE ($1::text IS NULL OR operator = $1) AND ($2::text IS NULL OR subject = $2) AND ($3::text IS NULL OR action = $3)
       AND ($4::timestamptz IS NULL OR at >= $4) AND ($5::timestamptz IS NULL OR at < $5) AND id > $6 AND id < $8
     ORDER BY id ${filter.newestFirst ? 'DESC' : ''} LIMIT $7`,
    [
      filter.actor ?? null,
      filter.subject ?? null,
      filter.action ?? null,
      filter.from ?? null,
      filter.to ?? null,
      filter.afterId ?? 0,
      filter.limit ?? 1000,
      filter.beforeId ?? Number.MAX_SAFE_INTEGER,
    ],
  );
}

/** Every row of a filter, oldest first, a page at a time (exports). */
export async function* auditPages(db: Queryable, filter: Omit<TAuditFilter, 'afterId' | 'beforeId' | 'newestFirst' | 'limit'>): AsyncGenerator<TAuditLine[]> {
  let afterId = 0;
  for (;;) {
    const page = await listAudit(db, { ...filter, afterId, limit: 1000 });
    if (page.length === 0) return;
    yield page;
    afterId = page.at(-1)!.id;
  }
}

const sha256Hex = (prev: string | null, content: string) =>
  createHash('sha256')
    .update(Buffer.concat([prev === null ? Buffer.alloc(0) : Buffer.from(prev, 'hex'), Buffer.from(content, 'utf8')]))
    .digest('hex');

/**
 * An export checked without the database: every hash recomputed from its content, every link to
 * the line before, and the fields shown equal to the content hashed. An export of a period starts
 * inside the chain: its first line's link is taken as given.
 */
export function verifyAuditLines(lines: TAuditLine[]): TChainReport {
  const rows = lines.map((line, i): TLinkedRow => {
    const content = JSON.parse(line.content) as Record<string, unknown>;
    const shown = { id: line.id, at: line.at, actor: line.actor, action: line.action, subject: line.subject, outcome: line.outcome };
    const differs = Object.entries(shown).some(([key, value]) => content[key] !== value);
    return {
      id: line.id,
      prev_hash: i === 0 ? null : line.prev_hash,
      hash: line.hash,
      computed: differs ? 'fields differ from the content' : sha256Hex(line.prev_hash, line.content),
    };
  });
  return firstBreak(rows);
}
