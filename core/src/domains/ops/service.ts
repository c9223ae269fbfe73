import type { Db, Queryable } from '../../db/index.ts';
import { AppError } from '../../errors.ts';
import { hashToken, isTokenShaped, newToken } from '../../lib/tokens.ts';
import { hashPassword, verifyPassword } from '../auth/passwords.ts';
import { verifyPasskeyAssertion } from '../security/passkeys.ts';
import { matchTotp, newTotpSecret, otpauthUri } from '../security/totp.ts';
import { writeAudit } from '../audit/service.ts';

/*
 * Operators: created by the command line with roles and a one-time enrolment link, enrolled with
 * a password and a TOTP second factor, signed in with the password and a TOTP code or one of
 * their passkeys (ops/passkeys.ts). Their sessions are their own (never a
 * customer's): idle OPS_IDLE_MS, at most OPS_ABSOLUTE_MS, revocable; step-up asks for the second
 * factor again when the last one is older than OPS_STEP_UP_MS.
 */

export const OPS_IDLE_MS = 15 * 60_000;
export const OPS_ABSOLUTE_MS = 8 * 60 * 60_000;
export const OPS_STEP_UP_MS = 5 * 60_000;
export const OPS_ENROL_TTL_MS = 72 * 60 * 60_000;

export type TOperator = { id: string; email: string; locale: 'ru' | 'en'; roles: string[]; permissions: string[] };
export type TOpsSession = { id: string; operator: TOperator; secondFactorAt: Date };

/** The actor an operator's rows in the audit trail carry. */
export const operatorActor = (operator: Pick<TOperator, 'id' | 'email'>) => `operator:${operator.id}:${operator.email}`;

export async function knownRoles(db: Queryable): Promise<string[]> {
  return (await db.query<{ name: string }>('SELECT name FROM ops_roles ORDER BY name')).map((row) => row.name);
}

/** A new operator with these roles, and the token of its one-time enrolment link. */
export async function createOperator(db: Db, input: { email: string; roles: string[]; actor: string; now: Date }): Promise<{ email: string; token: string }> {
  const email = input.email.trim().toLowerCase();
  const known = await knownRoles(db);
  const unknown = input.roles.filter((role) => !known.includes(role));
  if (unknown.length || input.roles.length === 0) throw new Error(`roles: one or more of ${known.join(', ')} (unknown: ${unknown.join(', ') || 'none given'})`);
  const token = newToken();
  await db.transaction(async (tx) => {
    const [row] = await tx.query<{ id: string }>(
      `INSERT INTO operators (email, enrol_token_hash, enrol_expires_at, created_at) VALUES ($1, $2, $3, $4)
       ON CONFLICT (email) DO NOTHING RETURNING id::text`,
      [email, hashToken(token), new Date(input.now.getTime() + OPS_ENROL_TTL_MS), input.now],
    );
    if (!row) throw new Error(`an operator ${email} exists already`);
    for (const role of input.roles) await tx.query('INSERT INTO operator_roles (operator_id, role) VALUES ($1, $2)', [row.id, role]);
    await writeAudit(tx, { actor: input.actor, action: 'operators.create', subject: `operator:${row.id}`, after: { email, roles: input.roles } });
  });
  return { email, token };
}

type TEnrolRow = { id: string; email: string; enrolled_at: Date | null; enrol_expires_at: Date | null; disabled_at: Date | null; totp_secret: string | null };

async function enrolmentOf(tx: Queryable, token: string, now: Date): Promise<TEnrolRow> {
  const [row] = isTokenShaped(token)
    ? await tx.query<TEnrolRow>(
        'SELECT id::text, email, enrolled_at, enrol_expires_at, disabled_at, totp_secret FROM operators WHERE enrol_token_hash = $1 FOR UPDATE',
        [hashToken(token)],
      )
    : [];
  if (!row || row.enrolled_at !== null || row.disabled_at !== null || (row.enrol_expires_at && row.enrol_expires_at <= now))
    throw new AppError('invalid_token');
  return row;
}

