import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { build, ENGINES } from '../../helpers.ts';
import { call, freshEmail, mailsTo, sessionToken, signUp } from '../../auth-helpers.ts';
import { countryOf, deviceKey, networkKey } from '../../../src/domains/security/places.ts';

const PUBLIC_URL = 'https://obmen.test';
const PASSWORD = 'Correct-Horse-Battery-42';
const CHROME = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
const CHROME_NEWER = CHROME.replace('Chrome/131', 'Chrome/132');
const FIREFOX = 'Mozilla/5.0 (X11; Linux x86_64; rv:130.0) Gecko/20100101 Firefox/130.0';

describe('where a sign-in came from', () => {
  it('keys a device without versions and a network by its /24 or /48', () => {
    expect(deviceKey(CHROME)).toBe('Chrome · Windows');
    expect(deviceKey(CHROME_NEWER)).toBe('Chrome · Windows');
    expect(deviceKey(undefined)).toBe('unknown');
    expect(networkKey('203.0.113.77')).toBe('203.0.113.0/24');
    expect(networkKey('::ffff:203.0.113.77')).toBe('203.0.113.0/24');
    expect(networkKey('2001:db8:abcd:12::1')).toBe('2001:db8:abcd::/48');
    expect(networkKey('2001:db8::1')).toBe('2001:db8:0::/48');
    expect(networkKey('not an ip')).toBe('unknown');
  });

  it("names an IPv4 address's country from the NRO data; private ones are local; others unknown", async () => {
    expect(await countryOf('8.8.8.8')).toBe('US');
    expect(await countryOf('77.88.8.8')).toBe('RU');
    expect(await countryOf('192.168.1.5')).toBe('local');
    expect(await countryOf('127.0.0.1')).toBe('local');
    expect(await countryOf('2001:db8::1')).toBeNull();
  });
});

describe.each(ENGINES)('new-device sign-in mails and "this wasn\'t me" (%s)', (engine) => {
  let ctx: Awaited<ReturnType<typeof build>>;
  const email = freshEmail('device');

  beforeAll(async () => {
    ctx = await build(engine, { PUBLIC_URL });
  });
  afterAll(() => ctx.close());

  const signIn = (userAgent: string, ip: string) =>
    call(ctx.app, '/api/auth/login_by_password', { payload: { email, password: PASSWORD }, ip, locale: 'en', headers: { 'user-agent': userAgent } });
  const alerts = async () => (await mailsTo(ctx.db, email)).filter((mail) => mail.kind === 'sign_in_new_device');

  it('mails only for a device or network the account has not signed in from before, never for the first sign-in', async () => {
    // Sign-up's confirmation is the first sign-in: its place becomes known, nothing is mailed.
    await signUp(ctx.app, ctx.db, email, PASSWORD, 'en');
    expect(await alerts()).toEqual([]);
    // The confirmation came from a random address: the first password sign-in is a new network.
    expect((await signIn(CHROME, '203.0.113.7')).statusCode).toBe(200);
    const before = (await alerts()).length;
    expect((await signIn(CHROME, '203.0.113.99')).statusCode).toBe(200);
    expect((await signIn(CHROME_NEWER, '203.0.113.8')).statusCode).toBe(200);
    expect(await alerts()).toHaveLength(before);

    expect((await signIn(FIREFOX, '203.0.113.7')).statusCode).toBe(200);
    const [device] = (await alerts()).slice(before);
    expect(device!.subject).toBe('A sign-in to Obmen from a new device');
    expect(device!.text_body).toContain('Device: Firefox 130 · Linux');
    expect(device!.text_body).toContain('IP address: 203.0.113.7');
    expect(device!.text_body).toMatch(/When: .+ UTC/);

    expect((await signIn(FIREFOX, '77.88.8.8')).statusCode).toBe(200);
    const network = (await alerts()).at(-1)!;
    expect(network.text_body).toContain('IP address: 77.88.8.8 (Russia)');
    expect(await alerts()).toHaveLength(before + 2);
  });

  it('"this wasn\'t me" ends every session, holds withdrawals, opens a password reset, and works once', async () => {
    const session = sessionToken(await signIn(CHROME, '198.51.100.4'));
    expect((await call(ctx.app, '/api/auth/check', { token: session })).json().user.is_authenticated).toBe(true);
    const mail = (await alerts()).at(-1)!;
    const token = /sign-in-report\?t=([A-Za-z0-9_-]{43})/.exec(mail.text_body)![1]!;
    expect(mail.text_body).toContain(`${PUBLIC_URL}/settings/sign-in-report?t=${token}`);

    const reported = await call(ctx.app, `/api/auth/sign_in/report/${token}`, { payload: {}, locale: 'en' });
    expect(reported.statusCode, reported.body).toBe(200);
    const body = reported.json();
    expect(body).toMatchObject({ status: 'ok', message: expect.stringContaining('Every session has ended') });
    expect((await call(ctx.app, '/api/auth/check', { token: session })).json().user.is_authenticated).toBe(false);
    const [held] = await ctx.db.query<{ held: boolean }>(`SELECT security_changed_at > now() - interval '1 minute' AS held FROM users WHERE email = $1`, [
      email,
    ]);
    expect(held!.held).toBe(true);
    const reset = /token=([A-Za-z0-9_-]{43})$/.exec(body.reset_url)![1]!;
    expect(body.reset_url).toBe(`/reset-password?token=${reset}`);
    expect((await call(ctx.app, `/api/auth/reset/${reset}`)).statusCode).toBe(200);

    const again = await call(ctx.app, `/api/auth/sign_in/report/${token}`, { payload: {}, locale: 'en' });
    expect(again.statusCode).toBe(400);
    expect(again.json().code).toBe('invalid_token');
    expect((await call(ctx.app, '/api/auth/sign_in/report/short', { payload: {} })).json().code).toBe('invalid_token');
  });
});
