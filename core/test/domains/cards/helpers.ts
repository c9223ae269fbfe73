import { randomBytes, randomUUID } from 'node:crypto';
import { IDEMPOTENCY_HEADER, WEBHOOK_SIGNATURE_HEADER, type TCardOrder } from '@obmen/shared';
import { expect } from 'vitest';
import type { build } from '../../helpers.ts';
import { call } from '../../auth-helpers.ts';
import { testConfig } from '../../helpers.ts';
import { openDocumentCipher } from '../../../src/domains/verification/cipher.ts';
import { loadCardIssuers } from '../../../src/providers/index.ts';
import { advanceSandboxIssuer, type sandboxIssuer } from '../../../src/providers/sandbox/issuer.ts';
import { createProduct, enableProduct, type TProductInput } from '../../../src/domains/cards/catalogue.ts';
import type { Queryable } from '../../../src/db/index.ts';

/** What card tests build the core with: their own secret and document key. */
export const CARD_SECRET = 'test-sandbox-card-issuer-secret-0123456789';
export const CARD_OVERRIDES = { CARD_ISSUER_SECRET_SANDBOX: CARD_SECRET, DOCUMENT_KEY: randomBytes(32).toString('base64') };

export type TCtx = Awaited<ReturnType<typeof build>>;

/** A money POST with a fresh Idempotency-Key (or the one given). */
export function post(ctx: TCtx, url: string, token: string, payload: object, options: { key?: string; locale?: 'ru' | 'en' } = {}) {
  return call(ctx.app, url, {
    token,
    payload,
    headers: { [IDEMPOTENCY_HEADER]: options.key ?? randomUUID() },
    ...(options.locale ? { locale: options.locale } : {}),
  });
}

export async function verifyUser(db: Queryable, userId: string): Promise<void> {
  await db.query('UPDATE users SET verification_level = 1 WHERE id = $1', [userId]);
}

/** A product for tests, enabled. */
export async function makeProduct(db: Queryable, input: Partial<TProductInput> & { id: string }): Promise<void> {
  await createProduct(db, {
    kind: 'virtual',
    name_ru: 'Тестовая',
    name_en: 'Test card',
    currencies: 'USD,EUR',
    fee_currency: 'USD',
    issue_fee: '0',
    monthly_fee: '0',
    ...input,
  });
  await enableProduct(db, input.id, true);
}

/** The sandbox issuer with the test secret and key, delivering through the HTTP callback route. */
export function sandboxOf(ctx: TCtx, overrides: Record<string, string>) {
  const config = testConfig(overrides);
  const sandbox = loadCardIssuers(
    config,
    openDocumentCipher(config, () => {}),
  ).get('sandbox') as ReturnType<typeof sandboxIssuer>;
  return {
    sandbox,
    /** Runs the sandbox's steps due at `at`; returns the callbacks' results. */
    async advance(at: Date): Promise<string[]> {
      const results: string[] = [];
      await advanceSandboxIssuer(
        ctx.db,
        sandbox,
        async (rawBody, signature) => {
          const res = await ctx.app.inject({
            method: 'POST',
            url: '/api/card/issuer/sandbox/callback',
            payload: rawBody,
            headers: { 'content-type': 'application/json', [WEBHOOK_SIGNATURE_HEADER]: signature },
          });
          expect(res.statusCode, res.body).toBe(200);
          results.push(res.json().result);
        },
        at,
      );
      return results;
    },
  };
}

export async function placeOrder(ctx: TCtx, token: string, body: object): Promise<TCardOrder> {
  const res = await post(ctx, '/api/card/order', token, body);
  expect(res.statusCode, res.body).toBe(200);
  return res.json().order as TCardOrder;
}

export async function cardStatus(db: Queryable, id: string): Promise<string> {
  const [row] = await db.query<{ status: string }>('SELECT status FROM cards WHERE public_id::text = $1', [id]);
  return row!.status;
}

export async function walletMinor(db: Queryable, userId: string, currency: string): Promise<bigint> {
  const [row] = await db.query<{ balance: string }>('SELECT balance::text AS balance FROM ledger_accounts WHERE user_id = $1 AND currency = $2', [
    userId,
    currency,
  ]);
  return BigInt(row?.balance ?? '0');
}