/** Step one of an enrolment: a fresh TOTP secret for the operator's authenticator app. */
export async function startEnrolment(db: Db, token: string, now: Date): Promise<{ email: string; secret: string; otpauth_uri: string }> {
  return db.transaction(async (tx) => {
    const row = await enrolmentOf(tx, token, now);
    const secret = newTotpSecret();
    await tx.query('UPDATE operators SET totp_secret = $2, totp_last_step = 0 WHERE id = $1', [row.id, secret]);
    return { email: row.email, secret, otpauth_uri: otpauthUri(secret, row.email, 'Obmen ops') };
  });
}

/** Step two: a password and a code of the new secret; the link is spent. */
/** The operator's language starts as the enrolment page's (changed later on /ops). */
export async function finishEnrolment(db: Db, input: { token: string; password: string; code: string; now: Date; locale: 'ru' | 'en' }): Promise<void> {
  const hash = await hashPassword(input.password);
  await db.transaction(async (tx) => {
    const row = await enrolmentOf(tx, input.token, input.now);
    const step = row.totp_secret === null ? null : matchTotp(row.totp_secret, input.code, input.now.getTime(), 0);
    if (step === null) throw new AppError('second_factor_invalid');
    await tx.query(
      `UPDATE operators SET password_hash = $2, totp_last_step = $3, enrolled_at = $4, locale = $5, enrol_token_hash = NULL, enrol_expires_at = NULL WHERE id = $1`,
      [row.id, hash, step, input.now, input.locale],
    );
    await writeAudit(tx, { actor: `operator:${row.id}:${row.email}`, action: 'operators.enrol', subject: `operator:${row.id}` });
  });
}

type TSignInRow = { id: string; email: string; password_hash: string | null; totp_secret: string | null; totp_last_step: string };

/** An operator passkey's assertion at sign-in: theirs (the password named them), or null. */
async function signInPasskey(db: Db, operatorId: string, assertion: string, now: Date): Promise<string | null> {
  try {
    return (await verifyPasskeyAssertion(db, assertion, operatorId, now, 'operator', 'sign_in')).id;
  } catch (err) {
    if (err instanceof AppError && err.code === 'passkey_invalid') return null;
    throw err;
  }
}

/**
 * Password and second factor together (a TOTP code, or an assertion of one of the operator's
 * passkeys); one answer for every failure (no telling which was wrong, or whether the address is
 * an operator's). Each attempt is audited, with the factor it offered.
 */
export async function signIn(
  db: Db,
  input: { email: string; password: string; code?: string | undefined; passkey?: string | undefined; now: Date; ip?: string },
): Promise<string> {
  const email = input.email.trim().toLowerCase();
  const [row] = await db.query<TSignInRow>(
    `SELECT id::text, email, password_hash, totp_secret, totp_last_step::text FROM operators
     WHERE email = $1 AND enrolled_at IS NOT NULL AND disabled_at IS NULL`,
    [email],
  );
  const passwordOk = await verifyPassword(input.password, row?.password_hash ?? null);
  const factor = input.passkey ? 'passkey' : 'totp';
  let step: number | null = null;
  let passkey: string | null = null;
  if (row && passwordOk) {
    if (input.passkey) passkey = await signInPasskey(db, row.id, input.passkey, input.now);
    else if (row.totp_secret && input.code) step = matchTotp(row.totp_secret, input.code, input.now.getTime(), Number(row.totp_last_step));
  }
  if (!row || (step === null && passkey === null)) {
    await writeAudit(db, {
      actor: row ? operatorActor(row) : `unknown:${email.slice(0, 100)}`,
      action: 'ops.sign_in',
      outcome: 'denied',
      ip: input.ip ?? null,
      details: { second_factor: factor },
    });
    throw new AppError('ops_sign_in_failed');
  }
  const token = newToken();
  await db.transaction(async (tx) => {
    // A code counts once: a step at or before the last one used never matches again (a passkey's
    // challenge and counter were spent by its check).
    const [used] =
      step === null ? [row] : await tx.query('UPDATE operators SET totp_last_step = $2 WHERE id = $1 AND totp_last_step < $2 RETURNING id', [row.id, step]);
    if (!used) throw new AppError('ops_sign_in_failed');
    await tx.query(`INSERT INTO ops_sessions (operator_id, token_hash, created_at, last_seen_at, second_factor_at, ip) VALUES ($1, $2, $3, $3, $3, $4)`, [
      row.id,
      hashToken(token),
      input.now,
      input.ip ?? null,
    ]);
    await writeAudit(tx, {
      actor: operatorActor(row),
      action: 'ops.sign_in',
      ip: input.ip ?? null,
      details: passkey === null ? { second_factor: factor } : { second_factor: factor, passkey },
    });
  });
  return token;
}

