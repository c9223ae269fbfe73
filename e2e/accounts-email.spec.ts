import { expect, test } from '@playwright/test';
import { BASE_URL, authCheck, linkTo, localPath, readMailbox, setAuthType, uniqueEmail, visible, waitForMail } from './helpers.ts';

/**
 * Passwordless sign-in (auth_type "email"). The auth type is one site-wide
 * setting, so this file runs in its own project (playwright.config.ts: after every other
 * project, one test at a time) and puts the setting back afterwards.
 */

test.describe.configure({ mode: 'serial' });

test.beforeAll(async ({ request }) => {
  await setAuthType(request, 'email');
});

test.afterAll(async ({ request }) => {
  await setAuthType(request, 'password');
});

test('passwordless: the mailed link signs a new address in, and the same address again later', async ({ page, request }) => {
  const email = uniqueEmail('link');

  await page.goto('/login');
  const form = page.getByTestId('form-login_email');
  await expect(form).toBeVisible();
  await expect(form.locator('input[name="password"]')).toHaveCount(0);
  await form.locator('input[name="email"]').fill(email);
  await form.getByRole('button').click();
  await expect(page.getByTestId('form-success')).toContainText('Проверьте почту');
  expect((await authCheck(page.request)).user.is_authenticated).toBe(false);

  // The dev mailbox page: its link points at this server and signs the new account in.
  await waitForMail(request, email, 'sign_in');
  await page.goto(`/dev/mailbox?to=${encodeURIComponent(email)}`);
  const link = page.locator('[data-testid="mail"][data-mail-kind="sign_in"]').first().getByTestId('mail-link').first();
  const href = (await link.getAttribute('href'))!;
  expect(new URL(href).origin).toBe(BASE_URL);
  await link.click();
  await expect(page).toHaveURL(`${BASE_URL}/`);
  const badge = visible(page, 'account-id');
  await expect(badge).toBeVisible();
  const accountId = Number(await badge.getAttribute('data-account-id'));
  const state = await authCheck(page.request);
  expect(state.user).toMatchObject({ is_authenticated: true, account_id: accountId, need_set_password: true });
  expect(state.site_settings.auth_type).toBe('email');
  // No password yet (need_set_password), but with auth_type email nobody is sent to set one.
  await expect(page).toHaveURL(`${BASE_URL}/`);

  // The link is single use.
  await page.context().clearCookies();
  await page.goto(new URL(href).pathname + new URL(href).search);
  await expect(page.getByTestId('form-error')).toBeVisible();
  await expect(page.getByTestId('account-id')).toHaveCount(0);

  // A second sign-in by link of the same address (any case) is the same account.
  const before = (await waitForMail(request, email, 'sign_in')).id;
  await page.goto('/login');
  await page.getByTestId('form-login_email').locator('input[name="email"]').fill(email.toUpperCase());
  await page.getByTestId('form-login_email').getByRole('button').click();
  await expect(page.getByTestId('form-success')).toBeVisible();
  const second = await waitForMail(request, email, 'sign_in', [before]);
  const secondLink = linkTo(second, '/login');
  await page.goto(secondLink.pathname + secondLink.search);
  await expect(page).toHaveURL(`${BASE_URL}/`);
  await expect(visible(page, 'account-id')).toHaveAttribute('data-account-id', String(accountId));
});

test('passwordless: a link opened in another browser asks first, showing the masked address; the asking browser is signed in at once', async ({
  browser,
  request,
}) => {
  const contextA = await browser.newContext();
  const contextB = await browser.newContext();
  try {
    const pageA = await contextA.newPage();
    const pageB = await contextB.newPage();
    const email = uniqueEmail('bound');
    const askFor = async () => {
      const before = (await readMailbox(request, email)).map((mail) => mail.id);
      await pageA.goto('/login');
      await pageA.getByTestId('form-login_email').locator('input[name="email"]').fill(email);
      await pageA.getByTestId('form-login_email').getByRole('button').click();
      await expect(pageA.getByTestId('form-success')).toBeVisible();
      const link = linkTo(await waitForMail(request, email, 'sign_in', before), '/login');
      return localPath(link);
    };

    // B opens A's link: the question with the masked address, a button, and nobody signed in.
    const first = await askFor();
    await pageB.goto(first);
    await expect(pageB.getByTestId('link-confirm-question')).toHaveText('Войти как b***@e***.com?');
    await expect(pageB).toHaveURL(`${BASE_URL}${first}`);
    expect((await authCheck(pageB.request)).user.is_authenticated).toBe(false);
    await pageB.reload();
    await expect(pageB.getByTestId('link-confirm-submit')).toBeVisible();
    expect((await authCheck(pageB.request)).user.is_authenticated).toBe(false);
    await pageB.getByTestId('link-confirm-submit').click();
    await expect(pageB).toHaveURL(`${BASE_URL}/`);
    expect((await authCheck(pageB.request)).user).toMatchObject({ is_authenticated: true, email });
    expect((await authCheck(pageA.request)).user.is_authenticated).toBe(false);

    // A opens its own next link: signed in at once, no question.
    const second = await askFor();
    await pageA.goto(second);
    await expect(pageA).toHaveURL(`${BASE_URL}/`);
    expect((await authCheck(pageA.request)).user).toMatchObject({ is_authenticated: true, email });
  } finally {
    await contextA.close();
    await contextB.close();
  }
});

test('passwordless: /signup is the 404 page and nothing offers to sign up', async ({ page, request }) => {
  const response = await page.goto('/signup');
  expect(response?.status()).toBe(404);
  await expect(page.getByRole('heading', { name: 'Страница не найдена' })).toBeVisible();
  await expect(page.getByTestId('form-signup')).toHaveCount(0);
  await expect(page.getByTestId('signup-link')).toHaveCount(0);
  await expect(page.locator('a[href="/signup"]')).toHaveCount(0);

  // The password calls are off too.
  const register = await request.post('/api/auth/register', { data: { email: uniqueEmail('nosignup'), password: 'Long-enough-1' } });
  expect(register.status()).toBe(403);
});

test('passwordless: the login page asks for the email only, with no password links', async ({ page }) => {
  await page.goto('/login');
  await expect(page.getByTestId('form-login_email')).toBeVisible();
  await expect(page.getByTestId('form-login_password')).toHaveCount(0);
  await expect(page.locator('a[href="/forgot-password"]')).toHaveCount(0);
});
