import { expect, test, type Page } from '@playwright/test';
import { BASE_URL, islandsReady, signUp, walletBalance } from './helpers.ts';

/*
 * Withdraw, in ru and en: at level 0 (whose withdrawal limit is 0 USD) the page, the systems and
 * the form tell one story: withdrawals need verification, every system is folded away as locked,
 * and its form sends back to /withdraw. A request above the auto-approval amount (10 000 RUB) is
 * held, approved by the operator's withdraw:approve (through the loopback-only POST
 * /api/dev/withdraw: the CLI cannot open the server's PGlite while it runs), paid out by the card
 * sandbox's signed webhook and shown paid in /history/withdraw; a request the user cancels gives
 * the held amount back.
 */
for (const locale of ['ru', 'en'] as const) {
  test(`at level 0 withdrawals are locked everywhere, with the way to verification (${locale})`, async ({ page, context }) => {
    await context.addCookies([{ name: 'i18n_redirected', value: locale, url: BASE_URL }]);
    await signUp(page, { prefix: `withdraw-${locale}` });
    await page.goto('/withdraw');
    await expect(page.getByTestId('withdraw-limits')).toContainText(locale === 'ru' ? 'вывод недоступен' : 'not available at your verification level');
    const locked = page.getByTestId('withdraw-locked');
    await expect(locked).not.toHaveAttribute('open');
    await locked.locator('summary').click();
    const chain = page.getByTestId('withdraw-system-sandbox-chain-BTC');
    await expect(chain).toBeVisible();
    await expect(chain).toContainText(locale === 'ru' ? 'нужен уровень верификации 1' : 'needs verification level 1');
    await expect(chain).not.toHaveAttribute('href');
    await expect(locked.getByRole('link', { name: locale === 'ru' ? 'Пройти верификацию' : 'Get verified' })).toHaveAttribute('href', '/settings/verification');
    await page.goto('/withdraw/form/sandbox-chain/BTC');
    await expect(page).toHaveURL(`${BASE_URL}/withdraw`);
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
