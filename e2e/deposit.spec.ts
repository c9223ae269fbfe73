import { expect, test, type Page } from '@playwright/test';
import { BASE_URL, evmChain, islandsReady, sandboxPayments, signUp, toMinor, walletBalance } from './helpers.ts';

/*
 * Deposit, in ru and en: by card through the sandbox's hosted page, the balance
 * changing; a declined card says so; a chain deposit appears, gains confirmations and is
 * credited (the chain driven by the operator's commands through POST /api/dev/payments); USDT
 * sent on the real development chain (anvil) from its outside wallet arrives the same way.
 */
const TEXT = {
  ru: { card: 'Банковская карта (песочница)', credited: 'зачислено в кошелёк', declined: 'Платёж отклонён', of: 'из 12', copied: 'Адрес скопирован' },
  en: { card: 'Bank card (sandbox)', credited: 'credited to your wallet', declined: 'The payment was declined', of: 'of 12', copied: 'Address copied' },
} as const;

async function payOnHostedPage(page: Page, card: string) {
  await expect(page).toHaveURL(/\/api\/payments\/sandbox-card\/pay\//);
  await page.locator('#card_number').fill(card);
  await page.locator('#expiry').fill('12/30');
  await page.locator('#cvc').fill('123');
  await page.getByTestId('sandbox-pay').click();
}

for (const locale of ['ru', 'en'] as const) {
  test.describe(`deposit (${locale})`, () => {
    test.beforeEach(async ({ context }) => {
      await context.addCookies([{ name: 'i18n_redirected', value: locale, url: BASE_URL }]);
    });

    test('by card through the hosted page: credited, the balance changes; a declined card says so', async ({ page }) => {
      // Two payments through the hosted page and the history: near the default 30 s on a busy machine.
      test.slow();
      await signUp(page, { prefix: `deposit-card-${locale}` });
      await page.goto('/deposit');
      const system = page.getByTestId('deposit-system-sandbox-card-RUB');
      await expect(system).toContainText(TEXT[locale].card);
      await system.click();
      await expect(page).toHaveURL(`${BASE_URL}/deposit/form/sandbox-card/RUB`);
      await islandsReady(page);
      // The island's submit is enabled once React has hydrated it: typing before that is lost.
      await expect(page.getByTestId('deposit-submit')).toBeEnabled();

      // Checked in the browser by the shared rules: below the minimum, then the fee of a valid amount.
      await page.getByTestId('deposit-amount').fill('50');
      await expect(page.getByTestId('error-amount')).toContainText('100');
      await page.getByTestId('deposit-amount').fill('1000');
      await expect(page.getByTestId('deposit-fee')).toHaveText(locale === 'ru' ? '15,00 RUB' : '15.00 RUB');
      await page.getByTestId('deposit-submit').click();
      await payOnHostedPage(page, '4242 4242 4242 4242');

      // Back on the deposit's own page, credited; the wallet has the amount less the fee.
      await expect(page).toHaveURL(/\/deposit\/form\/sandbox-card\/RUB\?payment=/);
      await expect(page.getByTestId('deposit-state')).toHaveAttribute('data-state', 'credited');
      await expect(page.getByTestId('deposit-message')).toContainText(TEXT[locale].credited);
      expect(toMinor(await walletBalance(page, 'RUB'), 2)).toBe(98_500n);

      // A declined card: the page says so and nothing is credited.
      await page.getByTestId('deposit-again').click();
      await islandsReady(page);
      await expect(page.getByTestId('deposit-submit')).toBeEnabled();
      await page.getByTestId('deposit-amount').fill('200');
      await page.getByTestId('deposit-submit').click();
      await payOnHostedPage(page, '4000 0000 0000 0002');
      await expect(page.getByTestId('deposit-state')).toHaveAttribute('data-state', 'declined');
      await expect(page.getByTestId('deposit-message')).toContainText(TEXT[locale].declined);
      expect(toMinor(await walletBalance(page, 'RUB'), 2)).toBe(98_500n);

      // Both in the history, each row linking to its page.
      await page.goto('/history/deposit');
      const rows = page.getByTestId('history-row');
      await expect(rows).toHaveCount(2);
      await expect(rows.first()).toHaveAttribute('data-status', 'declined');
      await expect(rows.nth(1)).toHaveAttribute('data-status', 'credited');
      await rows.nth(1).getByTestId('history-link').click();
      await expect(page.getByTestId('deposit-state')).toHaveAttribute('data-state', 'credited');
    });

    test('on chain: the transaction appears, gains confirmations and is credited', async ({ page }) => {
      await signUp(page, { prefix: `deposit-chain-${locale}` });
      await page.goto('/deposit/form/sandbox-chain/ETH');
      await islandsReady(page);
      const address = (await page.getByTestId('deposit-address').textContent())!.trim();
      expect(address).toMatch(/^0x[0-9a-fA-F]{40}$/);
      await expect(page.getByTestId('deposit-qr')).toBeVisible();
      await page.getByTestId('deposit-copy').click();
      await expect(page.getByTestId('deposit-address-box')).toContainText(TEXT[locale].copied);
      expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(address);

      await sandboxPayments(page.request, { action: 'chain_send', address, amount: '0.05' });
      await sandboxPayments(page.request, { action: 'chain_mine', blocks: 1 });
      const tx = page.getByTestId('deposit-tx');
      await expect(tx).toHaveAttribute('data-state', 'pending');
      await expect(tx.getByTestId('deposit-confirmations')).toContainText(TEXT[locale].of);

      await sandboxPayments(page.request, { action: 'chain_mine', blocks: 11 });
      await expect(tx).toHaveAttribute('data-state', 'credited');
      await expect(tx.getByTestId('deposit-confirmations')).toHaveCount(0);
      // The sidebar's wallet was refreshed without a reload.
      await expect.poll(async () => toMinor(await walletBalance(page, 'ETH'), 18)).toBeGreaterThan(0n);

      await tx.getByRole('link').click();
      await expect(page.getByTestId('deposit-state')).toHaveAttribute('data-state', 'credited');
      const receive = (await page.getByTestId('deposit-receive').textContent())!.replace(/[^\d,.]/g, '').replace(',', '.');
      expect(toMinor(await walletBalance(page, 'ETH'), 18)).toBe(toMinor(receive, 18));
    });
  });
}

test('on the EVM chain: USDT sent from another wallet appears with its confirmations and is credited', async ({ page, context }) => {
  await context.addCookies([{ name: 'i18n_redirected', value: 'en', url: BASE_URL }]);
  await signUp(page, { prefix: 'deposit-evm' });
  await page.goto('/deposit/form/ethereum/USDT');
  await islandsReady(page);
  await expect(page.getByRole('heading', { level: 1 })).toContainText('Ethereum (local development chain)');
  const address = (await page.getByTestId('deposit-address').textContent())!.trim();
  expect(address).toMatch(/^0x[0-9a-fA-F]{40}$/);
  await expect(page.getByTestId('deposit-qr')).toBeVisible();

  await evmChain(page.request, { action: 'send', currency: 'USDT', address, amount: '25' });
  const tx = page.getByTestId('deposit-tx');
  await expect(tx).toHaveAttribute('data-state', 'pending');
  await expect(tx.getByTestId('deposit-confirmations')).toContainText('1 of 2');
  await evmChain(page.request, { action: 'mine', blocks: 1 });
  await expect(tx).toHaveAttribute('data-state', 'credited');
  await expect.poll(async () => toMinor(await walletBalance(page, 'USDT'), 6)).toBe(25_000_000n);
});
