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

/** A 1×1 PNG: the core re-encodes whatever it is given, so the smallest picture will do. */
const TINY_PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==', 'base64');

for (const locale of ['ru', 'en'] as const) {
  test(`a finance operator proposes a level's limits (a bad value refused in place) and adds a card product (${locale})`, async ({ page, context }) => {
    await context.addCookies([{ name: 'i18n_redirected', value: locale, url: BASE_URL }]);
    await signedInOperator(page, ['finance']);
    await page.goto('/ops/config');
    await page.getByTestId('ops-config-nav-limits').click();
    await expect(page).toHaveURL(/\/ops\/config\/limits$/);
    await islandsReady(page);
    for (const viewport of [VIEWPORTS.phone, VIEWPORTS.desktop]) {
      await page.setViewportSize(viewport);
      await expectNoSeriousViolations(page);
    }
    // Each language its own level, so the two runs do not meet on one open request.
    const level = locale === 'ru' ? 0 : 1;
    await page.getByTestId('ops-limits-which').selectOption(`${level}:deposit`);
    await page.getByTestId('ops-limits-per_24h').fill('900000');
    await page.getByTestId('ops-limits-per_30d').fill('1000');
    await page.getByTestId('ops-limits-reason').selectOption('other');
    await page.getByTestId('ops-limits-text').fill('new deposit rules');
    await page.getByTestId('ops-limits-submit').click();
    await expect(page.getByTestId('ops-limits-per_30d-error')).toHaveText(
      locale === 'ru' ? 'Лимит за 30 дней не может быть меньше лимита за 24 часа' : 'The 30-day limit cannot be below the 24-hour limit',
    );
    await page.getByTestId('ops-limits-per_30d').fill('2000000');
    await page.getByTestId('ops-limits-submit').click();
    await expect(page.getByTestId('ops-limits-proposed')).toBeVisible();
    await page.getByTestId('ops-nav-approvals').click();
    await expect(page.getByTestId('ops-requests-pending')).toContainText(
      locale === 'ru' ? `Уровень ${level}, пополнение и покупка` : `Level ${level}, deposits and purchases`,
    );

    await page.goto('/ops/config/cards');
    await islandsReady(page);
    const id = `e2e-metal-${locale}`;
    await page.getByTestId('ops-cards-new-kind').selectOption('physical');
    await page.getByTestId('ops-cards-new-id').fill(id);
    await page.getByTestId('ops-cards-new-name_ru').fill('Металл');
    await page.getByTestId('ops-cards-new-name_en').fill('Metal');
    await page.getByTestId('ops-cards-new-currencies').fill('USD');
    await page.getByTestId('ops-cards-new-fee_currency').fill('USD');
    await page.getByTestId('ops-cards-new-issue_fee').fill('50');
    await page.getByTestId('ops-cards-new-limits').fill('USD:1');
    await page.getByTestId('ops-cards-new-delivery_days').fill('14');
    await page.getByTestId('ops-cards-new-submit').click();
    await expect(page.getByTestId('ops-cards-new-limits-error')).toBeVisible();
    await page.getByTestId('ops-cards-new-limits').fill('USD:1000/4000');
    await page.getByTestId('ops-cards-new-submit').click();
    await expect(page.getByTestId('ops-cards-new-done')).toBeVisible();
    const row = page.getByTestId('ops-cards').getByRole('row').filter({ hasText: id });
    await expect(row).toContainText(locale === 'ru' ? 'не в каталоге' : 'out of the catalogue');
    await expect(row).toContainText(/50[.,]00/);
  });

  test(`a finance operator proposes a withdrawal four-eyes amount (a bad one refused in place), a second one approves it (${locale})`, async ({
    page,
    context,
    browser,
  }) => {
    // Two browsers, two enrolments and sign-ins through the pages: longer than one page's flow.
    test.setTimeout(90_000);
    await context.addCookies([{ name: 'i18n_redirected', value: locale, url: BASE_URL }]);
    await signedInOperator(page, ['finance']);
    await page.goto('/ops/config');
    await page.getByTestId('ops-config-nav-money').click();
    await expect(page).toHaveURL(/\/ops\/config\/money$/);
    await islandsReady(page);
    for (const viewport of [VIEWPORTS.phone, VIEWPORTS.desktop]) {
      await page.setViewportSize(viewport);
      await expectNoSeriousViolations(page);
    }
    // Each language its own currency (no other walk withdraws these), so the two runs do not meet on one open request.
    const currency = locale === 'ru' ? 'TRX' : 'LTC';
    const row = page.getByTestId('ops-money-table').getByRole('row').filter({ hasText: currency });
    const was = (await row.getByRole('cell').nth(2).textContent()) ?? '';
    await page.getByTestId('ops-money-large-currency').selectOption(currency);
    await page.getByTestId('ops-money-large-amount').fill('7.5.0');
    await page.getByTestId('ops-money-large-reason').selectOption('other');
    await page.getByTestId('ops-money-large-text').fill('larger payouts');
    await page.getByTestId('ops-money-large-submit').click();
    await expect(page.getByTestId('ops-money-large-error')).toContainText(currency);
    await page.getByTestId('ops-money-large-amount').fill('750');
    await page.getByTestId('ops-money-large-submit').click();
    await expect(page.getByTestId('ops-money-large-proposed')).toBeVisible();
    await page.reload();
    await islandsReady(page);
    await expect(row.getByRole('cell').nth(2)).toHaveText(was);

    const second = await browser.newContext({ baseURL: BASE_URL });
    await second.addCookies([{ name: 'i18n_redirected', value: locale, url: BASE_URL }]);
    const other = await second.newPage();
    await signedInOperator(other, ['finance']);
    await other.goto('/ops/approvals');
    await islandsReady(other);
    const setting = locale === 'ru' ? 'Сумма вывода для второго оператора' : 'Withdrawal amount needing a second operator';
    const theirs = other.getByTestId('ops-requests-pending').getByRole('row').filter({ hasText: setting }).filter({ hasText: currency });
    await expect(theirs).toContainText(new RegExp(`750\\s${currency}`));
    await theirs.locator('[data-testid^="ops-approve-"]').click();
    await expect(other.getByTestId('ops-requests-decided').getByRole('row').filter({ hasText: currency }).first()).toBeVisible();
    await second.close();

    await page.reload();
    await islandsReady(page);
    await expect(row.getByRole('cell').nth(2)).toHaveText(/750[.,]00/);
  });

  test(`a content operator schedules a notification and cancels it before it goes out (${locale})`, async ({ page, context }) => {
    await context.addCookies([{ name: 'i18n_redirected', value: locale, url: BASE_URL }]);
    await signedInOperator(page, ['content']);
    await page.goto('/ops/config/notifications');
    await islandsReady(page);
    await page.getByTestId('ops-notify-title-ru').fill(`E2E: позже (${locale})`);
    await page.getByTestId('ops-notify-title-en').fill(`E2E: later (${locale})`);
    await page.getByTestId('ops-notify-send-at').fill('2001-01-01T10:00');
    await page.getByTestId('ops-notify-publish').click();
    await expect(page.getByTestId('ops-notify-send-at-error')).toHaveText(locale === 'ru' ? 'Это время уже прошло' : 'This time has passed already');
    await page.getByTestId('ops-notify-send-at').fill(`${new Date().getFullYear() + 1}-01-01T10:00`);
    await page.getByTestId('ops-notify-publish').click();
    await expect(page.getByTestId('ops-notify-published')).toHaveText(
      locale === 'ru' ? 'Запланировано: уйдёт в назначенное время.' : 'Scheduled: it goes out at its time.',
    );
    const scheduled = page.getByTestId('ops-notify-scheduled');
    const row = scheduled.getByRole('row').filter({ hasText: `E2E: позже (${locale})` });
    await expect(row).toBeVisible();
    for (const viewport of [VIEWPORTS.phone, VIEWPORTS.desktop]) {
      await page.setViewportSize(viewport);
      await expectNoSeriousViolations(page);
    }
    await row.getByRole('button').click();
    await expect(row).toHaveCount(0);
    await expect(page.getByTestId('ops-notify-recent')).not.toContainText(`E2E: позже (${locale})`);
  });

  test(`an administrator uploads a footer logo, every page shows it from the core, and takes it out (${locale})`, async ({ page, context }) => {
    await context.addCookies([{ name: 'i18n_redirected', value: locale, url: BASE_URL }]);
    await signedInOperator(page, ['admin']);
    await page.goto('/ops/config');
    await page.getByTestId('ops-config-nav-footer').click();
    await expect(page).toHaveURL(/\/ops\/config\/footer$/);
    await islandsReady(page);
    const name = `e2e-logo-${locale}`;
    await page.getByTestId('ops-footer-name').fill(name);
    await page.getByTestId('ops-footer-url').fill('https://bank.example');
    await page
      .getByTestId('ops-footer-file')
      .setInputFiles({ name: 'logo.html', mimeType: 'text/html', buffer: Buffer.from('<html><script>alert(1)</script></html>') });
    await page.getByTestId('ops-footer-submit').click();
    await expect(page.getByTestId('ops-footer-file-error')).toBeVisible();
    await page.getByTestId('ops-footer-file').setInputFiles({ name: 'logo.png', mimeType: 'image/png', buffer: TINY_PNG });
    await page.getByTestId('ops-footer-submit').click();
    await expect(page.getByTestId('ops-footer-saved')).toBeVisible();
    const logo = page.getByTestId('ops-footer-images').getByRole('img', { name });
    await expect(logo).toHaveAttribute('src', /^\/api\/site\/logos\/[0-9a-f-]{36}\.png$/);
    const src = (await logo.getAttribute('src')) ?? '';
    for (const viewport of [VIEWPORTS.phone, VIEWPORTS.desktop]) {
      await page.setViewportSize(viewport);
      await expectNoSeriousViolations(page);
    }
    const served = await page.request.get(src);
    expect(served.headers()).toMatchObject({ 'content-type': 'image/png', 'cache-control': 'public, max-age=31536000, immutable' });

    // A signed-out page's footer (its page cache follows the content version).
    const visitor = await context.browser()!.newContext({ baseURL: BASE_URL });
    const home = await visitor.newPage();
    await expect(async () => {
      await home.goto('/');
      await expect(home.locator(`.site-footer img[src="${src}"]`)).toHaveCount(1);
    }).toPass({ timeout: 15_000 });
    // Lazy: it loads once scrolled to.
    await home.locator(`.site-footer img[src="${src}"]`).scrollIntoViewIfNeeded();
    await expect
      .poll(() => home.locator(`.site-footer img[src="${src}"]`).evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth > 0))
      .toBe(true);

    await page.getByTestId(`ops-footer-remove-${name}`).click();
    await expect(logo).toHaveCount(0);
    expect((await page.request.get(src)).status()).toBe(404);
    await visitor.close();
  });
}