type TSessionRow = { session_id: string; id: string; email: string; locale: 'ru' | 'en'; created_at: Date; last_seen_at: Date; second_factor_at: Date };

/** The live session of a token (not revoked, idle and age within bounds), touched; else null. */
export async function findOpsSession(db: Queryable, token: string, now: Date): Promise<TOpsSession | null> {
  if (!isTokenShaped(token)) return null;
  const [row] = await db.query<TSessionRow>(
    `SELECT s.id::text AS session_id, o.id::text, o.email, o.locale, s.created_at, s.last_seen_at, s.second_factor_at
     FROM ops_sessions s JOIN operators o ON o.id = s.operator_id
     WHERE s.token_hash = $1 AND s.revoked_at IS NULL AND o.disabled_at IS NULL`,
    [hashToken(token)],
  );
  if (!row) return null;
  const at = now.getTime();
  if (at - row.last_seen_at.getTime() > OPS_IDLE_MS || at - row.created_at.getTime() > OPS_ABSOLUTE_MS) return null;
  await db.query('UPDATE ops_sessions SET last_seen_at = $2 WHERE id = $1', [row.session_id, now]);
  return { id: row.session_id, secondFactorAt: row.second_factor_at, operator: await withGrants(db, row) };
}

/** An operator with their roles and the permissions those roles grant. */
async function withGrants(db: Queryable, row: Pick<TOperator, 'id' | 'email' | 'locale'>): Promise<TOperator> {
  const grants = await db.query<{ role: string; permission: string | null }>(
    `SELECT r.role, p.permission FROM operator_roles r LEFT JOIN ops_role_permissions p ON p.role = r.role WHERE r.operator_id = $1`,
    [row.id],
  );
  const roles = [...new Set(grants.map((grant) => grant.role))].sort();
  const permissions = [...new Set(grants.flatMap((grant) => (grant.permission ? [grant.permission] : [])))].sort();
  return { id: row.id, email: row.email, locale: row.locale, roles, permissions };
}

/**
 * An enrolled, enabled operator by e-mail, with their permissions: who a command acts as when it
 * proposes or decides a four-eyes request (the CLI's `--as <email>`); else null.
 */
export async function activeOperatorByEmail(db: Queryable, email: string): Promise<TOperator | null> {
  const [row] = await db.query<Pick<TOperator, 'id' | 'email' | 'locale'>>(
    'SELECT id::text, email, locale FROM operators WHERE email = lower($1) AND enrolled_at IS NOT NULL AND disabled_at IS NULL',
    [email.trim()],
  );
  return row ? withGrants(db, row) : null;
}

/** Which of these sessions are live now (not revoked, idle and age within bounds), without touching them. */
export async function liveOpsSessions(db: Queryable, sessionIds: string[], now: Date): Promise<Set<string>> {
  if (!sessionIds.length) return new Set();
  const rows = await db.query<{ id: string }>(
    `SELECT s.id::text FROM ops_sessions s JOIN operators o ON o.id = s.operator_id
      WHERE s.id = ANY($1::bigint[]) AND s.revoked_at IS NULL AND o.disabled_at IS NULL
        AND s.last_seen_at > $2::timestamptz - make_interval(secs => $3) AND s.created_at > $2::timestamptz - make_interval(secs => $4)`,
    [sessionIds, now, OPS_IDLE_MS / 1000, OPS_ABSOLUTE_MS / 1000],
  );
  return new Set(rows.map((row) => row.id));
}

