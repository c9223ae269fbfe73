import { expect, test } from '@playwright/test';
import { authCheck, enrolTotp, islandsReady, linkTo, signUp, totp, waitForMail } from './helpers.ts';

/**
 * Account security (beyond the spec): TOTP enrolment on /settings/security with the
 * code computed here from the secret the page shows, sign-out, then a password sign-in that
 * asks for the code; and an e-mail change confirmed by the mailed link.
 */

test('TOTP: enrol with the QR secret, sign out, sign in with password and code', async ({ page }) => {
  // Three scrypt hashes (sign-up, sign-in) on a shared machine: more than the default 30 s.
  test.slow();
  const account = await signUp(page, { prefix: 'totp' });
  const { secret } = await enrolTotp(page);

  await page.request.post('/api/auth/logout', { data: {} });
  expect((await authCheck(page.request)).user.is_authenticated).toBe(false);

  await page.goto('/login');
  await islandsReady(page);
  await page.locator('[data-testid="form-login_password"] input[name=email]').fill(account.email);
  await page.locator('[data-testid="form-login_password"] input[name=password]').fill(account.password);
  await page.locator('[data-testid="form-login_password"] button[type=submit]').click();
  await expect(page.getByTestId('form-second-factor')).toBeVisible({ timeout: 30_000 });
  // No session yet: the password alone signs nobody in.
  expect((await authCheck(page.request)).user.is_authenticated).toBe(false);
  await page.locator('[data-testid="form-second-factor"] input[name=code]').fill('123456');
  await page.locator('[data-testid="form-second-factor"] button[type=submit]').click();
  await expect(page.getByTestId('error-code')).toBeVisible();
  // The enrolment used this step's code: the next step's is accepted once.
  await page.locator('[data-testid="form-second-factor"] input[name=code]').fill(totp(secret, Date.now() + 30_000));
  await page.locator('[data-testid="form-second-factor"] button[type=submit]').click();
  await page.waitForURL((url) => !url.pathname.startsWith('/login'));
  expect((await authCheck(page.request)).user.is_authenticated).toBe(true);

  await page.goto('/settings/security');
  await expect(page.getByTestId('sign-in').first()).toHaveAttribute('data-success', 'true');
  await expect(page.getByTestId('sign-in').nth(1)).toHaveAttribute('data-success', 'false');
  await expect(page.locator('[data-testid="session"][data-current]')).toHaveCount(1);
});

test('bind e-mail: a link to the new address changes it; the old one gets a notice', async ({ page }) => {
  const account = await signUp(page, { prefix: 'bind' });
  const next = `new-${account.email}`;
  await page.goto('/settings/bind-email');
  await islandsReady(page);
  await expect(page.getByTestId('current-email')).toContainText(account.email);
  await page.locator('[data-testid="form-bind-email"] input[name=email]').fill(next);
  await page.locator('[data-testid="form-bind-email"] button[type=submit]').click();
  await expect(page.getByTestId('form-success')).toContainText(next);
  await waitForMail(page.request, account.email, 'email_change_notice');
  const mail = await waitForMail(page.request, next, 'email_change_confirm');
  const link = linkTo(mail, '/settings/bind-email');
  await page.goto(link.pathname + link.search);
  await expect(page.getByTestId('form-success')).toContainText(next);
  await page.goto('/settings/bind-email');
  await expect(page.getByTestId('current-email')).toContainText(next);
});

test('a sign-in from a new device is mailed; "this wasn\'t me" signs every device out and opens a password reset', async ({ page, browser }) => {
  const account = await signUp(page, { prefix: 'device' });
  // Another browser on another system signs in with the password.
  const other = await browser.newContext({ userAgent: 'Mozilla/5.0 (X11; Linux x86_64; rv:130.0) Gecko/20100101 Firefox/130.0' });
  const stranger = await other.newPage();
  const signIn = await stranger.request.post('/api/auth/login_by_password', { data: { email: account.email, password: account.password } });
  expect(signIn.ok()).toBe(true);
  const mail = await waitForMail(page.request, account.email, 'sign_in_new_device');
  expect(mail.text).toContain('Firefox 130 · Linux');
  // The owner follows the mail's link: nothing happens until the click.
  const link = linkTo(mail, '/settings/sign-in-report');
  await page.goto(link.pathname + link.search);
  await islandsReady(page);
  expect((await authCheck(page.request)).user.is_authenticated).toBe(true);
  await page.getByTestId('sign-in-report').click();
  await expect(page.getByTestId('sign-in-reported')).toBeVisible();
  // Both browsers are signed out; the reset the answer opened takes a new password.
  expect((await authCheck(page.request)).user.is_authenticated).toBe(false);
  expect((await authCheck(stranger.request)).user.is_authenticated).toBe(false);
  await page.getByTestId('sign-in-report-reset').click();
  await expect(page).toHaveURL(/\/reset-password\?token=/);
  await other.close();
});

test('leaving with your data: an export is made and downloaded as a ZIP; the account is closed and signed out', async ({ page }) => {
  test.slow();
  const account = await signUp(page, { prefix: 'privacy' });
  await page.goto('/settings/privacy');
  await islandsReady(page);
  await page.getByTestId('privacy-export-submit').click();
  await expect(page.getByTestId('privacy-export-item')).toHaveAttribute('data-state', 'queued');
  // The data-exports job runs every 10 seconds.
  await expect(async () => {
    await page.reload();
    await expect(page.getByTestId('privacy-export-item')).toHaveAttribute('data-state', 'ready', { timeout: 1_000 });
  }).toPass({ timeout: 30_000 });
  const download = await page.request.get((await page.getByTestId('privacy-download').getAttribute('href'))!);
  expect(download.headers()['content-type']).toBe('application/zip');
  expect((await download.body()).subarray(0, 2).toString()).toBe('PK');

  await islandsReady(page);
  await page.getByTestId('privacy-close-email').fill(account.email);
  await page.getByTestId('privacy-close-submit').click();
  await expect(page.getByTestId('privacy-closed')).toBeVisible();
  expect((await authCheck(page.request)).user.is_authenticated).toBe(false);
  const again = await page.request.post('/api/auth/login_by_password', { data: { email: account.email, password: account.password } });
  expect(again.status()).toBe(403);
});
