import { expect, test } from '@playwright/test';
import { VIEWPORTS } from './a11y-routes.ts';
import { BASE_URL, islandsReady } from './helpers.ts';
import { createOperator, expectNoSeriousViolations, signedInOperator } from './ops-helpers.ts';

/*
 * Four eyes in a browser: one admin proposes a change of a colleague's roles, cannot approve it
 * (only withdraw), and a second admin in another browser approves it; the roles change then.
 */

for (const locale of ['ru', 'en'] as const) {
  test(`a role change waits for a second admin's approval (${locale})`, async ({ page, context, browser }) => {
    // Two browsers, two enrolments and sign-ins through the pages: longer than one page's flow.
    test.setTimeout(90_000);
    await context.addCookies([{ name: 'i18n_redirected', value: locale, url: BASE_URL }]);
    const target = await createOperator(page, ['support']);
    await signedInOperator(page, ['admin']);
    await page.getByTestId('ops-nav-operators').click();
    await islandsReady(page);
    await page.getByTestId('ops-roles-operator').selectOption(target.email);
    await expect(page.getByTestId('ops-role-support')).toBeChecked();
    await page.getByTestId('ops-role-compliance').check();
    await page.getByTestId('ops-roles-submit').click();
    await expect(page.getByTestId('ops-roles-proposed')).toBeVisible();
    for (const viewport of [VIEWPORTS.phone, VIEWPORTS.desktop]) {
      await page.setViewportSize(viewport);
      await expectNoSeriousViolations(page);
    }

    await page.getByTestId('ops-nav-approvals').click();
    await islandsReady(page);
    const mine = page.getByTestId('ops-requests-pending').getByRole('row').filter({ hasText: target.email });
    await expect(mine.getByRole('button')).toHaveCount(1);
    await expect(mine.locator('[data-testid^="ops-withdraw-"]')).toBeVisible();
    await expectNoSeriousViolations(page);

    const second = await browser.newContext({ baseURL: BASE_URL });
    await second.addCookies([{ name: 'i18n_redirected', value: locale, url: BASE_URL }]);
    const other = await second.newPage();
    await signedInOperator(other, ['admin']);
    await other.goto('/ops/approvals');
    await islandsReady(other);
    const theirs = other.getByTestId('ops-requests-pending').getByRole('row').filter({ hasText: target.email });
    await theirs.locator('[data-testid^="ops-approve-"]').click();
    await expect(other.getByTestId('ops-requests-decided').getByRole('row').filter({ hasText: target.email }).first()).toBeVisible();

    await page.goto('/ops/operators');
    await islandsReady(page);
    await expect(page.getByTestId('ops-operator-list').getByRole('row').filter({ hasText: target.email })).toContainText('compliance, support');
    await second.close();
  });
}
