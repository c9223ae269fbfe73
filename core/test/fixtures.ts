import { randomBytes, randomInt } from 'node:crypto';
import { makeAccountId } from '@obmen/shared';
import type { Queryable } from '../src/db/index.ts';
import { createSession } from '../src/domains/auth/sessions.ts';
import type { TPairTerms } from '../src/domains/rates/quote.ts';

/*
 * Users with money for tests and the bench: no password (no scrypt cost), a live session,
 * balances credited through the ledger against the house's adjustment account. Not used by
 * the running app.
 */

export type TFixtureUser = { id: string; accountId: number; email: string; token: string };

export async function createFixtureUser(db: Queryable, options: { email?: string; firstName?: string; lastName?: string } = {}): Promise<TFixtureUser> {
  const email = options.email ?? `user-${randomBytes(6).toString('hex')}@test.local`;
  for (let attempt = 0; attempt < 20; attempt++) {
    const accountId = makeAccountId(randomInt(1_000_000, 10_000_000));
    const [row] = await db.query<{ id: string }>(
      `INSERT INTO users (account_id, email, locale, first_name, last_name, email_confirmed_at)
       VALUES ($1, $2, 'en', $3, $4, now()) ON CONFLICT DO NOTHING RETURNING id::text AS id`,
      [accountId, email, options.firstName ?? null, options.lastName ?? null],
    );
    if (row) return { id: row.id, accountId, email, token: await createSession(db, row.id) };
  }
  throw new Error('could not allocate an account id');
}

/** Credits `amount` minor units to a user through the ledger. */
export async function fund(db: Queryable, userId: string, currency: string, amount: bigint, memo = 'fixture'): Promise<void> {
  await db.query(
    `SELECT ledger_post('adjustment', ARRAY[ledger_user_account($1, $2), ledger_system_account('adjustment', $2)],
       ARRAY[$3::numeric, -$3::numeric], $4, 'seed')`,
    [userId, currency, amount.toString(), memo],
  );
}

/** A pair's terms for the quote functions: USDT → BTC at a table rate, 0.5% spread, 0.1% fee; override what a test is about. */
export function pairTerms(overrides: Partial<TPairTerms> = {}): TPairTerms {
  return {
    src: 'USDT',
    dst: 'BTC',
    rate: '0.0000153846',
    spread: '0.005',
    feePercent: '0.001',
    feeFixed: 0n,
    min: 1n,
    max: null,
    enabled: true,
    source: 'table',
    ...overrides,
  };
}

/** The identity document test users submit (a specimen's data; the number as typed, with a space and a dash). */
export const SPECIMEN_DOCUMENT = {
  number: 'AB 123-4567',
  issuing_country: 'de',
  issue_date: '2020-01-15',
  expiry_date: '2030-01-14',
  first_name: 'Anna',
  last_name: 'Schmidt',
  birth_date: '1990-05-01',
};
