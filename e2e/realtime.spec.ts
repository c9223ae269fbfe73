import { expect, test, type Page } from '@playwright/test';
import { randomBytes } from 'node:crypto';
import { DEMO, headerBalance, islandsReady, logIn, signUp } from './helpers.ts';

/*
 * Realtime in the browser: two contexts, the demo account (A) and a fresh account (B). A
 * transfer from A changes B's header balance without a reload (the realtime socket through the
 * BFF), and B sees the anonymised payment popup. Sign-ups: one.
 */
const SIGNED_OUT = { storageState: { cookies: [], origins: [] } };

/**
 * Resolves when the page's /ws socket says hello (the BFF and the core have accepted it). The
 * frame listener is attached as the socket opens: hello can arrive before page.goto() returns.
 */
function helloOf(page: Page): Promise<void> {
  return new Promise((resolve) => {
    page.on('websocket', (ws) => {
      if (new URL(ws.url()).pathname !== '/ws') return;
      ws.on('framereceived', (frame) => {
        if (String(frame.payload).includes('"hello"')) resolve();
      });
    });
  });
}

async function markPage(page: Page) {
  await page.evaluate(() => ((window as unknown as { __e2eMark: number }).__e2eMark = 1));
}

test('a transfer from A moves B’s header balance live, without a reload', async ({ browser }) => {
  const contextA = await browser.newContext(SIGNED_OUT);
  const contextB = await browser.newContext(SIGNED_OUT);
  const pageA = await contextA.newPage();
  const pageB = await contextB.newPage();
  await logIn(pageA, DEMO.email, DEMO.password);
  const recipient = await signUp(pageB, { prefix: 'realtime' });

  const hello = helloOf(pageB);
  await pageB.goto('/exchanges');
  await hello;
  const before = await headerBalance(pageB);
  await markPage(pageB);

  const sent = await pageA.request.post('/api/transfer', {
    headers: { 'idempotency-key': `e2e-rt-${randomBytes(6).toString('hex')}` },
    data: { account_id: String(recipient.accountId), currency: 'USDT', amount: '5' },
  });
  expect(sent.status(), await sent.text()).toBe(200);

  await expect.poll(() => headerBalance(pageB), { timeout: 10_000 }).not.toBe(before);
  expect(await pageB.evaluate(() => (window as unknown as { __e2eMark?: number }).__e2eMark)).toBe(1);
  // The payment popup: no name, a random avatar 1–15.
  const popup = pageB.getByTestId('payment-popup').first();
  await expect(popup).toBeVisible();
  // An amount and its currency, filled in the browser from the template the layout ships.
  await expect(popup).toContainText(/\d\u00a0[A-Z]{2,}/);
  const avatar = Number(await popup.getAttribute('data-avatar'));
  expect(avatar).toBeGreaterThanOrEqual(1);
  expect(avatar).toBeLessThanOrEqual(15);
  await contextA.close();
  await contextB.close();
});

test('a withdrawal that moves changes on an open status and history page, without a reload', async ({ browser }) => {
  const context = await browser.newContext(SIGNED_OUT);
  const page = await context.newPage();
  const account = await signUp(page, { prefix: 'rt-withdraw' });
  expect((await page.request.post('/api/dev/level', { data: { account_id: account.accountId, level: 1 } })).ok()).toBe(true);
  expect((await page.request.post('/api/dev/credit', { data: { account_id: account.accountId, currency: 'USD', amount: '500' } })).ok()).toBe(true);
  // Above the auto-approval amount (100 USD): it waits for review and can be cancelled.
  const placed = await page.request.post('/api/withdraw/form/sandbox-bank', {
    headers: { 'idempotency-key': `e2e-rt-${randomBytes(6).toString('hex')}` },
    form: { currency: 'USD', amount: '150', iban: 'DE89370400440532013000', account_holder: 'Ivan Petrov' },
  });
  expect(placed.status(), await placed.text()).toBe(200);
  const id = ((await placed.json()) as { withdrawal: { id: string } }).withdrawal.id;

  const history = await context.newPage();
  // Both pages' sockets said hello before the cancel: a new tab has no sequence number yet, so
  // an event between its render and its hello is not replayed to it.
  const historyHello = helloOf(history);
  await history.goto('/history/withdraw');
  await historyHello;
  await expect(history.locator(`[data-testid="history-row"][data-id="${id}"]`)).toHaveAttribute('data-status', 'requested');
  const hello = helloOf(page);
  await page.goto('/withdraw');
  await hello;
  const status = page.locator(`[data-testid="withdraw-status"][data-id="${id}"]`);
  await expect(status).toHaveAttribute('data-state', 'requested');
  // The status island follows events once hydrated: one arriving before it listens is not shown.
  await islandsReady(page);
  await markPage(page);
  await markPage(history);

  // Cancelled elsewhere (another tab's call): both open pages follow live.
  const cancelled = await context.request.post(`/api/withdraw/cancel/${id}`, {
    headers: { 'idempotency-key': `e2e-rt-${randomBytes(6).toString('hex')}` },
    form: {},
  });
  expect(cancelled.status(), await cancelled.text()).toBe(200);
  await expect(status).toHaveAttribute('data-state', 'cancelled', { timeout: 10_000 });
  await expect(history.locator(`[data-testid="history-row"][data-id="${id}"]`)).toHaveAttribute('data-status', 'cancelled', { timeout: 10_000 });
  for (const open of [page, history]) expect(await open.evaluate(() => (window as unknown as { __e2eMark?: number }).__e2eMark)).toBe(1);
  await context.close();
});
