import { expect, test, type Page } from '@playwright/test';
import { totpCode, TOTP_STEP_S } from '../core/src/domains/security/totp.ts';
import { BASE_URL, authCheck, islandsReady, signUp } from './helpers.ts';
import { expectNoSeriousViolations, OPERATOR_PASSWORD, signedInOperator } from './ops-helpers.ts';

/*
 * Passkeys in Chromium with its virtual authenticator (the DevTools protocol's WebAuthn domain:
 * a platform authenticator with resident keys and user verification, always verified): added on
 * /settings/security (with 2FA on, with a code), then, signed out, a sign-in with the passkey
 * alone, and the passkey approving a withdrawal in place of the code; passkeys alone as the
 * second factor (also for a password sign-in's second step); an operator's passkey at the back office's sign-in. WebAuthn refuses an IP
 * address as relying party, so this spec opens the test server as localhost (the core maps its
 * loopback PUBLIC_URL to it).
 */
test.use({ baseURL: BASE_URL.replace('127.0.0.1', 'localhost') });

async function virtualAuthenticator(page: Page): Promise<void> {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('WebAuthn.enable');
  await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true },
  });
}

/** 2FA on through the API (security.spec.ts walks the screens); answers the secret. */
async function turnOnTotp(page: Page): Promise<string> {
  const setup = await page.request.post('/api/security/totp/setup', { data: {} });
  expect(setup.ok(), await setup.text()).toBe(true);
  const { secret } = (await setup.json()) as { secret: string };
  const enabled = await page.request.post('/api/security/totp/enable', { data: { code: totpCode(secret, Date.now()) } });
  expect(enabled.ok(), await enabled.text()).toBe(true);
  return secret;
}

test('a passkey: added with the code, signs in alone, approves a withdrawal', async ({ page }) => {
  test.slow();
  await virtualAuthenticator(page);
  const account = await signUp(page, { prefix: 'passkey' });
  const secret = await turnOnTotp(page);

  await page.goto('/settings/security');
  await islandsReady(page);
  await page.getByTestId('passkey-name').fill('Virtual key');
  // The enrolment spent this step's code: the next step's is good once.
  await page.getByTestId('passkey-code').fill(totpCode(secret, Date.now() + TOTP_STEP_S * 1000));
  await page.getByTestId('passkey-add').click();
  await expect(page.getByTestId('passkey-done')).toBeVisible();
  await expect(page.getByTestId('passkey')).toHaveCount(1);
  await expect(page.getByTestId('passkey')).toContainText('Virtual key');
  await expect(page.getByTestId('withdrawals-hold')).toBeVisible();

  await page.request.post('/api/auth/logout', { data: {} });
  expect((await authCheck(page.request)).user.is_authenticated).toBe(false);
  // The virtual authenticator may answer the e-mail field's conditional request by itself, which
  // would race the button: this browser says it has no conditional UI, so the button's ceremony
  // is the only one.
  await page.addInitScript(() => {
    PublicKeyCredential.isConditionalMediationAvailable = async () => false;
  });
  await page.goto('/login');
  await islandsReady(page);
  await expect(page.locator('input[name=email]')).toHaveAttribute('autocomplete', 'username webauthn');
  await page.getByTestId('passkey-sign-in').click();
  await page.waitForURL((url) => !url.pathname.startsWith('/login'));
  const state = await authCheck(page.request);
  expect(state.user).toMatchObject({ is_authenticated: true, email: account.email });

  // Adding the passkey paused withdrawals for 24 hours; lifted here to reach the form.
  for (const [path, data] of [
    ['/api/dev/security_hold', { account_id: account.accountId }],
    ['/api/dev/level', { account_id: account.accountId, level: 1 }],
    ['/api/dev/credit', { account_id: account.accountId, currency: 'RUB', amount: '5000' }],
  ] as const) {
    const response = await page.request.post(path, { data });
    expect(response.ok(), await response.text()).toBe(true);
  }
  await page.goto('/withdraw/form/sandbox-card/RUB');
  await islandsReady(page);
  await page.getByTestId('withdraw-amount').fill('1000');
  await page.getByTestId('withdraw-card_number').fill('4242 4242 4242 4242');
  await page.getByTestId('withdraw-card_holder').fill('IVAN PETROV');
  await page.getByTestId('withdraw-passkey').click();
  await expect(page.getByTestId('withdraw-status')).toBeVisible();
  const id = await page.getByTestId('withdraw-status').getAttribute('data-id');
  expect(id).toBeTruthy();
  const overview = (await (await page.request.get('/api/security')).json()) as { passkeys: { last_used_at: string | null }[] };
  expect(overview.passkeys[0]!.last_used_at).not.toBeNull();
});

