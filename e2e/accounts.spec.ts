import { expect, test, type Page } from '@playwright/test';
import {
  authCheck,
  BASE_URL,
  DEMO,
  linkTo,
  localPath,
  logIn,
  openSignedInBurger,
  PASSWORD,
  readMailbox,
  sessionCookie,
  signUp,
  uniqueEmail,
  visible,
  waitForMail,
} from './helpers.ts';

/**
 * Password mode (the passwordless specs are in accounts-email.spec.ts, which
 * changes the site-wide auth_type and so runs alone, after these): sign-up, logout through the
 * confirmation dialog, login by password, password reset, the account id copy toast, CSRF and
 * dead cookies after logout. Against the real BFF + core on a fresh database.
 */

const TOAST_DELAY_MS = 2000;

async function expectSignedIn(page: Page, accountId?: number) {
  const badge = visible(page, 'account-id');
  await expect(badge).toBeVisible();
  if (accountId !== undefined) {
    await expect(badge).toHaveAttribute('data-account-id', String(accountId));
    await expect(badge).toContainText(String(accountId));
  }
  await expect(page.getByTestId('login-link')).toHaveCount(0);
}

async function expectSignedOut(page: Page) {
  await expect(visible(page, 'login-link')).toBeVisible();
  await expect(page.getByTestId('account-id')).toHaveCount(0);
}

test('a sign-up confirmation link opened in another browser asks first with the masked address; nothing happens until the click', async ({ browser }) => {
  const contextA = await browser.newContext();
  const contextB = await browser.newContext();
  try {
    const pageA = await contextA.newPage();
    const pageB = await contextB.newPage();
    const email = uniqueEmail('cbound');
    // Context A asks (its page.request shares A's cookies: the BFF's link_binding lands there).
    expect((await pageA.request.post('/api/auth/register', { data: { email, password: PASSWORD } })).ok()).toBe(true);
    const link = localPath(linkTo(await waitForMail(pageA.request, email, 'signup_confirm'), '/login'));

    await pageB.goto(link);
    await expect(pageB.getByTestId('link-confirm-question')).toHaveText('Войти как c***@e***.com?');
    expect((await authCheck(pageB.request)).user.is_authenticated).toBe(false);
    // No account exists until the click (a sign-up link makes it).
    expect((await pageB.request.post('/api/auth/login_by_password', { data: { email, password: PASSWORD } })).status()).toBe(401);
    await pageB.getByTestId('link-confirm-submit').click();
    await expect(pageB).toHaveURL(`${BASE_URL}/exchanges`);
    expect((await authCheck(pageB.request)).user).toMatchObject({ is_authenticated: true, email });
    expect((await authCheck(pageA.request)).user.is_authenticated).toBe(false);
  } finally {
    await contextA.close();
    await contextB.close();
  }
});

