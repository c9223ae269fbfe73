import { expect, test } from '@playwright/test';
import { VIEWPORTS } from './a11y-routes.ts';
import { BASE_URL, islandsReady, signUp } from './helpers.ts';
import { expectNoSeriousViolations, signedInOperator } from './ops-helpers.ts';

/*
 * Configuration without a shell: a content operator composes a modal notification for one
 * customer in both languages, previews it as the sanitiser leaves it, publishes it, and the
 * customer's open page shows it at once, in the customer's language (no reload).
 */

for (const locale of ['ru', 'en'] as const) {
  test(`a content operator publishes a modal notification and a customer sees it live (${locale})`, async ({ page, context, browser }) => {
    // Two browsers, an enrolment and two sign-ups through the pages.
    test.setTimeout(90_000);
    const customerContext = await browser.newContext({ baseURL: BASE_URL });
    await customerContext.addCookies([{ name: 'i18n_redirected', value: locale, url: BASE_URL }]);
    const customerPage = await customerContext.newPage();
    const customer = await signUp(customerPage, { prefix: `notify-${locale}` });
    await customerPage.goto('/');
    await islandsReady(customerPage);

    await context.addCookies([{ name: 'i18n_redirected', value: locale, url: BASE_URL }]);
    await signedInOperator(page, ['content']);
    await page.getByTestId('ops-nav-config').click();
    await expect(page).toHaveURL(/\/ops\/config$/);
    await page.getByTestId('ops-config-nav-notifications').click();
    await expect(page).toHaveURL(/\/ops\/config\/notifications$/);
    await islandsReady(page);

    await page.getByTestId('ops-notify-to-accounts').check();
    await page.getByTestId('ops-notify-accounts').fill(String(customer.accountId));
    await page.getByTestId('ops-notify-display').selectOption('modal');
    await page.getByTestId('ops-notify-type').selectOption('danger');
    await page.getByTestId('ops-notify-title-ru').fill('E2E: плановые работы');
    await page.getByTestId('ops-notify-text-ru').fill('<p>Сегодня в <b>23:00</b></p><img src=x onerror="alert(1)">');
    await page.getByTestId('ops-notify-buttons-ru').fill('/article/fees, Подробнее');
    await page.getByTestId('ops-notify-title-en').fill('E2E: maintenance');
    await page.getByTestId('ops-notify-text-en').fill('<p>Tonight at <b>23:00</b></p>');
    await page.getByTestId('ops-notify-buttons-en').fill('/article/fees, Details');

    await page.getByTestId('ops-notify-preview-button').click();
    const preview = page.getByTestId('ops-notify-preview');
    await expect(preview.getByTestId('ops-notify-preview-ru')).toContainText('E2E: плановые работы');
    await expect(preview.getByTestId('ops-notify-preview-ru').locator('b')).toHaveText('23:00');
    // The sanitiser's result: the handler is gone.
    await expect(preview.locator('[onerror]')).toHaveCount(0);
    await expect(preview.getByTestId('ops-notify-preview-en')).toContainText('Details');
    for (const viewport of [VIEWPORTS.phone, VIEWPORTS.desktop]) {
      await page.setViewportSize(viewport);
      await expectNoSeriousViolations(page);
    }

    await page.getByTestId('ops-notify-publish').click();
    await expect(page.getByTestId('ops-notify-published')).toBeVisible();
    await expect(page.getByTestId('ops-notify-recent')).toContainText(String(customer.accountId));

    // The customer's page, untouched since it loaded: the modal opens by itself.
    const modal = customerPage.getByTestId('notification-modal');
    await expect(modal).toBeVisible();
    await expect(modal).toHaveJSProperty('open', true);
    await expect(modal).toContainText(locale === 'ru' ? 'E2E: плановые работы' : 'E2E: maintenance');
    await expect(modal.getByRole('link', { name: locale === 'ru' ? 'Подробнее' : 'Details' })).toHaveAttribute('href', '/article/fees');
    await customerContext.close();
  });
}

test('a finance operator takes a card product out of the catalogue and proposes its new price, which Approvals describes in words', async ({
  page,
  context,
}) => {
  await context.addCookies([{ name: 'i18n_redirected', value: 'en', url: BASE_URL }]);
  await signedInOperator(page, ['finance']);
  await page.goto('/ops/config/cards');
  await islandsReady(page);
  const table = page.getByTestId('ops-cards');
  await expect(table.getByRole('row').filter({ hasText: 'physical' })).toContainText('15.00');
  for (const viewport of [VIEWPORTS.phone, VIEWPORTS.desktop]) {
    await page.setViewportSize(viewport);
    await expectNoSeriousViolations(page);
  }

  await page.getByTestId('ops-cards-toggle-physical').click();
  await expect(page.getByTestId('ops-cards-toggle-physical')).toHaveText('Put in');
  await page.getByTestId('ops-cards-toggle-physical').click();
  await expect(page.getByTestId('ops-cards-toggle-physical')).toHaveText('Take out');

  await page.getByTestId('ops-cards-product').selectOption('physical');
  await page.getByTestId('ops-cards-issue_fee').fill('-1');
  await page.getByTestId('ops-cards-price-reason').selectOption('other');
  await page.getByTestId('ops-cards-price-text').fill('the issuer raised its price');
  await page.getByTestId('ops-cards-price-submit').click();
  await expect(page.getByTestId('ops-cards-issue_fee-error')).toBeVisible();
  await page.getByTestId('ops-cards-issue_fee').fill('16');
  await page.getByTestId('ops-cards-price-submit').click();
  await expect(page.getByTestId('ops-cards-price-proposed')).toBeVisible();
  // Proposed, not applied: the price stays until a second finance operator approves.
  await expect(table.getByRole('row').filter({ hasText: 'physical' })).toContainText('15.00');

  await page.getByTestId('ops-nav-approvals').click();
  await expect(page.getByTestId('ops-requests-pending')).toContainText('Card «physical», for new orders: Issue fee: 16 USD; Monthly fee: 2.00 USD');
});
