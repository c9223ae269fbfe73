import { expect, test } from '@playwright/test';
import { VIEWPORTS } from './a11y-routes.ts';
import { BASE_URL, DEMO, islandsReady, logIn } from './helpers.ts';
import { createOperator, enrolOperator, expectNoSeriousViolations, freshCode, OPERATOR_PASSWORD as PASSWORD } from './ops-helpers.ts';

/*
 * The back office's door in a browser: an operator is created (operator:create, through its dev
 * route: the CLI cannot open the live PGlite), enrols from the one-time link, signs in, sees
 * itself on /ops and signs out; a customer's session opens nothing there.
 */

for (const locale of ['ru', 'en'] as const) {
  test(`an operator enrols, signs in, sees /ops and signs out (${locale})`, async ({ page, context }) => {
    await context.addCookies([{ name: 'i18n_redirected', value: locale, url: BASE_URL }]);
    const { email, link } = await createOperator(page, ['admin']);
    const secret = await enrolOperator(page, email, link);
    await expect(page.locator('html')).toHaveAttribute('lang', locale);
    await page.getByTestId('ops-to-login').click();
    await expect(page).toHaveURL(/\/ops\/login$/);
    await islandsReady(page);
    await expect(page.locator('html')).toHaveAttribute('lang', locale);

    await page.getByTestId('ops-email').fill(email);
    await page.getByTestId('ops-password').fill(PASSWORD);
    await page.getByTestId('ops-code').fill(freshCode(secret));
    await page.getByTestId('ops-login-submit').click();
    await expect(page).toHaveURL(/\/ops$/);
    await expect(page.getByTestId('ops-email')).toHaveText(email);
    await expect(page.getByTestId('ops-roles')).toHaveText('admin');
    await expect(page.getByTestId('ops-permissions')).toContainText('audit.view');
    await expect(page.getByTestId('ops-audit')).toContainText(email);
    for (const viewport of [VIEWPORTS.phone, VIEWPORTS.desktop]) {
      await page.setViewportSize(viewport);
      await expectNoSeriousViolations(page);
    }
    const cookie = (await context.cookies()).find((c) => c.name === 'ops_token');
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Strict' });

    await page.getByTestId('ops-sign-out').click();
    await expect(page).toHaveURL(/\/ops\/login$/);
    expect((await context.cookies()).find((c) => c.name === 'ops_token')).toBeUndefined();
    await page.goto('/ops');
    await expect(page).toHaveURL(/\/ops\/login$/);
  });
}

test('a visitor without the ops cookie is sent from /ops to its sign-in, and a wrong code is refused', async ({ page }) => {
  await page.goto('/ops');
  await expect(page).toHaveURL(/\/ops\/login$/);
  await islandsReady(page);
  await page.getByTestId('ops-email').fill('nobody@obmen.test');
  await page.getByTestId('ops-password').fill(PASSWORD);
  await page.getByTestId('ops-code').fill('000000');
  await page.getByTestId('ops-login-submit').click();
  await expect(page.locator('[data-testid="ops-login-form"] .form-error, [data-testid="ops-login-form"] [role="alert"]').first()).toBeVisible();
  await expect(page).toHaveURL(/\/ops\/login$/);
});

test("a customer's session opens nothing of the back office", async ({ page }) => {
  await logIn(page, DEMO.email, DEMO.password);
  expect((await page.request.get('/api/ops/me')).status()).toBe(404);
  await page.goto('/ops');
  await expect(page).toHaveURL(/\/ops\/login$/);
  // The sign-in renders as for a visitor: the customer's session is neither used nor cleared.
  await expect(page.getByTestId('ops-login-form')).toBeVisible();
  expect((await page.context().cookies()).some((cookie) => cookie.name === 'remember_token')).toBe(true);
});
