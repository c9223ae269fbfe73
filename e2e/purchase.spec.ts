import { expect, test } from '@playwright/test';
import { BASE_URL, islandsReady, signUp, toMinor, walletBalance } from './helpers.ts';

/*
 * Purchase: buy BTC with a card in ru and en. /purchase lists the ways to buy, the
 * form quotes as typed, Submit locks the quote and opens the card sandbox's hosted page, and back
 * on the site the status says the purchase was exchanged at the locked rate; the BTC wallet grows
 * by exactly what the status says. A new account (level 0) may buy; it needs no balance.
 */
for (const locale of ['ru', 'en'] as const) {
  test(`buys BTC with a card through the hosted page; the balance grows (${locale})`, async ({ page, context }) => {
    // Sign-up, three pages and the hosted card page: more than the default 30 s on a busy machine.
    test.setTimeout(90_000);
    await context.addCookies([{ name: 'i18n_redirected', value: locale, url: BASE_URL }]);
    await signUp(page, { prefix: `purchase-${locale}` });
    await page.goto('/purchase?currency=BTC');
    await expect(page.getByTestId('purchase-currency-BTC')).toContainText(locale === 'ru' ? 'Способы купить BTC' : 'Ways to buy BTC');
    const before = await walletBalance(page, 'BTC');
    await page.getByTestId('purchase-system-sandbox-card-USD').click();
    await expect(page).toHaveURL(/\/purchase\/form\/sandbox-card\/BTC\?currency=USD$/);
    await islandsReady(page);

    await page.getByTestId('purchase-amount').fill('0.5');
    await expect(page.getByTestId('error-amount')).toContainText(locale === 'ru' ? 'Минимальная сумма' : 'The minimum is');
    await page.getByTestId('purchase-amount').fill('100');
    await expect(page.getByTestId('purchase-quote')).toHaveAttribute('data-state', 'ready');
    await expect(page.getByTestId('purchase-fee')).toHaveText(locale === 'ru' ? '2,50\u00a0USD' : '2.50\u00a0USD');
    await expect(page.getByTestId('purchase-rate')).toContainText('BTC');
    const quoted = (await page.getByTestId('purchase-receive').textContent()) ?? '';
    expect(quoted).toMatch(/BTC$/);

    await page.getByTestId('purchase-submit').click();
    await expect(page).toHaveURL(/\/api\/payments\/sandbox-card\/pay\//);
    await expect(page.getByTestId('sandbox-amount')).toContainText('USD');
    await page.locator('#card_number').fill('4242 4242 4242 4242');
    await page.locator('#expiry').fill('12/30');
    await page.locator('#cvc').fill('123');
    await page.getByTestId('sandbox-pay').click();

    await expect(page).toHaveURL(/\/purchase\/form\/sandbox-card\/BTC\?payment=/);
    const status = page.getByTestId('purchase-status');
    await expect(status).toHaveAttribute('data-state', 'credited');
    await expect(status).toHaveAttribute('data-outcome', 'exchanged');
    await expect(page.getByTestId('purchase-outcome')).toContainText(locale === 'ru' ? 'по зафиксированному курсу' : 'at the locked rate');
    await expect(page.getByTestId('purchase-paid')).toHaveText(locale === 'ru' ? '100,00\u00a0USD' : '100.00\u00a0USD');
    await expect(page.getByTestId('purchase-credited')).toHaveText(quoted);
    // 1 BTC in USD, not a fraction of a bitcoin per dollar.
    await expect(page.getByTestId('purchase-locked-rate')).toHaveText(
      locale === 'ru' ? /^1\u00a0BTC = [\d\u202f]+,\d{2}\u00a0USD$/ : /^1\u00a0BTC = [\d,]+\.\d{2}\u00a0USD$/,
    );

    // The answer of the check the status shows is the ledger's: the wallet grew by exactly that.
    const checked = await page.request.post('/api/deposit/integration_json/check', { data: { url: page.url() } });
    const { quote } = (await checked.json()) as { quote: { final_receive: string } };
    await page.reload();
    await expect(page.getByTestId('purchase-status')).toHaveAttribute('data-state', 'credited');
    expect(toMinor(await walletBalance(page, 'BTC'), 8) - toMinor(before, 8)).toBe(toMinor(quote.final_receive, 8));
  });
}