/** The second factor again: what needs a fresh one is open for OPS_STEP_UP_MS. */
export async function stepUp(db: Db, session: TOpsSession, code: string, now: Date): Promise<void> {
  await db.transaction(async (tx) => {
    const [row] = await tx.query<{ totp_secret: string; totp_last_step: string }>(
      'SELECT totp_secret, totp_last_step::text FROM operators WHERE id = $1 FOR UPDATE',
      [session.operator.id],
    );
    const step = row ? matchTotp(row.totp_secret, code, now.getTime(), Number(row.totp_last_step)) : null;
    if (step === null) throw new AppError('second_factor_invalid');
    await tx.query('UPDATE operators SET totp_last_step = $2 WHERE id = $1', [session.operator.id, step]);
    await tx.query('UPDATE ops_sessions SET second_factor_at = $2 WHERE id = $1', [session.id, now]);
    await writeAudit(tx, { actor: operatorActor(session.operator), action: 'ops.step_up' });
  });
}

/** The operator's language: the pages' after sign-in and the core's messages to them. */
export async function setOperatorLocale(db: Queryable, session: TOpsSession, locale: 'ru' | 'en'): Promise<void> {
  await db.query('UPDATE operators SET locale = $2 WHERE id = $1', [session.operator.id, locale]);
}

export async function signOut(db: Queryable, session: TOpsSession, now: Date): Promise<void> {
  await db.query('UPDATE ops_sessions SET revoked_at = $2 WHERE id = $1 AND revoked_at IS NULL', [session.id, now]);
}

export async function disableOperator(db: Db, email: string, actor: string, now: Date): Promise<{ email: string; disabled: boolean }> {
  return db.transaction(async (tx) => {
    const [row] = await tx.query<{ id: string }>('UPDATE operators SET disabled_at = $2 WHERE email = $1 AND disabled_at IS NULL RETURNING id::text', [
      email.trim().toLowerCase(),
      now,
    ]);
    if (!row) throw new Error(`no active operator ${email}`);
    await tx.query('UPDATE ops_sessions SET revoked_at = $2 WHERE operator_id = $1 AND revoked_at IS NULL', [row.id, now]);
    await writeAudit(tx, { actor, action: 'operators.disable', subject: `operator:${row.id}` });
    return { email, disabled: true };
  });
}

export async function listOperators(db: Queryable) {
  return db.query<{ email: string; roles: string[]; enrolled: boolean; disabled: boolean; created_at: string }>(
    `SELECT o.email, coalesce(array_agg(r.role ORDER BY r.role) FILTER (WHERE r.role IS NOT NULL), '{}') AS roles,
       o.enrolled_at IS NOT NULL AS enrolled, o.disabled_at IS NOT NULL AS disabled, iso_time(o.created_at) AS created_at
     FROM operators o LEFT JOIN operator_roles r ON r.operator_id = o.id GROUP BY o.id ORDER BY o.email`,
  );
}

/** Development's operator with every role, so a newcomer can open /ops at once (never in production). */
export const DEMO_OPERATOR = { email: 'ops@obmen.local', password: 'obmen-ops-2026' } as const;

/** The demo operator, enrolled; its TOTP secret for an authenticator app (kept across starts). */
export async function seedDemoOperator(db: Db, now: Date): Promise<{ email: string; password: string; totp_secret: string }> {
  const [known] = await db.query<{ totp_secret: string }>('SELECT totp_secret FROM operators WHERE email = $1 AND enrolled_at IS NOT NULL', [
    DEMO_OPERATOR.email,
  ]);
  if (known) return { ...DEMO_OPERATOR, totp_secret: known.totp_secret };
  const secret = newTotpSecret();
  const hash = await hashPassword(DEMO_OPERATOR.password);
  await db.transaction(async (tx) => {
    const [row] = await tx.query<{ id: string }>(
      `INSERT INTO operators (email, password_hash, totp_secret, enrolled_at, created_at) VALUES ($1, $2, $3, $4, $4) RETURNING id::text`,
      [DEMO_OPERATOR.email, hash, secret, now],
    );
    await tx.query('INSERT INTO operator_roles (operator_id, role) SELECT $1, name FROM ops_roles', [row!.id]);
    await writeAudit(tx, {
      actor: 'cli:seed',
      action: 'operators.create',
      subject: `operator:${row!.id}`,
      after: { email: DEMO_OPERATOR.email, roles: 'all' },
    });
  });
  return { ...DEMO_OPERATOR, totp_secret: secret };
}
