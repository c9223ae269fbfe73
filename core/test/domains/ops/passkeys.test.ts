import { describe, expect, it } from 'vitest';
import { OPS_TOKEN_HEADER } from '@obmen/shared';
import { ENGINES } from '../../helpers.ts';
import { call } from '../../auth-helpers.ts';
import { asOperator, OPERATOR_PASSWORD, operatorWith, stepUpOperator, useOpsApp, type TTestOperator } from '../../ops-helpers.ts';
import { SoftAuthenticator } from '../../passkey-authenticator.ts';
import { verifyAuditChain } from '../../../src/domains/audit/service.ts';
import { OPS_STEP_UP_MS } from '../../../src/domains/ops/service.ts';

const ORIGIN = 'http://localhost:3000';

describe.each(ENGINES)("operators' passkeys on %s", (engine) => {
  const ctx = useOpsApp(engine);
  const { clock } = ctx;
  const send = (url: string, operator: TTestOperator | null, payload?: object) =>
    call(ctx.app, url, { ...(payload ? { payload } : {}), ...(operator ? asOperator(operator.token) : {}), locale: 'en' });
  const audit = async (operator: TTestOperator, action: string) =>
    ctx.db.query<{ outcome: string; details: Record<string, unknown> }>(
      'SELECT outcome, details FROM operator_audit WHERE operator LIKE $1 AND action = $2 ORDER BY id',
      [`%:${operator.email}`, action],
    );
  /** Enrols a software passkey for the operator through the API. */
  const enrol = async (operator: TTestOperator, name = 'Laptop') => {
    const key = new SoftAuthenticator(ORIGIN);
    const options = await send('/api/ops/passkeys/options', operator, {});
    expect(options.statusCode, options.body).toBe(200);
    expect(options.json().options).toMatchObject({ rp: { id: 'localhost' }, authenticatorSelection: { residentKey: 'required' } });
    const added = await send('/api/ops/passkeys', operator, { name, credential: key.register(options.json().options) });
    expect(added.statusCode, added.body).toBe(200);
    return { key, passkeys: added.json().passkeys as Array<{ id: string; name: string }> };
  };
  const signIn = async (email: string, key: SoftAuthenticator, password = OPERATOR_PASSWORD) => {
    const options = (await send('/api/ops/passkey/options', null, {})).json().options;
    // Discoverable: the options name no operator, so they tell nobody who is one.
    expect(options.allowCredentials).toEqual([]);
    return send('/api/ops/sign-in', null, { email, password, passkey: key.assert(options) });
  };

  it('an operator enrols a passkey (audited), then signs in with the password and it in place of the code', async () => {
    const op = await operatorWith(ctx, clock, ['support']);
    expect((await send('/api/ops/passkeys', op)).json()).toEqual({ status: 'ok', passkeys: [] });
    const { key, passkeys } = await enrol(op);
    expect(passkeys).toEqual([{ id: expect.any(String), name: 'Laptop', created_at: clock.now().toISOString(), last_used_at: null }]);
    expect(await audit(op, 'ops.passkey_add')).toEqual([{ outcome: 'done', details: { passkey: passkeys[0]!.id, name: 'Laptop' } }]);

    const signedIn = await signIn(op.email, key);
    expect(signedIn.statusCode, signedIn.body).toBe(200);
    expect(signedIn.json().operator).toMatchObject({ email: op.email, roles: ['support'] });
    const token = signedIn.headers[OPS_TOKEN_HEADER] as string;
    expect((await send('/api/ops/me', { ...op, token })).statusCode).toBe(200);
    expect((await audit(op, 'ops.sign_in')).at(-1)).toEqual({ outcome: 'done', details: { second_factor: 'passkey', passkey: passkeys[0]!.id } });
    expect((await send('/api/ops/passkeys', { ...op, token })).json().passkeys[0].last_used_at).toBe(clock.now().toISOString());

    // The same assertion again, or a wrong password with a fresh one: the one refusal, audited.
    const options = (await send('/api/ops/passkey/options', null, {})).json().options;
    const assertion = key.assert(options);
    expect((await send('/api/ops/sign-in', null, { email: op.email, password: OPERATOR_PASSWORD, passkey: assertion })).statusCode).toBe(200);
    const replayed = await send('/api/ops/sign-in', null, { email: op.email, password: OPERATOR_PASSWORD, passkey: assertion });
    const wrongPassword = await signIn(op.email, key, 'not the password at all');
    for (const res of [replayed, wrongPassword]) expect({ status: res.statusCode, code: res.json().code }).toEqual({ status: 401, code: 'ops_sign_in_failed' });
    expect((await audit(op, 'ops.sign_in')).filter((row) => row.outcome === 'denied')).toEqual([
      { outcome: 'denied', details: { second_factor: 'passkey' } },
      { outcome: 'denied', details: { second_factor: 'passkey' } },
    ]);
    expect(await verifyAuditChain(ctx.db)).toMatchObject({ intact: true });
  });

  it("another operator's passkey, a customer's passkey challenge and a missing factor are refused", async () => {
    const ann = await operatorWith(ctx, clock, ['support']);
    const bob = await operatorWith(ctx, clock, ['support']);
    const { key: bobsKey } = await enrol(bob);
    const asAnn = await signIn(ann.email, bobsKey);
    expect({ status: asAnn.statusCode, code: asAnn.json().code }).toEqual({ status: 401, code: 'ops_sign_in_failed' });
    expect((await audit(ann, 'ops.sign_in')).at(-1)).toEqual({ outcome: 'denied', details: { second_factor: 'passkey' } });
    // Bob's key still signs Bob in.
    expect((await signIn(bob.email, bobsKey)).statusCode).toBe(200);

    // A customer's sign-in challenge is not an operator's.
    const customerOptions = (await call(ctx.app, '/api/auth/passkey/options', { payload: {} })).json().options;
    const crossed = await send('/api/ops/sign-in', null, { email: bob.email, password: OPERATOR_PASSWORD, passkey: bobsKey.assert(customerOptions) });
    expect(crossed.json().code).toBe('ops_sign_in_failed');

    const bare = await send('/api/ops/sign-in', null, { email: bob.email, password: OPERATOR_PASSWORD });
    expect(bare.json()).toMatchObject({ code: 'validation', fields: { code: expect.any(String) } });
  });

  it("an operator removes their own passkey (audited), not another's; both changes need a fresh second factor", async () => {
    const op = await operatorWith(ctx, clock, ['support']);
    const other = await operatorWith(ctx, clock, ['support']);
    const { key, passkeys } = await enrol(op, 'Phone');
    const id = passkeys[0]!.id;
    expect((await send(`/api/ops/passkeys/${id}/remove`, other, {})).json()).toMatchObject({ code: 'passkey_not_found' });

    clock.tick(OPS_STEP_UP_MS + 1000);
    for (const url of ['/api/ops/passkeys/options', `/api/ops/passkeys/${id}/remove`])
      expect((await send(url, op, {})).json(), url).toMatchObject({ code: 'step_up_required' });
    await stepUpOperator(ctx.app, clock, op);
    const removed = await send(`/api/ops/passkeys/${id}/remove`, op, {});
    expect(removed.json()).toEqual({ status: 'ok', passkeys: [] });
    expect(await audit(op, 'ops.passkey_remove')).toEqual([{ outcome: 'done', details: { passkey: id, name: 'Phone' } }]);
    expect((await signIn(op.email, key)).json().code).toBe('ops_sign_in_failed');
  });
});
