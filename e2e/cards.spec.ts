import { createHmac, randomUUID } from 'node:crypto';
import { expect, test, type Page } from '@playwright/test';
import { BASE_URL, PASSWORD, islandsReady, signUp } from './helpers.ts';

/*
 * In the browser: order a virtual card and confirm it, see it in "my cards" once the
 * sandbox issuer has made it, reveal its number with the password and see it hidden again (ru);
 * cancel another order and get the fee back, freeze and unfreeze (en).
 * Sign-ups: two, within the run's budget of 10 (see helpers.ts).
 */

const SANDBOX_CARD_SECRET = 'obmen-development-sandbox-card-webhook-secret';

/** A verified account with `amount` USD, credited by a signed sandbox-card deposit. */
async function cardUser(page: Page, locale: 'ru' | 'en', amount: string) {
  const account = await signUp(page, { prefix: 'cards' });
  await page.context().addCookies([{ name: 'i18n_redirected', value: locale, url: BASE_URL }]);
  expect((await page.request.post('/api/dev/level', { data: { account_id: account.accountId, level: 1 } })).ok()).toBe(true);
  const deposit = await page.request.post('/api/deposit/integration_json', { form: { ps: 'sandbox-card', currency: 'USD', amount } });
  expect(deposit.ok(), await deposit.text()).toBe(true);
  const payment = (await deposit.json()).payment;
  const body = JSON.stringify({ id: `e2e-${randomUUID()}`, type: 'payment.paid', payment_id: payment.id, amount: payment.amount, currency: 'USD' });
  const t = Math.floor(Date.now() / 1000);
  const v1 = createHmac('sha256', SANDBOX_CARD_SECRET).update(`${t}.${body}`).digest('hex');
  const paid = await page.request.post('/api/payments/webhook/sandbox-card', {
    data: body,
    headers: { 'content-type': 'application/json', 'x-obmen-signature': `t=${t},v1=${v1}` },
  });
  expect(paid.ok(), await paid.text()).toBe(true);
  return account;
}

async function usd(page: Page): Promise<string> {
  const answer = await (await page.request.get('/api/wallets')).json();
  return answer.wallets.find((wallet: { currency: string }) => wallet.currency === 'USD')?.balance ?? '0';
}

/** Orders a virtual card through the form; returns on the confirm page. */
async function orderVirtual(page: Page, name: string) {
  await page.goto('/cards/list');
  await page.getByTestId('card-order-virtual').click();
  // The form's own page first: checked on the list page, the islands would be "ready" before the form hydrates, and the name typed lost.
  await expect(page).toHaveURL(/\/cards\/order\/virtual/);
  await islandsReady(page);
  await expect(page.getByTestId('card-order-submit')).toBeEnabled();
  await page.getByTestId('card-name_on_card').fill(name);
  await page.getByTestId('card-order-submit').click();
  await expect(page).toHaveURL(/\/cards\/order\/confirm\?card=/);
  await islandsReady(page);
  await expect(page.getByTestId('card-order-status')).toBeVisible();
}

test('ru: order a virtual card, confirm, see it issued, reveal the number with the password and see it hidden again', async ({ page }) => {
  test.setTimeout(60_000);
  await cardUser(page, 'ru', '20');
  const before = await usd(page);
  await orderVirtual(page, 'Ivan Petrov');
  await page.getByTestId('card-order-confirm-button').click();
  await expect(page.getByTestId('card-order-message')).toContainText('Заказ подтверждён');
  expect(Number(await usd(page))).toBe(Number(before) - 5);

  // The sandbox issuer makes the card within seconds.
  await expect(async () => {
    await page.goto('/cards/my');
    await expect(page.getByTestId('my-card').first()).toHaveAttribute('data-status', 'active', { timeout: 1000 });
  }).toPass({ timeout: 30_000 });
  await expect(page.getByTestId('my-card-number')).toHaveText(/^4000 1\d•• •••• \d{4}$/);
  const last4 = (await page.getByTestId('my-card-number').innerText()).slice(-4);
  await page.getByTestId('my-card').first().click();
  await islandsReady(page);

  await page.getByTestId('card-reveal-secret').fill('wrong-password-1');
  await page.getByTestId('card-reveal').click();
  await expect(page.getByRole('alert').filter({ hasText: 'Неверный пароль или код' })).toBeVisible();
  await page.getByTestId('card-reveal-secret').fill(PASSWORD);
  await page.getByTestId('card-reveal').click();
  await expect(page.getByTestId('card-pan')).toHaveText(new RegExp(`^4000 1\\d{3} \\d{4} ${last4}$`));
  await expect(page.getByTestId('card-cvc')).toHaveText(/^\d{3}$/);
  await page.getByTestId('card-hide').click();
  await expect(page.getByTestId('card-pan')).toHaveCount(0);
  await expect(page.getByTestId('card-reveal-form')).toBeVisible();
  // Each reveal is in the card's activity.
  await page.reload();
  await expect(page.locator('[data-testid="card-activity"] li[data-kind="revealed"]')).toHaveCount(1);
  await expect(page.locator('[data-testid="card-activity"] li[data-kind="reveal_refused"]')).toHaveCount(1);
});

test('en: cancel an order and get the fee back; freeze and unfreeze a card', async ({ page }) => {
  test.setTimeout(60_000);
  await cardUser(page, 'en', '20');
  const before = Number(await usd(page));
  await orderVirtual(page, 'Anna Smith');
  expect(Number(await usd(page))).toBe(before - 5);
  await page.getByTestId('card-order-cancel-button').click();
  await expect(page.getByTestId('card-order-message')).toHaveText('Order cancelled: 5.00 USD is back in your wallet');
  await expect(page.getByTestId('card-order-status')).toHaveText('Cancelled');
  expect(Number(await usd(page))).toBe(before);

  await orderVirtual(page, 'Anna Smith');
  await page.getByTestId('card-order-confirm-button').click();
  await expect(page.getByTestId('card-order-status')).not.toHaveText('Awaiting confirmation');
  await expect(async () => {
    await page.goto('/cards/my');
    await expect(page.getByTestId('my-card').first()).toHaveAttribute('data-status', 'active', { timeout: 1000 });
  }).toPass({ timeout: 30_000 });
  await page.getByTestId('my-card').first().click();
  await islandsReady(page);
  await page.getByTestId('card-freeze').click();
  await expect(page.getByTestId('card-status')).toHaveText('Frozen');
  await islandsReady(page);
  await page.getByTestId('card-unfreeze').click();
  await expect(page.getByTestId('card-status')).toHaveText('Active');
  await expect(page.locator('[data-testid="card-activity"] li[data-kind="frozen"]')).toHaveCount(1);
  await expect(page.locator('[data-testid="card-activity"] li[data-kind="unfrozen"]')).toHaveCount(1);
});
