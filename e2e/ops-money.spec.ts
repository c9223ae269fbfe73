import { expect, test, type Browser, type Page } from '@playwright/test';
import { VIEWPORTS } from './a11y-routes.ts';
import { BASE_URL, DEMO, islandsReady, signUp, toMinor, walletBalance } from './helpers.ts';
import { expectNoSeriousViolations, freshCode, signedInOperator, staleSecondFactor, type TOperator } from './ops-helpers.ts';

/*
 * Money in the back office, ru and en: one finance operator proposes a 50 USDT compensation from
 * the customer view and cannot approve it; a second approves it on /ops/approvals after giving
 * the second factor again, and the customer's open page shows the new balance without a reload.
 * A withdrawal at the four-eyes amount (100 000 RUB, the seed's) is approved only when a second
 * operator confirms it. A support operator sees no money: no tab, no money form, 403 on the API.
 */

type TLocale = 'ru' | 'en';

async function contextIn(browser: Browser, locale: TLocale): Promise<Page> {
  const context = await browser.newContext({ baseURL: BASE_URL });
  await context.addCookies([{ name: 'i18n_redirected', value: locale, url: BASE_URL }]);
  return context.newPage();
}

/** The second operator approves the pending request about `text` on /ops/approvals, answering the step-up in place. */
async function approveAsSecond(page: Page, operator: TOperator, text: string | RegExp): Promise<void> {
  await staleSecondFactor(page, operator);
  await page.goto('/ops/approvals');
  await islandsReady(page);
  const row = page.getByTestId('ops-requests-pending').getByRole('row').filter({ hasText: text });
  await row.locator('[data-testid^="ops-approve-"]').click();
  await page.getByTestId('ops-step-up-code').fill(freshCode(operator.secret, 0));
  await page.getByTestId('ops-step-up-submit').click();
  await expect(page.getByTestId('ops-requests-decided').getByRole('row').filter({ hasText: text }).first()).toBeVisible();
}

