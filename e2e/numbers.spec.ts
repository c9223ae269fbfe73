import { expect, test } from '@playwright/test';
import { BASE_URL, DEMO, islandsReady, logIn } from './helpers.ts';

/*
 * Numbers the right way up: the receive side of the exchange form in the reader's decimal mark,
 * and a chain withdrawal that names its network and shows what an address of it looks like.
 * (A rate with the dearer currency first: charts.spec.ts, money.spec.ts's history, purchase.spec.ts.)
 * Sign-ups: none.
 */

for (const locale of ['ru', 'en'] as const) {
  test(`the exchange form takes and fills amounts with the reader's decimal mark (${locale})`, async ({ page, context }) => {
    await context.addCookies([{ name: 'i18n_redirected', value: locale, url: BASE_URL }]);
    await page.goto('/exchange/USDT/BTC');
    await islandsReady(page);
    await page.getByTestId('exchange-amount').fill(locale === 'ru' ? '100,5' : '100.5');
    await expect(page.getByTestId('exchange-quote')).toHaveAttribute('data-state', 'ready');
    await expect(page.getByTestId('exchange-amount-receive')).toHaveValue(locale === 'ru' ? /^0,\d+$/ : /^0\.\d+$/);
  });
}

test('a chain withdrawal names its network and shows an address of it', async ({ page }) => {
  await logIn(page, DEMO.email, DEMO.password);
  await page.goto('/withdraw/form/sandbox-chain/USDT');
  await islandsReady(page);
  // The demo account reads Russian.
  await expect(page.locator('#wf-address-note')).toHaveText(/^Сеть: TRC-20 \(TRON\)\. Адрес выглядит так: T[1-9A-HJ-NP-Za-km-z]{33}$/);
  await page.goto('/withdraw/form/sandbox-chain/USDC');
  await expect(page.locator('#wf-address-note')).toHaveText(/^Сеть: ERC-20 \(Ethereum\)\. Адрес выглядит так: 0x[0-9a-fA-F]{40}$/);
});
