import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startThrowawayPostgres, createDatabase, type TThrowawayPostgres } from '../pg-throwaway.ts';
import { startCore, type TCoreProcess } from '../core-process.ts';

/*
 * With its database down, the core answers every request 503 JSON with
 * Retry-After, localized, and logs one line when the outage starts and one when it ends, not a
 * stack per request. The real core process on a throw-away PostgreSQL that the test stops and
 * starts (never the shared server).
 */
const WARN = 40;

describe.skipIf(!process.env.TEST_DATABASE_URL)('the core with its database down (throw-away PostgreSQL)', () => {
  let server: TThrowawayPostgres | null;
  let core: TCoreProcess;

  beforeAll(async () => {
    server = await startThrowawayPostgres();
    if (!server) return;
    const url = await createDatabase(server.url, 'outage');
    core = await startCore({ DATABASE_URL: url, DB_CONNECT_TIMEOUT_MS: '2000' });
  }, 120_000);
  afterAll(async () => {
    await core?.stop();
    server?.dispose();
  });

  const get = (path: string, locale: 'ru' | 'en') => fetch(`${core.url}${path}`, { headers: { 'x-obmen-locale': locale } });
  const post = (path: string, locale: 'ru' | 'en') =>
    fetch(`${core.url}${path}`, {
      method: 'POST',
      headers: { 'x-obmen-locale': locale, 'content-type': 'application/json', authorization: `Bearer ${'a'.repeat(43)}`, 'idempotency-key': 'k1' },
      body: JSON.stringify({ account_id: '12345674', currency: 'USDT', amount: '1' }),
    });

  it('answers 503 database_unavailable with Retry-After during the outage, logs it once, and recovers', async (test) => {
    if (!server) return test.skip('no PostgreSQL server binaries to run a throw-away server');
    expect((await get('/api/health', 'en')).status).toBe(200);
    const warningsBefore = core.lines.filter((line) => line.level >= WARN).length;

    server.stop();
    const answers = await Promise.all(
      Array.from({ length: 60 }, (_, i) => {
        const locale = i % 2 ? 'en' : 'ru';
        return [() => get('/api/health', locale), () => get('/api/auth/check', locale), () => post('/api/transfer', locale)][i % 3]!();
      }),
    );
    for (const [i, res] of answers.entries()) {
      expect(res.status).toBe(503);
      expect(res.headers.get('retry-after')).toBe('5');
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      expect(await res.json()).toEqual({
        status: 'error',
        code: 'database_unavailable',
        message:
          i % 2
            ? 'The service is temporarily unavailable. Please try again in a few seconds.'
            : 'Сервис временно недоступен. Повторите попытку через несколько секунд.',
      });
    }
    const warnings = core.lines.filter((line) => line.level >= WARN).slice(warningsBefore);
    expect(warnings.map((line) => line.msg)).toEqual(['database unavailable: answering 503 until it is back']);
    expect(core.lines.some((line) => line.msg === 'request failed')).toBe(false);

    server.start();
    const restarted = Date.now();
    let health = await get('/api/health', 'en').catch(() => null);
    while (health?.status !== 200 && Date.now() - restarted < 10_000) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      health = await get('/api/health', 'en').catch(() => null);
    }
    const recoveryMs = Date.now() - restarted;
    console.log(`[db-outage] ${answers.length} requests answered 503 during the outage; healthy again ${recoveryMs} ms after the database was back`);
    expect(health?.status).toBe(200);
    expect((await get('/api/auth/check', 'en')).status).toBe(200);
    expect(core.lines.filter((line) => line.msg === 'database available again')).toHaveLength(1);
    expect(core.lines.filter((line) => line.level >= WARN).slice(warningsBefore)).toHaveLength(1);
  }, 120_000);
});
