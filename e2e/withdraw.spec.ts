import { expect, test, type Page } from '@playwright/test';
import { BASE_URL, islandsReady, signUp, walletBalance } from './helpers.ts';

/*
 * Withdraw (issue 14), in ru and en: a request over the verification level's limit is refused
 * with the limit shown (a new account is level 0, whose withdrawal limit is 0 USD); a request
 * above the auto-approval amount (10 000 RUB) is held, approved by the operator's
 * withdraw:approve (through the loopback-only POST /api/dev/withdraw: the CLI cannot open the
 * server's PGlite while it runs), paid out by the card sandbox's signed webhook and shown paid in
 * /history/withdraw; a request the user cancels gives the held amount back.
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

const TEXT = {
  ru: { requested: 'Ожидает проверки', paid: 'Выплачена', cancelled: 'Отменена' },
  en: { requested: 'Awaiting review', paid: 'Paid', cancelled: 'Cancelled' },
} as const;

/** The RUB wallet of the sidebar: available (exact) and held (as shown). */
async function rub(page: Page) {
  return { available: await walletBalance(page, 'RUB'), held: page.locator('.sidebar [data-wallet-currency="RUB"] [data-wallet-held]') };
}

async function requestWithdrawal(page: Page, amount: string) {
  await page.goto('/withdraw/form/sandbox-card/RUB');
  await islandsReady(page);
  await page.getByTestId('withdraw-amount').fill(amount);
  await page.getByTestId('withdraw-card_number').fill('4242 4242 4242 4242');
  await page.getByTestId('withdraw-card_holder').fill('IVAN PETROV');
  await page.getByTestId('withdraw-submit').click();
  const status = page.getByTestId('withdraw-status');
  await expect(status).toHaveAttribute('data-state', 'requested');
  return (await status.getAttribute('data-id'))!;
}

for (const locale of ['ru', 'en'] as const) {
  test(`a withdrawal above the auto-approval amount is held, approved by the operator, paid; a cancelled one releases its hold (${locale})`, async ({
    page,
    context,
  }) => {
    test.setTimeout(120_000);
    await context.addCookies([{ name: 'i18n_redirected', value: locale, url: BASE_URL }]);
    const account = await signUp(page, { prefix: `withdraw-held-${locale}` });
    expect((await page.request.post('/api/dev/level', { data: { account_id: account.accountId, level: 1 } })).ok()).toBe(true);
    expect((await page.request.post('/api/dev/credit', { data: { account_id: account.accountId, currency: 'RUB', amount: '40000' } })).ok()).toBe(true);

    const id = await requestWithdrawal(page, '15000');
    await expect(page.getByTestId('withdraw-state')).toHaveText(TEXT[locale].requested);
    let wallet = await rub(page);
    await expect.poll(async () => walletBalance(page, 'RUB')).toBe('25000.00');
    await expect(wallet.held).toBeVisible();
    await expect(wallet.held).toContainText(locale === 'ru' ? /15\s000,00/ : '15,000.00');

    // The operator approves; the payout worker hands it to the sandbox, whose webhook says paid (~20 s).
    const approved = await page.request.post('/api/dev/withdraw', { data: { action: 'approve', id } });
    expect(approved.ok(), await approved.text()).toBe(true);
    await expect
      .poll(async () => ((await (await page.request.get(`/api/withdraw/status/${id}`)).json()) as { withdrawal: { state: string } }).withdrawal.state, {
        timeout: 90_000,
        intervals: [2_000],
      })
      .toBe('paid');
    await page.goto('/history/withdraw');
    const row = page.locator('tr', { has: page.getByTestId('history-state') }).first();
    await expect(row.getByTestId('history-state')).toHaveText(TEXT[locale].paid);
    wallet = await rub(page);
    expect(wallet.available).toBe('25000.00');
    await expect(wallet.held).toBeHidden();

    // Cancelled while awaiting review: the held amount is available again.
    await requestWithdrawal(page, '12000');
    await expect.poll(async () => walletBalance(page, 'RUB')).toBe('13000.00');
    await page.getByTestId('withdraw-cancel').click();
    await expect(page.getByTestId('withdraw-status')).toHaveAttribute('data-state', 'cancelled');
    await expect(page.getByTestId('withdraw-state')).toHaveText(TEXT[locale].cancelled);
    await expect.poll(async () => walletBalance(page, 'RUB')).toBe('25000.00');
    await page.reload();
    wallet = await rub(page);
    expect(wallet.available).toBe('25000.00');
    await expect(wallet.held).toBeHidden();
  });
}
