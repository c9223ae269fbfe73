import { readFile } from 'node:fs/promises';
import { expect, test } from '@playwright/test';
import { verifyAuditLines, type TAuditLine } from '../core/src/domains/audit/service.ts';
import { VIEWPORTS } from './a11y-routes.ts';
import { authCheck, BASE_URL, islandsReady, signUp } from './helpers.ts';
import { expectNoSeriousViolations, freshCode, signedInOperator, staleSecondFactor } from './ops-helpers.ts';

/*
 * The customer view in a browser: a compliance operator finds a customer by e-mail, opens the
 * page, reveals the personal data after giving the second factor again, blocks the customer's
 * sign-in (the customer's browser is signed out at once) and leaves a note.
 */

for (const locale of ['ru', 'en'] as const) {
  test(`an operator finds a customer, reveals with step-up, blocks sign-in and notes it (${locale})`, async ({ page, context, browser }) => {
    // Two browsers, two enrolments and sign-ins through the pages: longer than one page's flow.
    test.setTimeout(90_000);
    const customerContext = await browser.newContext({ baseURL: BASE_URL });
    const customerPage = await customerContext.newPage();
    const customer = await signUp(customerPage, { prefix: `cv-${locale}` });
    expect((await authCheck(customerPage.request)).user.is_authenticated).toBe(true);

    await context.addCookies([{ name: 'i18n_redirected', value: locale, url: BASE_URL }]);
    const operator = await signedInOperator(page, ['compliance']);
    await page.getByTestId('ops-nav-customers').click();
    await expect(page).toHaveURL(/\/ops\/customers$/);
    await page.getByTestId('ops-customer-q').fill(customer.email);
    await page.getByTestId('ops-customer-q').press('Enter');
    const hit = page.getByTestId('ops-customer-hits').getByRole('link', { name: String(customer.accountId) });
    await expect(hit).toBeVisible();
    await hit.click();
    await expect(page).toHaveURL(new RegExp(`/ops/customers/${customer.accountId}$`));
    await islandsReady(page);
    await expect(page.getByTestId('ops-customer-profile')).toContainText(customer.email);
    for (const viewport of [VIEWPORTS.phone, VIEWPORTS.desktop]) {
      await page.setViewportSize(viewport);
      await expectNoSeriousViolations(page);
    }

    // Personal data in full asks for the second factor again once the last one is old.
    await staleSecondFactor(page, operator);
    await page.getByTestId('ops-reveal-reason').selectOption('compliance_review');
    await page.getByTestId('ops-reveal-submit').click();
    await expect(page.getByTestId('ops-step-up')).toBeVisible();
    await expect(page.getByTestId('ops-step-up-code')).toBeFocused();
    await expectNoSeriousViolations(page);
    await page.getByTestId('ops-step-up-code').fill(freshCode(operator.secret, 0));
    await page.getByTestId('ops-step-up-submit').click();
    await expect(page.getByTestId('ops-reveal')).toBeHidden();
    await expect(page.getByTestId('ops-customer-audit')).toContainText('customers.reveal_personal');

    await page.getByTestId('ops-action').selectOption('block_sign_in');
    await page.getByTestId('ops-action-reason').selectOption('fraud_suspected');
    await page.getByTestId('ops-action-text').fill('card testing');
    await page.getByTestId('ops-action-submit').click();
    await expect(page.getByTestId('ops-action-done')).toBeVisible();
    await expect(page.getByTestId('ops-customer-blocks')).not.toBeEmpty();
    await expect(page.getByTestId('ops-customer-audit')).toContainText('customers.block_sign_in');
    expect((await authCheck(customerPage.request)).user.is_authenticated).toBe(false);
    const refused = await customerPage.request.post('/api/auth/login_by_password', { data: { email: customer.email, password: customer.password } });
    expect(refused.status()).toBe(403);
    expect((await refused.json()).code).toBe('sign_in_blocked');

    await page.getByTestId('ops-note-text').fill('Blocked after card testing; call before unblocking.');
    await page.getByTestId('ops-note-submit').click();
    await expect(page.getByTestId('ops-notes')).toContainText(operator.email);
    await customerContext.close();
  });
}

test('a support operator sees the customer but may not block', async ({ page }) => {
  const customer = await signUp(page, { prefix: 'cv-support' });
  await page.context().clearCookies();
  await signedInOperator(page, ['support']);
  await page.goto(`/ops/customers/${customer.accountId}`);
  await islandsReady(page);
  await expect(page.getByTestId('ops-customer-profile')).toContainText(customer.email);
  await page.getByTestId('ops-action-submit').click();
  await expect(page.getByTestId('ops-action-error')).toBeVisible();
  const reveal = await page.request.post(`/api/ops/customers/${customer.accountId}/reveal`, { data: { reason: 'customer_request' } });
  expect(reveal.status()).toBe(403);
  expect((await page.request.get('/ops/customers/123')).status()).toBe(404);
});

test('the audit page filters by subject and exports a period that verifies offline', async ({ page }) => {
  const customer = await signUp(page, { prefix: 'cv-audit' });
  await page.context().clearCookies();
  await signedInOperator(page, ['compliance']);
  await page.goto(`/ops/customers/${customer.accountId}`);
  await expect(page.getByTestId('ops-customer-profile')).toContainText(customer.email);

  await page.getByTestId('ops-nav-audit').click();
  await page.getByTestId('ops-audit-subject').fill(`customer:${customer.accountId}`);
  await page.getByTestId('ops-audit-apply').click();
  await expect(page).toHaveURL(/subject=customer%3A/);
  await islandsReady(page);
  await expect(page.getByTestId('ops-audit-rows')).toContainText('customers.view');
  for (const viewport of [VIEWPORTS.phone, VIEWPORTS.desktop]) {
    await page.setViewportSize(viewport);
    await expectNoSeriousViolations(page);
  }

  const download = page.waitForEvent('download');
  await page.getByTestId('ops-audit-export-submit').click();
  const file = await (await download).path();
  const lines = (await readFile(file, 'utf8'))
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as TAuditLine);
  expect(lines.some((line) => line.subject === `customer:${customer.accountId}`)).toBe(true);
  expect(verifyAuditLines(lines)).toMatchObject({ intact: true });
});