test('sign up by password, confirm by the mailed link, log out through the dialog, log in by password', async ({ page }) => {
  const email = uniqueEmail('signup');

  // Sign up: the form answers "check your mail", nobody is signed in yet.
  expect((await page.goto('/signup'))?.status()).toBe(200);
  const form = page.getByTestId('form-signup');
  await form.locator('input[name="email"]').fill(email);
  await form.locator('input[name="password"]').fill(PASSWORD);
  await form.getByRole('button').click();
  await expect(page.getByTestId('form-success')).toContainText('проверьте почту');
  expect((await authCheck(page.request)).user.is_authenticated).toBe(false);

  // The dev mailbox page lists the mail with its link, which points at this server.
  await waitForMail(page.request, email, 'signup_confirm');
  await page.goto(`/dev/mailbox?to=${encodeURIComponent(email)}`);
  const mail = page.locator('[data-testid="mail"][data-mail-kind="signup_confirm"]');
  await expect(mail.first()).toBeVisible();
  const link = mail.first().getByTestId('mail-link').first();
  const href = await link.getAttribute('href');
  expect(new URL(href!).origin, 'mailed links use PUBLIC_URL = the test server').toBe(BASE_URL);
  expect(new URL(href!).pathname).toBe('/login');
  await link.click();

  // The link signs the new account in and lands on the account's pair list, with the account id
  // in the header and, its wallets being empty, a call to deposit.
  await expect(page).toHaveURL(`${BASE_URL}/exchanges`);
  await expectSignedIn(page);
  await expect(page.getByTestId('deposit-cta').getByRole('link')).toHaveAttribute('href', '/deposit');
  const accountId = Number(await visible(page, 'account-id').getAttribute('data-account-id'));
  expect(accountId).toBeGreaterThan(9_999_999);
  const state = await authCheck(page.request);
  expect(state.user).toMatchObject({ is_authenticated: true, account_id: accountId, need_set_password: false });

  // Log out through the account sidebar's "logout" main-menu item (≥ 992 px): a dialog first.
  await page.goto('/settings/change-password');
  const logoutItem = page.locator('aside [data-logout]');
  await expect(logoutItem).toBeVisible();
  await logoutItem.click();
  const dialog = page.getByTestId('logout-dialog');
  await expect(dialog).toBeVisible();
  await expect(page).toHaveURL(/\/settings\/change-password$/);
  await page.getByTestId('logout-confirm').click();
  await expect(page).toHaveURL(`${BASE_URL}/`);
  await expectSignedOut(page);
  expect(await sessionCookie(page)).toBeUndefined();
  expect((await authCheck(page.request)).user.is_authenticated).toBe(false);

  // Log in by password: the same account.
  await visible(page, 'login-link').click();
  await expect(page).toHaveURL(/\/login$/);
  const login = page.getByTestId('form-login_password');
  await login.locator('input[name="email"]').fill(email.toUpperCase());
  await login.locator('input[name="password"]').fill(PASSWORD);
  await login.getByRole('button').click();
  await expect(page).toHaveURL(`${BASE_URL}/`);
  await expectSignedIn(page, accountId);
});

test('the signup form shows the shared schema errors next to the fields and keeps what was typed', async ({ page }) => {
  await page.goto('/signup');
  const form = page.getByTestId('form-signup');
  await form.locator('input[name="email"]').fill('not-an-email');
  await form.locator('input[name="password"]').fill('short');
  await form.getByRole('button').click();
  await expect(form.getByTestId('error-email')).toBeVisible();
  await expect(form.getByTestId('error-password')).toContainText('8');
  await expect(form.locator('input[name="email"]')).toHaveValue('not-an-email');
});

test('a wrong password is refused with a localized error next to the form', async ({ page }) => {
  await page.goto('/login');
  const form = page.getByTestId('form-login_password');
  await form.locator('input[name="email"]').fill(DEMO.email);
  await form.locator('input[name="password"]').fill('definitely-not-the-password');
  await form.getByRole('button').click();
  await expect(page.getByTestId('form-error')).toHaveText('Неверная почта или пароль.');
  await expect(form.locator('input[name="email"]')).toHaveValue(DEMO.email);
  await expect(page).toHaveURL(/\/login$/);
  await expect(page.getByTestId('account-id')).toHaveCount(0);
});

test('password reset end to end: forgot → mailed link → new password → signed in → old password refused', async ({ page, request }) => {
  const account = await signUp(page, { prefix: 'reset' });
  await page.context().clearCookies();
  const newPassword = 'Brand-New-Passw0rd';

  await page.goto('/login');
  await page.getByRole('link', { name: 'Забыли пароль?' }).click();
  await expect(page).toHaveURL(/\/forgot-password$/);
  const forgot = page.getByTestId('form-forgot');
  await forgot.locator('input[name="email"]').fill(account.email);
  await forgot.getByRole('button').click();
  await expect(page.getByTestId('form-success')).toBeVisible();

  const mail = await waitForMail(page.request, account.email, 'reset');
  const link = linkTo(mail, '/reset-password');
  expect(link.origin).toBe(BASE_URL);
  await page.goto(localPath(link));
  const reset = page.getByTestId('form-reset');
  await reset.locator('input[name="password"]').fill(newPassword);
  await reset.getByRole('button').click();

  // Signed in with the same account.
  await expect(page).toHaveURL(`${BASE_URL}/`);
  await expectSignedIn(page, account.accountId);

  // The link is spent.
  await page.goto(localPath(link));
  await expect(page.getByTestId('form-error')).toBeVisible();
  await expect(page.getByTestId('form-reset')).toHaveCount(0);

  // The old password is refused, in the browser and through the API; the new one works.
  await page.context().clearCookies();
  await page.goto('/login');
  const login = page.getByTestId('form-login_password');
  await login.locator('input[name="email"]').fill(account.email);
  await login.locator('input[name="password"]').fill(account.password);
  await login.getByRole('button').click();
  await expect(page.getByTestId('form-error')).toHaveText('Неверная почта или пароль.');
  await expect(page).toHaveURL(/\/login$/);

  const old = await request.post('/api/auth/login_by_password', { data: { email: account.email, password: account.password } });
  expect(old.status()).toBe(401);
  const fresh = await request.post('/api/auth/login_by_password', { data: { email: account.email, password: newPassword } });
  expect(fresh.status()).toBe(200);
  expect(((await fresh.json()) as { user: { account_id: number } }).user.account_id).toBe(account.accountId);
});

