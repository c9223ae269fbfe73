import { afterEach, describe, expect, it } from 'vitest';
import { RATE_LIMITS, consumeRateLimit } from '../src/rate-limit.ts';
import { build } from './helpers.ts';

describe('rate limits', () => {
  let close: (() => Promise<void>) | undefined;
  afterEach(async () => {
    await close?.();
    close = undefined;
  });

  /** How many hits on one key pass before the first 429. */
  async function allowed(overrides: Record<string, string>): Promise<number> {
    const built = await build('pglite', overrides);
    close = built.close;
    for (let hit = 1; ; hit++) {
      try {
        await consumeRateLimit(built.db, 'signup_ip', '192.0.2.7');
      } catch (err) {
        expect((err as { code?: string }).code).toBe('rate_limited');
        return hit - 1;
      }
    }
  }

  it('RATE_LIMIT_FACTOR multiplies each maximum; the default keeps the table', async () => {
    expect(await allowed({})).toBe(RATE_LIMITS.signup_ip.max);
    await close?.();
    close = undefined;
    expect(await allowed({ RATE_LIMIT_FACTOR: '3' })).toBe(3 * RATE_LIMITS.signup_ip.max);
  });
});