test('passkeys alone are the second factor: the address book and closing the account take one', async ({ page }) => {
  test.slow();
  await virtualAuthenticator(page);
  const account = await signUp(page, { prefix: 'passkey-only' });
  await page.goto('/settings/security');
  await islandsReady(page);
  // No TOTP app: the first passkey needs no code, and then 2FA is on by it.
  await expect(page.getByTestId('passkey-code')).toHaveCount(0);
  await page.getByTestId('passkey-name').fill('Virtual key');
  await page.getByTestId('passkey-add').click();
  await expect(page.getByTestId('passkey-done')).toBeVisible();
  await expect(page.getByTestId('tfa-by-passkeys')).toBeVisible();

  await page.goto('/withdraw/book');
  await islandsReady(page);
  await page.getByTestId('book-system').selectOption('sandbox-card|RUB');
  await page.getByTestId('book-label').fill('Salary card');
  await page.getByTestId('book-card_number').fill('4111 1111 1111 1111');
  await page.getByTestId('book-card_holder').fill('IVAN PETROV');
  await page.getByTestId('book-add-submit').click();
  await expect(page.getByTestId('form-error')).toBeVisible();
  await page.getByTestId('book-add-passkey').click();
  await expect(page.getByTestId('book-entry')).toContainText('•••• 1111');

  // Signed out, the password alone signs nobody in: the second step takes the passkey, no code.
  await page.request.post('/api/auth/logout', { data: {} });
  await page.addInitScript(() => {
    PublicKeyCredential.isConditionalMediationAvailable = async () => false;
  });
  await page.goto('/login');
  await islandsReady(page);
  await page.locator('[data-testid="form-login_password"] input[name=email]').fill(account.email);
  await page.locator('[data-testid="form-login_password"] input[name=password]').fill(account.password);
  await page.locator('[data-testid="form-login_password"] button[type=submit]').click();
  await expect(page.getByTestId('form-second-factor')).toBeVisible({ timeout: 30_000 });
  await expect(page.locator('[data-testid="form-second-factor"] input[name=code]')).toHaveCount(0);
  expect((await authCheck(page.request)).user.is_authenticated).toBe(false);
  await page.locator('[data-testid="form-second-factor"]').getByTestId('use-passkey').click();
  await page.waitForURL((url) => !url.pathname.startsWith('/login'));
  expect((await authCheck(page.request)).user).toMatchObject({ is_authenticated: true, email: account.email });

  await page.goto('/settings/privacy');
  await islandsReady(page);
  await page.getByTestId('privacy-close-email').fill(account.email);
  await page.getByTestId('privacy-close-passkey').click();
  await expect(page.getByTestId('privacy-closed')).toBeVisible();
  expect((await authCheck(page.request)).user.is_authenticated).toBe(false);
});

test('an operator adds a passkey on /ops/security and signs in with it in place of the code', async ({ page }) => {
  test.slow();
  await virtualAuthenticator(page);
  const operator = await signedInOperator(page, ['support']);
  await islandsReady(page);
  await page.getByTestId('ops-to-security').click();
  await islandsReady(page);
  await page.getByTestId('ops-passkey-name').fill('Virtual key');
  await page.getByTestId('ops-passkey-add').click();
  await expect(page.getByTestId('ops-passkey-done')).toBeVisible();
  await expect(page.getByTestId('ops-passkey-list')).toContainText('Virtual key');
  await expectNoSeriousViolations(page);

  expect((await page.request.post('/api/ops/sign-out', { data: {} })).ok()).toBe(true);
  await page.goto('/ops/login');
  await islandsReady(page);
  await page.getByTestId('ops-email').fill(operator.email);
  await page.getByTestId('ops-password').fill(OPERATOR_PASSWORD);
  await page.getByTestId('ops-login-passkey').click();
  await expect(page).toHaveURL(/\/ops$/);
  await expect(page.getByTestId('ops-email')).toHaveText(operator.email);
  await page.goto('/ops/security');
  await expect(page.getByTestId('ops-passkey-list')).not.toContainText(/never|не использовался/);
});
