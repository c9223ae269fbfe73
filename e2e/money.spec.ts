import { expect, test, type Locator, type Page } from '@playwright/test';
import { rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BASE_URL, DEMO, headerBalance, islandsReady, logIn, signUp, toMinor, visible, waitForMail, walletBalance } from './helpers.ts';

/*
 * In the browser: exchange one pair, convert everything, transfer to another user, the
 * history of all three, and that a double click moves money once.
 *
 * The demo account's balances are shared state: the signed-in tests run in order, in one worker.
 * Sign-ups: one (the transfer's recipient), within the run's budget of 10 (see helpers.ts).
 * Sign-ins: every browser signs in from 127.0.0.1, which has a budget per 15 minutes (login_ip,
 * shared with the other specs), so this file signs in once and reuses the session (storageState).
 */

/** Per worker process: the serial block below runs in one worker. */
const DEMO_STATE = join(tmpdir(), `obmen-e2e-demo-session-${process.pid}.json`);

const PRECISION: Record<string, number> = { USDT: 6, BTC: 8, RUB: 2, USD: 2, ETH: 18 };

/** Marks the page: a reload or navigation loses the mark, so a live update can be told from a reload. */
async function markPage(page: Page) {
  await page.evaluate(() => ((window as unknown as { __e2eMark: number }).__e2eMark = 1));
}
async function expectSamePage(page: Page) {
  expect(await page.evaluate(() => (window as unknown as { __e2eMark?: number }).__e2eMark)).toBe(1);
}

async function exchangeTotal(page: Page): Promise<number> {
  const response = await page.request.get('/api/exchange/history?per_page=1');
  expect(response.ok()).toBe(true);
  return ((await response.json()) as { total: number }).total;
}

/** Presses Tab until `target` has the focus (at most `limit` times): how a keyboard user gets there. */
async function tabTo(page: Page, target: Locator, limit = 80) {
  for (let step = 0; step < limit; step++) {
    if (await target.evaluate((element) => element === document.activeElement)) return;
    await page.keyboard.press('Tab');
  }
  await expect(target, `reachable with Tab within ${limit} presses`).toBeFocused();
}

/** Types an amount on the pair page and waits for the quote; returns what it says will be received. */
async function quoteFor(page: Page, amount: string): Promise<string> {
  await islandsReady(page);
  await page.getByTestId('exchange-amount').fill(amount);
  const quote = page.getByTestId('exchange-quote');
  await expect(quote).toHaveAttribute('data-state', 'ready');
  await expect(page.getByTestId('quote-amount')).toContainText(amount);
  return (await page.getByTestId('quote-receive').getAttribute('data-amount'))!;
}