for (const locale of ['ru', 'en'] as const) {
  test(`a compensation moves money only when a second finance operator approves it (${locale})`, async ({ page, browser }) => {
    test.setTimeout(120_000);
    const customer = await contextIn(browser, locale);
    const account = await signUp(customer, { prefix: `ops-money-${locale}` });
    expect((await customer.request.post('/api/dev/credit', { data: { account_id: account.accountId, currency: 'USDT', amount: '1' } })).ok()).toBe(true);
    await customer.goto('/exchanges');
    await islandsReady(customer);
    await expect.poll(async () => toMinor(await walletBalance(customer, 'USDT'), 6)).toBe(1_000_000n);

    await page.context().addCookies([{ name: 'i18n_redirected', value: locale, url: BASE_URL }]);
    await signedInOperator(page, ['finance']);
    await page.goto(`/ops/customers/${account.accountId}`);
    await islandsReady(page);
    const money = page.getByTestId('ops-customer-money');
    await money.getByTestId('ops-money-kind').selectOption('credit');
    await money.getByTestId('ops-money-currency').fill('USDT');
    await money.getByTestId('ops-money-amount').fill('50');
    await money.getByTestId('ops-money-adjustment').selectOption('compensation');
    await money.getByTestId('ops-money-memo').fill(`e2e outage ${locale}`);
    await money.getByTestId('ops-money-submit').click();
    await expect(money.getByTestId('ops-money-done')).toBeVisible();
    await expect(money.getByTestId('ops-money-pending')).toContainText(`e2e outage ${locale}`);
    for (const viewport of [VIEWPORTS.phone, VIEWPORTS.desktop]) {
      await page.setViewportSize(viewport);
      await expectNoSeriousViolations(page);
    }

    // The proposer may only withdraw it.
    await page.goto('/ops/approvals');
    await islandsReady(page);
    const mine = page
      .getByTestId('ops-requests-pending')
      .getByRole('row')
      .filter({ hasText: `e2e outage ${locale}` });
    await expect(mine.getByRole('button')).toHaveCount(1);
    await expect(mine.locator('[data-testid^="ops-withdraw-"]')).toBeVisible();
    expect(toMinor(await walletBalance(customer, 'USDT'), 6)).toBe(1_000_000n);

    const second = await contextIn(browser, locale);
    const bob = await signedInOperator(second, ['finance']);
    await approveAsSecond(second, bob, `e2e outage ${locale}`);
    // Live: the customer's page was never reloaded.
    await expect.poll(async () => toMinor(await walletBalance(customer, 'USDT'), 6), { timeout: 15_000 }).toBe(51_000_000n);
    await second.context().close();
    await customer.context().close();
  });

  test(`a withdrawal at the four-eyes amount needs two finance operators (${locale})`, async ({ page, browser }) => {
    test.setTimeout(120_000);
    const customer = await contextIn(browser, locale);
    const account = await signUp(customer, { prefix: `ops-large-${locale}` });
    expect((await customer.request.post('/api/dev/level', { data: { account_id: account.accountId, level: 1 } })).ok()).toBe(true);
    expect((await customer.request.post('/api/dev/credit', { data: { account_id: account.accountId, currency: 'RUB', amount: '120000' } })).ok()).toBe(true);
    await customer.goto('/withdraw/form/sandbox-card/RUB');
    await islandsReady(customer);
    await customer.getByTestId('withdraw-amount').fill('100000');
    await customer.getByTestId('withdraw-card_number').fill('4242 4242 4242 4242');
    await customer.getByTestId('withdraw-card_holder').fill('IVAN PETROV');
    await customer.getByTestId('withdraw-submit').click();
    const status = customer.getByTestId('withdraw-status');
    await expect(status).toHaveAttribute('data-state', 'requested');
    const id = (await status.getAttribute('data-id'))!;

    await page.context().addCookies([{ name: 'i18n_redirected', value: locale, url: BASE_URL }]);
    await signedInOperator(page, ['finance']);
    await expect(page.getByTestId('ops-nav-withdrawals')).toBeVisible();
    await page.getByTestId('ops-nav-withdrawals').click();
    await islandsReady(page);
    const item = page.locator(`[data-testid="ops-wd-item"][data-id="${id}"]`);
    await expect(item).toContainText(String(account.accountId));
    await item.getByTestId('ops-wd-approve').click();
    await expect(page.getByTestId('ops-wd-done')).toBeVisible();
    await expect(item.getByTestId('ops-wd-request')).toBeVisible();
    for (const viewport of [VIEWPORTS.phone, VIEWPORTS.desktop]) {
      await page.setViewportSize(viewport);
      await expectNoSeriousViolations(page);
    }
    const state = async () => ((await (await customer.request.get(`/api/withdraw/status/${id}`)).json()) as { withdrawal: { state: string } }).withdrawal.state;
    expect(await state()).toBe('requested');

    const second = await contextIn(browser, locale);
    const bob = await signedInOperator(second, ['finance']);
    await approveAsSecond(second, bob, id);
    await expect.poll(state, { timeout: 30_000 }).not.toBe('requested');
    await second.context().close();
    await customer.context().close();
  });
}

test('a support operator sees no money screens', async ({ page }) => {
  await signedInOperator(page, ['support']);
  await islandsReady(page);
  await expect(page.getByTestId('ops-nav-support')).toBeVisible();
  // No tab and a 403 for every desk that moves or judges money, and for the money settings.
  for (const tab of ['withdrawals', 'payments', 'reconciliation']) await expect(page.getByTestId(`ops-nav-${tab}`)).toBeHidden();
  for (const path of ['/api/ops/withdrawals', '/api/ops/payments', '/api/ops/reconciliation', '/api/ops/config/rates', '/api/ops/config/payments']) {
    expect({ path, status: (await page.request.get(path)).status() }).toEqual({ path, status: 403 });
  }
  await page.goto('/ops/withdrawals');
  await islandsReady(page);
  await expect(page.getByTestId('ops-forbidden')).toBeVisible();
  const hits = (await (await page.request.get(`/api/ops/customers?q=${encodeURIComponent(DEMO.email)}`)).json()) as { customers: { account_id: number }[] };
  await page.goto(`/ops/customers/${hits.customers[0]!.account_id}`);
  await islandsReady(page);
  await expect(page.getByTestId('ops-customer-profile')).toBeVisible();
  await expect(page.getByTestId('ops-customer-actions')).toBeVisible();
  await expect(page.getByTestId('ops-customer-money')).toHaveCount(0);
});