test('the reset page with an invalid token says so instead of showing the form', async ({ page }) => {
  await page.goto('/reset-password?token=' + 'A'.repeat(43));
  await expect(page.getByTestId('form-error')).toBeVisible();
  await expect(page.getByTestId('form-reset')).toHaveCount(0);
});

test('the account id click copies it and shows the success toast for 2000 ms', async ({ page }) => {
  const state = await logIn(page, DEMO.email, DEMO.password);
  const accountId = String(state.user.account_id);
  // The page's timers on Playwright's clock: the toast's life is measured, not waited for.
  await page.clock.install();
  await page.goto('/');
  const badge = visible(page, 'account-id');
  await expect(badge).toHaveAttribute('data-account-id', accountId);
  // The installed clock keeps flowing with real time: held still, the toast's life is measured
  // on it alone, not on how long the checks after the click take on a busy machine.
  await page.clock.pauseAt((await page.evaluate(() => Date.now())) + 1000);

  await badge.click();
  const toast = page.getByTestId('toast');
  await expect(toast).toBeVisible();
  await expect(toast).toHaveText('Скопировано');
  await expect(toast).toHaveClass(/toast-success/);
  expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(accountId);

  // There until TOAST_DELAY_MS has passed, gone right after.
  await page.clock.runFor(TOAST_DELAY_MS - 10);
  await expect(toast).toBeVisible();
  await page.clock.runFor(20);
  await expect(toast).toBeHidden();
});

test('a cross-site POST is refused with 403 and changes nothing', async ({ page, request }) => {
  await logIn(page, DEMO.email, DEMO.password);
  const token = await sessionCookie(page);
  expect(token, 'remember_token cookie after login').toBeTruthy();
  const cookie = `remember_token=${token}`;
  const evil = { origin: 'https://evil.example', cookie };

  // Logout from another site: refused, the session lives on.
  const logout = await request.post('/api/auth/logout', { headers: evil, data: {} });
  expect(logout.status()).toBe(403);
  expect(((await logout.json()) as { code?: string }).code).toBe('csrf');
  expect(logout.headers()['set-cookie'] ?? '').not.toMatch(/remember_token=;|remember_token=(?:;|$)|Max-Age=0/i);
  expect((await authCheck(request, { cookie })).user).toMatchObject({ is_authenticated: true });

  // Without Origin, a browser still says where it comes from.
  const bySite = await request.post('/api/auth/logout', { headers: { cookie, 'sec-fetch-site': 'cross-site' }, data: {} });
  expect(bySite.status()).toBe(403);
  expect((await authCheck(request, { cookie })).user).toMatchObject({ is_authenticated: true });

  // Login from another site: refused, no session cookie handed out.
  const login = await request.post('/api/auth/login_by_password', {
    headers: { origin: 'https://evil.example' },
    data: { email: DEMO.email, password: DEMO.password },
  });
  expect(login.status()).toBe(403);
  expect(login.headers()['set-cookie'] ?? '').not.toContain('remember_token=');

  // Same-origin logout with the same cookie still works: the 403s were the CSRF check, not a broken route.
  const own = await request.post('/api/auth/logout', { headers: { origin: BASE_URL, cookie }, data: {} });
  expect(own.status()).toBe(200);
  expect((await authCheck(request, { cookie })).user.is_authenticated).toBe(false);
});

