import { expect, test } from '@playwright/test';
import { BASE_URL, islandsReady, signUp } from './helpers.ts';

/*
 * Withdraw (issue 14): a request over the verification level's limit is refused with the limit
 * shown, in ru and en. A new account is level 0, whose withdrawal limit is 0 USD.
 */
const BTC_ADDRESS = 'bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq';

for (const locale of ['ru', 'en'] as const) {
  test(`a withdrawal over the level's limit is refused with the limit shown (${locale})`, async ({ page, context }) => {
    await context.addCookies([{ name: 'i18n_redirected', value: locale, url: BASE_URL }]);
    await signUp(page, { prefix: `withdraw-${locale}` });
    await page.goto('/withdraw');
    await expect(page.getByTestId('withdraw-limits')).toContainText(locale === 'ru' ? 'вывод недоступен' : 'not available at your verification level');
    await page.goto('/withdraw/form/sandbox-chain/BTC');
    await islandsReady(page);
    await page.getByTestId('withdraw-amount').fill('0.001');
    await page.getByTestId('withdraw-address').fill(BTC_ADDRESS);
    await page.getByTestId('withdraw-submit').click();
    const error = page.getByTestId('error-amount');
    await expect(error).toContainText('0 USD');
    await expect(error).toContainText(locale === 'ru' ? 'лимит' : 'limit');
  });
}
