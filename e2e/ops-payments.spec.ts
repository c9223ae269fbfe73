import { expect, test, type Browser, type Page } from '@playwright/test';
import { VIEWPORTS } from './a11y-routes.ts';
import { BASE_URL, islandsReady, sandboxPayments, signUp, toMinor, walletBalance } from './helpers.ts';
import { expectNoSeriousViolations, signedInOperator } from './ops-helpers.ts';

/*
 * The payments desk, ru and en: a customer opens a bank deposit and the payer mistypes its
 * reference, so the bank's payment matches nothing and is held; a finance operator finds it on
 * /ops/payments by the payer's name, matches it to the customer's deposit, and the customer's
 * balance is credited once (matching again finds nothing left to match).
 */

type TLocale = 'ru' | 'en';

async function contextIn(browser: Browser, locale: TLocale): Promise<Page> {
  const context = await browser.newContext({ baseURL: BASE_URL });
  await context.addCookies([{ name: 'i18n_redirected', value: locale, url: BASE_URL }]);
  return context.newPage();
}

for (const locale of ['ru', 'en'] as const) {
  test(`a bank payment with a mistyped reference is matched from the desk and credited once (${locale})`, async ({ page, browser }) => {
    test.setTimeout(90_000);
    const customer = await contextIn(browser, locale);
    await signUp(customer, { prefix: `ops-pay-${locale}` });
    await customer.goto('/deposit/form/sandbox-bank/RUB');
    await islandsReady(customer);
    await expect(customer.getByTestId('deposit-submit')).toBeEnabled();
    await customer.getByTestId('deposit-amount').fill('5000');
    await customer.getByTestId('deposit-submit').click();
    const reference = (await customer.getByTestId('deposit-reference').textContent())!.trim();
    expect(reference).toMatch(/^OBM-/);

    // The payer typed the reference with a slip: the bank's payment matches no deposit.
    const payer = `E2E Payer ${locale} ${Date.now()}`;
    await sandboxPayments(customer.request, { action: 'bank_received', reference: `${reference}X`, amount: '5000', currency: 'RUB', payer });

    await page.context().addCookies([{ name: 'i18n_redirected', value: locale, url: BASE_URL }]);
    await signedInOperator(page, ['finance']);
    await expect(page.getByTestId('ops-nav-payments')).toBeVisible();
    await page.goto('/ops/payments');
    await islandsReady(page);
    await page.getByTestId('ops-pay-search').fill(payer);
    await page.getByTestId('ops-pay-search-submit').click();
    const held = page.getByTestId('ops-pay-held');
    await expect(held).toHaveCount(1);
    await expect(held).toContainText(payer);
    for (const viewport of [VIEWPORTS.phone, VIEWPORTS.desktop]) {
      await page.setViewportSize(viewport);
      await expectNoSeriousViolations(page);
    }

    await held.getByTestId('ops-pay-deposit').fill(reference);
    await held.getByTestId('ops-pay-match').click();
    await expect(page.getByTestId('ops-pay-done')).toBeVisible();
    await expect(page.getByTestId('ops-pay-held')).toHaveCount(0);

    await customer.goto('/exchanges');
    await islandsReady(customer);
    await expect.poll(async () => toMinor(await walletBalance(customer, 'RUB'), 2)).toBe(500_000n);
    // Once: nothing is left to match, and a reload shows the same balance.
    await page.reload();
    await islandsReady(page);
    await expect(page.getByTestId('ops-payments')).toBeVisible();
    await expect(page.getByTestId('ops-pay-held').filter({ hasText: payer })).toHaveCount(0);
    await customer.reload();
    await islandsReady(customer);
    expect(toMinor(await walletBalance(customer, 'RUB'), 2)).toBe(500_000n);
    await customer.context().close();
  });
}
