import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requireRealSiteBuild } from './helpers.ts';
import { rawRequest } from '../../core/test/raw-http.ts';
import { buildBff, startRealCore } from './session-helpers.ts';
import { DEMO, lastMailTo, linkToken } from '../../core/test/auth-helpers.ts';

const ATTACKER = '203.0.113.66';
const VICTIM = '198.51.100.7';
/** The core's token_ip limit is 30 per 15 minutes: one more than that. */
const ATTEMPTS = 31;

/**
 * Page renders call the core with the visitor's address: a stranger who spends his own per-IP
 * budget of reset-link checks does not spend everyone's (they all shared the BFF's 127.0.0.1).
 */
describe('page renders pass the client address to the core (real sockets, real core)', () => {
  let core: Awaited<ReturnType<typeof startRealCore>>;
  let bff: Awaited<ReturnType<typeof buildBff>>;
  let origin: string;
  beforeAll(async () => {
    core = await startRealCore();
    // Two clients on two addresses, as a load balancer the BFF trusts reports them.
    bff = await buildBff(core.url, { TRUST_PROXY: '127.0.0.1', SITE_DIST: requireRealSiteBuild() }, { trustProxy: '127.0.0.1' });
    origin = await bff.app.listen({ host: '127.0.0.1', port: 0 });
  });
  afterAll(async () => {
    await bff?.close();
    await core?.close();
  });

  const resetPage = (token: string, ip: string) => rawRequest(origin, `/reset-password?token=${token}`, { headers: { 'x-forwarded-for': ip } });

  it('one client exhausting its reset-link checks leaves another client’s valid link working', async () => {
    const asked = await rawRequest(origin, '/api/auth/reset', {
      method: 'POST',
      headers: { 'x-forwarded-for': VICTIM, 'content-type': 'application/json' },
      body: JSON.stringify({ email: DEMO.email }),
    });
    expect(asked.status).toBe(200);
    const token = linkToken(await lastMailTo(core.db, DEMO.email));

    for (let i = 0; i < ATTEMPTS; i++) expect((await resetPage('x'.repeat(43), ATTACKER)).body).toContain('data-testid="form-error"');
    // The attacker's own budget is spent: even the valid link shows as invalid to him...
    expect((await resetPage(token, ATTACKER)).body).toContain('data-testid="form-error"');
    // ...while the victim still gets the form.
    const victim = await resetPage(token, VICTIM);
    expect(victim.status).toBe(200);
    expect(victim.body).not.toContain('data-testid="form-error"');
    expect(victim.body).toContain('AuthForm');
  });
});