test.describe('money, signed in as the demo account', () => {
  test.describe.configure({ mode: 'serial' });
  test.use({ storageState: DEMO_STATE });

  // browser.newContext() inside these tests takes the block's options, storageState included.
  const SIGNED_OUT = { storageState: { cookies: [], origins: [] } };

  test.beforeAll(async ({ browser }) => {
    const context = await browser.newContext(SIGNED_OUT);
    await logIn(await context.newPage(), DEMO.email, DEMO.password);
    await context.storageState({ path: DEMO_STATE });
    await context.close();
  });
  test.afterAll(() => rmSync(DEMO_STATE, { force: true }));

  test('exchange USDT to BTC from the exchange page: the header balance and the wallets change without a reload', async ({ page }) => {
    // The wallet sidebar leads to the pairs selling that currency.
    await page.goto('/history');
    await page.locator('.sidebar [data-wallet-currency="USDT"]').click();
    await expect(page).toHaveURL(`${BASE_URL}/exchanges?search=USDT/`);
    const pairs = page.getByTestId('pair');
    await expect(pairs.first()).toBeVisible();
    for (const pair of await pairs.all()) expect(await pair.getAttribute('data-pair')).toMatch(/^USDT\//);
    await page.locator('[data-testid="pair"][data-pair="USDT/BTC"]').click();
    await expect(page).toHaveURL(`${BASE_URL}/exchange/USDT/BTC`);

    const usdtBefore = await walletBalance(page, 'USDT');
    const btcBefore = await walletBalance(page, 'BTC');
    const totalBefore = await headerBalance(page);
    // Thousands grouped as in the wallet list (ru: a narrow no-break space, en: a comma), on the server and live.
    expect(totalBefore).toMatch(/^\d{1,3}(\u202f\d{3})*,\d{2} USD$/);
    await markPage(page);

    const receive = await quoteFor(page, '100');
    expect(toMinor(receive, 8)).toBeGreaterThan(0n);
    await expect(page.getByTestId('quote-timer')).toBeVisible();
    await page.getByTestId('exchange-confirm').click();

    await expect(page.getByTestId('exchange-result')).toBeVisible();
    await expect(page.getByTestId('exchange-result-message')).toContainText('USDT');
    // Exactly the quoted amount arrived; exactly the typed amount left.
    await expect.poll(async () => toMinor(await walletBalance(page, 'BTC'), 8)).toBe(toMinor(btcBefore, 8) + toMinor(receive, 8));
    expect(toMinor(await walletBalance(page, 'USDT'), 6)).toBe(toMinor(usdtBefore, 6) - toMinor('100', 6));
    // The header total moved (spread and fee) and the BTC wallet is the highlighted last exchange.
    await expect.poll(() => headerBalance(page)).not.toBe(totalBefore);
    expect(await headerBalance(page)).toMatch(/^\d{1,3}(\u202f\d{3})*,\d{2} USD$/);
    await expect(page.locator('.sidebar [data-wallet-item]:has([data-wallet-currency="BTC"])')).toHaveClass(/\blast\b/);
    await expectSamePage(page);

    // A new page load shows the same (the server's state, not only the browser's).
    await page.reload();
    expect(toMinor(await walletBalance(page, 'BTC'), 8)).toBe(toMinor(btcBefore, 8) + toMinor(receive, 8));
  });

  test('a double click on confirm moves money once', async ({ page }) => {
    await page.goto('/exchange/USDT/BTC');
    const before = await exchangeTotal(page);
    const usdtBefore = await walletBalance(page, 'USDT');
    const posts: string[] = [];
    page.on('request', (request) => {
      if (request.method() === 'POST' && request.url().endsWith('/api/exchange/USDT/BTC')) posts.push(request.headers()['idempotency-key'] ?? '');
    });
    await quoteFor(page, '20');
    await page.getByTestId('exchange-confirm').dblclick();
    // Both clicks were dispatched before dblclick() returned, so a second POST would be on the
    // list by the time the first one's result is shown.
    await expect(page.getByTestId('exchange-result')).toBeVisible();

    expect(posts.length, 'one POST per confirmed quote').toBe(1);
    expect(posts[0]).toMatch(/^[0-9a-f-]{36}$/);
    expect(await exchangeTotal(page)).toBe(before + 1);
    expect(toMinor(await walletBalance(page, 'USDT'), 6)).toBe(toMinor(usdtBefore, 6) - toMinor('20', 6));
  });

  test('the quote counts down; once expired, confirm asks for a fresh rate instead', async ({ page }) => {
    await page.clock.install();
    await page.goto('/exchange/USDT/BTC');
    await islandsReady(page);
    const quote = page.getByTestId('exchange-quote');
    const confirm = page.getByTestId('exchange-confirm');
    await page.getByTestId('exchange-amount').fill('3');
    await page.clock.runFor(1000);
    await expect(quote).toHaveAttribute('data-state', 'ready');
    await expect(page.getByTestId('quote-timer')).toContainText('30');
    await page.clock.runFor(10_000);
    await expect(page.getByTestId('quote-timer')).toContainText('20');
    await page.clock.runFor(21_000);
    await expect(quote).toHaveAttribute('data-state', 'expired');
    await expect(confirm).toHaveText('Обновить курс');
    const before = await exchangeTotal(page);
    await confirm.click();
    await expect(quote).toHaveAttribute('data-state', 'ready');
    await expect(confirm).toHaveText('Подтвердить обмен');
    expect(await exchangeTotal(page)).toBe(before);
  });

  test('a quote already used elsewhere is refused with its message and a fresh quote, which then goes through', async ({ page }) => {
    await page.goto('/exchange/USDT/BTC');
    let token = '';
    page.on('response', async (response) => {
      if (response.url().endsWith('/api/exchange/check') && response.ok()) token = ((await response.json()) as { quote: { token: string } }).quote.token;
    });
    await quoteFor(page, '5');
    await expect.poll(() => token).not.toBe('');
    // Spend the page's quote behind its back (another tab, say).
    const spent = await page.request.post('/api/exchange/USDT/BTC', {
      form: { quote: token },
      headers: { 'idempotency-key': `e2e-other-tab-${Date.now()}` },
    });
    expect(spent.status()).toBe(200);
    const before = await exchangeTotal(page);

    await page.getByTestId('exchange-confirm').click();
    await expect(page.getByTestId('exchange-notice')).toHaveText(/уже использован/);
    await expect(page.getByTestId('exchange-quote')).toHaveAttribute('data-state', 'ready');
    expect(await exchangeTotal(page)).toBe(before);

    await page.getByTestId('exchange-confirm').click();
    await expect(page.getByTestId('exchange-result')).toBeVisible();
    expect(await exchangeTotal(page)).toBe(before + 1);
  });

  test('transfer to a second account: checked, sent once, and it arrives there', async ({ page, browser }) => {
    const recipientContext = await browser.newContext(SIGNED_OUT);
    const recipientPage = await recipientContext.newPage();
    const recipient = await signUp(recipientPage, { prefix: 'money' });
    // The recipient chooses an anti-phishing code first: the transfer's mail must start with it.
    await recipientPage.goto('/settings/mail');
    await islandsReady(recipientPage);
    await recipientPage.getByTestId('anti-phishing-input').fill('синий кит 7');
    await recipientPage.getByTestId('anti-phishing-save').click();
    await expect(recipientPage.getByTestId('anti-phishing-saved')).toHaveText('Код защиты от фишинга сохранён');
    await expect(recipientPage.getByTestId('anti-phishing-current')).toHaveText('Сейчас в письмах: «синий кит 7»');

    await page.goto('/transfer');
    await islandsReady(page);
    const me = await visible(page, 'account-id').getAttribute('data-account-id');
    const usdtBefore = await walletBalance(page, 'USDT');
    await markPage(page);

    // To yourself: refused, the reason next to the field.
    await page.getByTestId('transfer-account').fill(me!);
    await page.getByTestId('transfer-currency').selectOption('USDT');
    await page.getByTestId('transfer-amount').fill('25');
    await page.getByTestId('transfer-check-button').click();
    await expect(page.getByTestId('error-account_id')).toHaveText('Нельзя перевести самому себе');

    await page.getByTestId('transfer-account').fill(String(recipient.accountId));
    await page.getByTestId('transfer-comment').fill('e2e: за обед');
    await page.getByTestId('transfer-check-button').click();
    await expect(page.getByTestId('transfer-recipient')).toContainText(String(recipient.accountId));
    await expect(page.getByTestId('transfer-recipient')).toContainText('***');
    await expect(page.getByTestId('transfer-total')).toHaveText('25,00 USDT');

    const posts: string[] = [];
    page.on('request', (request) => {
      if (request.method() === 'POST' && request.url().endsWith('/api/transfer')) posts.push(request.headers()['idempotency-key'] ?? '');
    });
    await page.getByTestId('transfer-send').dblclick();
    await expect(page.getByTestId('transfer-result')).toBeVisible();
    expect(posts).toHaveLength(1);
    await expect.poll(async () => toMinor(await walletBalance(page, 'USDT'), 6)).toBe(toMinor(usdtBefore, 6) - toMinor('25', 6));
    await expectSamePage(page);

    // The recipient sees it in their wallet and in their transfer history.
    await recipientPage.goto('/history/transfer');
    expect(await walletBalance(recipientPage, 'USDT')).toBe('25.000000');
    const row = recipientPage.getByTestId('history-row').first();
    await expect(row).toHaveAttribute('data-direction', 'in');
    await expect(row.getByTestId('history-amount')).toHaveText('+25,00 USDT');
    await expect(row).toContainText('e2e: за обед');
    // Told by mail (the money-mails job), in their language, under their code.
    const mail = await waitForMail(recipientPage.request, recipient.email, 'transfer_received');
    expect(mail.subject).toBe('Вам перевод: 25,00\u00a0USDT');
    expect(mail.text.split('\n')[0]).toBe('Ваш код защиты от фишинга: «синий кит 7». Письмо без него или с другим кодом пришло не от нас.');
    await recipientContext.close();
  });

  test('convert everything to USDT: each leg reported, the wallets emptied, USDT credited', async ({ page }) => {
    await page.goto('/exchange/all');
    await expect(page).toHaveURL(`${BASE_URL}/exchange/all`);
    await islandsReady(page);
    const sources = ['RUB', 'USD', 'BTC', 'ETH'];
    for (const code of sources) await expect(page.getByTestId(`leg-${code}`)).toHaveAttribute('data-status', 'planned');
    const usdtBefore = await walletBalance(page, 'USDT');
    const totalBefore = await headerBalance(page);
    await markPage(page);

    await page.getByTestId('exchange-all-confirm').dblclick();
    const result = page.getByTestId('exchange-all-result');
    await expect(result).toHaveAttribute('data-status', 'completed');
    await expect(page.getByTestId('exchange-all-message')).toContainText('USDT');
    for (const code of sources) {
      await expect(result.getByTestId(`leg-${code}`)).toHaveAttribute('data-status', 'completed');
      await expect.poll(async () => toMinor(await walletBalance(page, code), PRECISION[code]!)).toBe(0n);
    }
    expect(toMinor(await walletBalance(page, 'USDT'), 6)).toBeGreaterThan(toMinor(usdtBefore, 6));
    await expect.poll(() => headerBalance(page)).not.toBe(totalBefore);
    await expectSamePage(page);

    // Nothing left to convert; an unknown target currency is the 404 page.
    await page.goto('/exchange/all/USDT');
    await expect(page.getByTestId('exchange-all-empty')).toBeVisible();
    expect((await page.goto('/exchange/all/NOPE'))?.status()).toBe(404);
  });

  test('history shows the exchanges, the conversion and the transfer; filters, paging and CSV', async ({ page }) => {
    await page.goto('/history');
    await expect(page.getByTestId('history-tab-exchange')).toHaveAttribute('aria-current', 'page');
    const rows = page.getByTestId('history-row');
    await expect(rows.first()).toBeVisible();
    await expect(page.locator('[data-testid="history-row"] .tag').first()).toBeVisible(); // a convert-all leg
    await expect(page.locator('[data-testid="history-row"]', { hasText: 'USDT → BTC' }).first()).toBeVisible();
    // The rate with the dearer currency first, whichever way the exchange went.
    await expect(page.locator('[data-testid="history-row"]', { hasText: 'USDT → BTC' }).first().getByTestId('history-rate')).toHaveText(
      /^1\u00a0BTC = [\d\u202f]+,\d{2}\u00a0USDT$/,
    );
    const total = Number(await page.getByTestId('history-total').getAttribute('data-total'));
    expect(total).toBeGreaterThanOrEqual(8);

    // Filter by currency (a GET form): only ETH rows.
    await page.getByTestId('filter-currency').selectOption('ETH');
    await page.getByTestId('filter-apply').click();
    await expect(page).toHaveURL(/currency=ETH/);
    await expect(rows).toHaveCount(1);
    await expect(rows.first()).toContainText('ETH → USDT');

    // The CSV link exports the filtered rows.
    const csvHref = await page.getByTestId('history-csv').getAttribute('href');
    expect(csvHref).toContain('format=csv');
    const csv = await page.request.get(csvHref!);
    expect(csv.headers()['content-type']).toContain('text/csv');
    const lines = (await csv.text()).trim().split(/\r?\n/);
    expect(lines[0]).toContain('amount_receive');
    expect(lines).toHaveLength(2);

    // Paging by links.
    await page.goto('/history/exchange?per_page=3');
    await expect(rows).toHaveCount(3);
    await page.getByTestId('pager-next').click();
    await expect(page).toHaveURL(/page=2/);
    await expect(page).toHaveURL(/per_page=3/);
    await expect(rows).toHaveCount(3);

    // The transfer tab.
    await page.getByTestId('history-tab-transfer').click();
    await expect(page).toHaveURL(`${BASE_URL}/history/transfer`);
    const sent = page.locator('[data-testid="history-row"][data-direction="out"]').first();
    await expect(sent.getByTestId('history-amount')).toHaveText('−25,00 USDT');

    // The payment (purchases) and deposit tabs are tables too: filters and a count (e2e/deposit.spec.ts fills them).
    for (const kind of ['payment', 'deposit']) {
      await page.goto(`/history/${kind}`);
      await expect(page.getByTestId('history-filters')).toBeVisible();
      await expect(page.getByTestId('history-total')).toBeVisible();
      await expect(page.getByTestId('history-nothing')).toHaveCount(0);
    }
  });

  test('history pages are server-rendered: readable without JavaScript', async ({ browser }) => {
    const context = await browser.newContext({ javaScriptEnabled: false, storageState: DEMO_STATE });
    const page = await context.newPage();
    await page.goto('/history/transfer?direction=out');
    await expect(page.getByTestId('history-row').first()).toContainText('25,00 USDT');
    await expect(page.getByTestId('filter-direction')).toHaveValue('out');
    await context.close();
  });

  test('at a 375 px phone the money pages fit the screen', async ({ browser }) => {
    const context = await browser.newContext({ viewport: { width: 375, height: 800 }, isMobile: true, hasTouch: true, storageState: DEMO_STATE });
    const page = await context.newPage();
    for (const path of ['/exchanges', '/exchange/USDT/BTC', '/transfer', '/history', '/history/transfer', '/exchange/all']) {
      await page.goto(path);
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
      expect(overflow, `${path} scrolls sideways`).toBeLessThanOrEqual(0);
    }
    await context.close();
  });

  // The whole journey with the keyboard alone (Tab, typing, Enter, Escape), and focus
  // lands on each result. Last in this block: it moves the demo account's money too.
  test('keyboard only: skip link, sign in, exchange and transfer, focus on each result', async ({ browser }) => {
    test.setTimeout(120_000);
    const recipientContext = await browser.newContext(SIGNED_OUT);
    const recipient = await signUp(await recipientContext.newPage(), { prefix: 'keys' });
    await recipientContext.close();
    const context = await browser.newContext(SIGNED_OUT);
    const page = await context.newPage();

    await page.goto('/login');
    await islandsReady(page);
    await page.keyboard.press('Tab');
    await expect(page.getByTestId('skip-link')).toBeFocused();
    await page.keyboard.press('Enter');
    await expect(page.locator('main')).toBeFocused();
    await tabTo(page, page.locator('input[name="email"]'));
    await page.keyboard.type(DEMO.email);
    await page.keyboard.press('Tab');
    await expect(page.locator('input[name="password"]')).toBeFocused();
    await page.keyboard.type(DEMO.password);
    await page.keyboard.press('Enter');
    await expect(page).not.toHaveURL(/\/login/);

    await page.goto('/exchange/USDT/BTC');
    await islandsReady(page);
    await tabTo(page, page.getByTestId('exchange-amount'));
    await page.keyboard.type('10');
    await expect(page.getByTestId('exchange-quote')).toHaveAttribute('data-state', 'ready');
    await tabTo(page, page.getByTestId('exchange-confirm'));
    await page.keyboard.press('Enter');
    await expect(page.getByTestId('exchange-result').locator('h2')).toBeFocused();

    await page.goto('/transfer');
    await islandsReady(page);
    await tabTo(page, page.getByTestId('transfer-account'));
    await page.keyboard.type(String(recipient.accountId));
    const currency = page.getByTestId('transfer-currency');
    await tabTo(page, currency);
    await page.keyboard.press('Home');
    for (let step = 0; step < 20 && (await currency.inputValue()) !== 'USDT'; step++) await page.keyboard.press('ArrowDown');
    await expect(currency).toHaveValue('USDT');
    await tabTo(page, page.getByTestId('transfer-amount'));
    await page.keyboard.type('5');
    await page.keyboard.press('Enter');
    await expect(page.getByTestId('transfer-check')).toBeFocused();
    await tabTo(page, page.getByTestId('transfer-send'));
    await page.keyboard.press('Enter');
    await expect(page.getByTestId('transfer-result').locator('h2')).toBeFocused();

    // The logout dialog: opened from the keyboard, closed by Escape, focus back on its opener.
    const logout = page.locator('[data-logout]').filter({ visible: true }).first();
    await tabTo(page, logout);
    await page.keyboard.press('Enter');
    await expect(page.getByTestId('logout-dialog')).toBeVisible();
    await page.keyboard.press('Escape');
    await expect(page.getByTestId('logout-dialog')).toBeHidden();
    await expect(logout).toBeFocused();
    await context.close();
  });
});

test.describe('money pages for visitors', () => {
  test('the pair list searches by what is sold and what is bought, also without JavaScript', async ({ browser }) => {
    const context = await browser.newContext({ javaScriptEnabled: false });
    const page = await context.newPage();
    await page.goto('/exchanges');
    await page.locator('#pair-search-input').fill('/USDT');
    await page.locator('[data-testid="pair-search"] button[type="submit"]').click();
    await expect(page).toHaveURL(`${BASE_URL}/exchanges?search=%2FUSDT`);
    const pairs = page.getByTestId('pair');
    await expect(pairs.first()).toBeVisible();
    for (const pair of await pairs.all()) expect(await pair.getAttribute('data-pair')).toMatch(/\/USDT$/);
    await page.goto('/exchanges?search=BTC/');
    for (const pair of await pairs.all()) expect(await pair.getAttribute('data-pair')).toMatch(/^BTC\//);
    await context.close();
  });

  test('an unknown or impossible pair is the 404 page; lower case redirects to the one address', async ({ page }) => {
    for (const path of ['/exchange/XXX/BTC', '/exchange/BTC/BTC', '/history/nothing']) {
      const response = await page.goto(path);
      expect(response?.status(), path).toBe(404);
      await expect(page.getByRole('heading', { level: 1 })).toHaveText('Страница не найдена');
    }
    await page.goto('/exchange/usdt/btc');
    await expect(page).toHaveURL(`${BASE_URL}/exchange/USDT/BTC`);
  });

  test('signed-out visitors see a quote with a prompt to log in; account pages send them to the login page', async ({ page }) => {
    // Typed before the island hydrates: the form takes it up once it does.
    await page.goto('/exchange/BTC/USDT');
    await page.getByTestId('exchange-amount').fill('0.01');
    await expect(page.getByTestId('exchange-quote')).toHaveAttribute('data-state', 'ready');
    await expect(page.getByTestId('exchange-login-prompt')).toBeVisible();
    await expect(page.getByTestId('exchange-confirm')).toHaveCount(0);
    for (const path of ['/history', '/history/transfer', '/transfer', '/exchange/all']) {
      await page.goto(path);
      await expect(page).toHaveURL(`${BASE_URL}/login?next=${encodeURIComponent(path)}`);
    }
  });

  test('the home page quotes visitors and carries the amount to the pair page', async ({ page }) => {
    await page.goto('/');
    const quote = page.getByTestId('landing-quote');
    await expect(quote).toBeVisible();
    await islandsReady(page);
    await expect(page.getByTestId('landing-receive')).toHaveText(/^\d/);
    await page.getByTestId('landing-amount').fill('250');
    await expect(page.getByTestId('landing-rate')).toContainText('≈');
    await page.getByTestId('landing-go').click();
    await expect(page).toHaveURL(`${BASE_URL}/exchange/USDT/BTC?amount=250`);
    await expect(page.getByTestId('exchange-amount')).toHaveValue('250');
    await expect(page.getByTestId('exchange-quote')).toHaveAttribute('data-state', 'ready');
  });
});
