import { expect, test } from '@playwright/test';
import { BASE_URL, islandsReady, linkTo, signUp, uniqueEmail, waitForMail } from './helpers.ts';

/*
 * Referral in the browser: A copies the invite link; B opens it, signs up and exchanges; A sees B
 * and a pending bonus; after the hold (the terms' hold shortened for the test, the settlement run
 * as at a later time through the dev helper) the bonus is in A's wallet and /history/referral;
 * A invites an address by mail, and the mail's unsubscribe link works without signing in.
 * Sign-ups: two. The terms are global: they are put back at the end.
 */
test('referral: link, sign-up through it, exchange, pending bonus, payout, history, invitation with a working unsubscribe', async ({ browser }) => {
  test.setTimeout(90_000);
  const a = await browser.newContext();
  const pageA = await a.newPage();
  const terms = (body: Record<string, string>) => pageA.request.post('/api/dev/referral', { data: { action: 'terms', ...body } });
  // Both browsers come from this machine's address: the same-IP check is off for the test.
  expect((await terms({ share: '0.2', currency: 'USDT', hold: '1h', min: '0', same_ip_days: '0' })).ok()).toBe(true);
  try {
    // A copies the link.
    await signUp(pageA, { prefix: 'ref-a' });
    await pageA.goto('/referral');
    const link = await pageA.getByTestId('referral-link').inputValue();
    expect(link).toMatch(new RegExp(`^${BASE_URL}/\\?ref=[A-Z0-9]{8}$`));
    await expect(pageA.getByTestId('referral-qr').locator('svg')).toBeVisible();
    await pageA.getByTestId('referral-copy').click();
    await expect(pageA.getByTestId('toast')).toBeVisible();
    expect(await pageA.evaluate(() => navigator.clipboard.readText())).toBe(link);

    // B opens it (the BFF remembers the code), signs up and exchanges.
    const b = await browser.newContext();
    const pageB = await b.newPage();
    await pageB.goto(link.replace(BASE_URL, ''));
    expect((await b.cookies(BASE_URL)).find((cookie) => cookie.name === 'obmen_ref')).toMatchObject({
      value: link.split('=')[1],
      httpOnly: true,
      sameSite: 'Lax',
    });
    // A second link does not overwrite the first.
    await pageB.goto('/?ref=ZZZZ9999');
    expect((await b.cookies(BASE_URL)).find((cookie) => cookie.name === 'obmen_ref')?.value).toBe(link.split('=')[1]);
    const accountB = await signUp(pageB, { prefix: 'ref-b' });
    expect((await pageB.request.post('/api/dev/credit', { data: { account_id: accountB.accountId, currency: 'USDT', amount: '100' } })).ok()).toBe(true);
    await pageB.goto('/exchange/USDT/BTC');
    await islandsReady(pageB);
    await pageB.getByTestId('exchange-amount').fill('50');
    await expect(pageB.getByTestId('exchange-quote')).toHaveAttribute('data-state', 'ready');
    await pageB.getByTestId('exchange-confirm').click();
    await expect(pageB.getByTestId('exchange-result')).toBeVisible();
    await b.close();

    // A sees B (masked) and a pending bonus.
    await pageA.goto('/referral');
    const masked = `${accountB.email.slice(0, 1)}***@${accountB.email.split('@')[1]}`;
    await expect(pageA.getByTestId('referee')).toHaveCount(1);
    await expect(pageA.getByTestId('referee')).toContainText(masked);
    await expect(pageA.getByTestId('referral-pending')).not.toHaveText(/^0,00 USDT$/);
    await expect(pageA.getByTestId('referral-paid')).toHaveText('0,00 USDT');
    const pending = (await pageA.getByTestId('referral-pending').textContent())!.trim();

    // After the hold, the settlement pays it into A's wallet.
    const later = new Date(Date.now() + 2 * 3600_000).toISOString();
    const settle = await pageA.request.post('/api/dev/referral', { data: { action: 'settle', now: later } });
    expect(((await settle.json()) as { settled: unknown[] }).settled.length).toBeGreaterThanOrEqual(1);
    await pageA.goto('/referral');
    await expect(pageA.getByTestId('referral-paid')).toHaveText(pending);
    await expect(pageA.getByTestId('referral-pending')).toHaveText('0,00 USDT');
    const wallets = (await (await pageA.request.get('/api/wallets')).json()) as { wallets: Array<{ currency: string; balance: string }> };
    const usdt = wallets.wallets.find((wallet) => wallet.currency === 'USDT');
    expect(Number(usdt?.balance)).toBeGreaterThan(0);
    expect(Number(pending.replace(/\s|USDT/g, '').replace(',', '.'))).toBe(Number(usdt!.balance));
    await pageA.goto('/history/referral');
    const row = pageA.getByTestId('history-row');
    await expect(row).toHaveCount(1);
    await expect(row).toContainText(masked);
    await expect(row.getByTestId('bonus-state')).toHaveText('Выплачен');

    // A invites an address by mail; the mail's unsubscribe link works without signing in.
    const invitee = uniqueEmail('invitee');
    await pageA.goto('/referral');
    await islandsReady(pageA);
    const form = pageA.getByTestId('form-referral-mailing');
    await form.locator('textarea').fill(invitee);
    await form.locator('select').selectOption('en');
    await form.getByRole('button').click();
    await expect(pageA.getByTestId('mailing-done')).toBeVisible();
    const mail = await waitForMail(pageA.request, invitee, 'referral_invite');
    expect(mail.locale).toBe('en');
    expect(mail.links).toContain(link);
    const unsubscribe = linkTo(mail, '/unsubscribe');
    const c = await browser.newContext();
    const pageC = await c.newPage();
    await pageC.goto(unsubscribe.pathname + unsubscribe.search);
    await islandsReady(pageC);
    await pageC.getByTestId('unsubscribe-button').click();
    await expect(pageC.getByTestId('unsubscribed')).toBeVisible();
    await pageC.reload();
    await expect(pageC.getByTestId('unsubscribe')).toContainText('уже отписан');
    await c.close();
  } finally {
    await terms({ hold: '14d', min: '1', same_ip_days: '30' });
    await a.close();
  }
});