test('a real cross-site page cannot log the user out', async ({ page }) => {
  await logIn(page, DEMO.email, DEMO.password);
  // http://localhost:3100 is another site than http://127.0.0.1:3100 (the cookie's host): an
  // attacker's page there that posts a form at our logout, the classic CSRF.
  const evilPage = `${BASE_URL.replace('127.0.0.1', 'localhost')}/e2e-evil-page`;
  await page.route(evilPage, (route) =>
    route.fulfill({
      contentType: 'text/html',
      body: `<!doctype html><form id="f" method="post" action="${BASE_URL}/api/auth/logout"><input name="x" value="1"></form>`,
    }),
  );
  await page.goto(evilPage);
  const refused = page.waitForResponse((response) => response.url() === `${BASE_URL}/api/auth/logout`);
  await page.evaluate(() => (document.getElementById('f') as HTMLFormElement).submit());
  const response = await refused;
  expect(response.status()).toBe(403);
  expect(response.request().headers()['origin']).toBe(BASE_URL.replace('127.0.0.1', 'localhost'));
  expect((await authCheck(page.request)).user.is_authenticated).toBe(true);
});

test('after logout the old cookie no longer works', async ({ page, request }) => {
  const account = await signUp(page, { prefix: 'cookie' });
  const token = await sessionCookie(page);
  expect(token).toBeTruthy();
  const cookie = `remember_token=${token}`;
  expect((await authCheck(request, { cookie })).user).toMatchObject({ is_authenticated: true, account_id: account.accountId });
  // Server-rendered signed in: the header has the account id and no sign-in link (no flash of the signed-out header).
  const signedInHtml = await (await request.get('/', { headers: { cookie } })).text();
  expect(signedInHtml).toContain(`data-account-id="${account.accountId}"`);
  expect(signedInHtml).not.toContain('data-testid="login-link"');

  // Log out in the browser, through the dialog.
  await page.goto('/settings/change-password');
  await page.locator('aside [data-logout]').click();
  await page.getByTestId('logout-confirm').click();
  await expect(page).toHaveURL(`${BASE_URL}/`);
  await expectSignedOut(page);

  // The saved cookie is dead, and the BFF tells the browser to drop it.
  const check = await request.get('/api/auth/check', { headers: { cookie } });
  expect(check.status()).toBe(200);
  expect(((await check.json()) as { user: { is_authenticated: boolean } }).user.is_authenticated).toBe(false);
  expect(check.headers()['set-cookie'] ?? '').toMatch(/remember_token=;|Max-Age=0|Expires=Thu, 01 Jan 1970/i);
  // A signed-in page with it renders signed out.
  const html = await (await request.get('/settings/change-password', { headers: { cookie }, maxRedirects: 0 })).text();
  expect(html).not.toContain(String(account.accountId));
});

test.describe('at a 375 px phone viewport', () => {
  test.use({ viewport: { width: 375, height: 800 }, isMobile: true, hasTouch: true });

  test('logout from the burger menu asks first; cancel keeps the session, confirm ends it', async ({ page }) => {
    const { menu } = await openSignedInBurger(page);
    const logoutItem = menu.locator('[data-logout]');
    await expect(logoutItem).toBeVisible();

    await logoutItem.click();
    const dialog = page.getByTestId('logout-dialog');
    await expect(dialog).toBeVisible();
    await dialog.locator('[data-logout-cancel]').click();
    await expect(dialog).toBeHidden();
    expect((await authCheck(page.request)).user.is_authenticated).toBe(true);

    await logoutItem.click();
    await expect(dialog).toBeVisible();
    await page.getByTestId('logout-confirm').click();
    await expect(page).toHaveURL(`${BASE_URL}/`);
    await expect(page.getByTestId('account-id')).toHaveCount(0);
    expect((await authCheck(page.request)).user.is_authenticated).toBe(false);
  });
});

test('the mailbox filter shows only the mails of the asked address', async ({ page }) => {
  const email = uniqueEmail('mailbox');
  await page.request.post('/api/auth/reset', { data: { email } });
  const mails = await readMailbox(page.request, email);
  expect(mails.length).toBeGreaterThan(0);
  expect(mails.every((mail) => mail.to === email)).toBe(true);
  await page.goto(`/dev/mailbox?to=${encodeURIComponent(email)}`);
  await expect(page.getByTestId('mail')).toHaveCount(mails.length);
});
