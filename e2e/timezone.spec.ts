import { randomBytes } from 'node:crypto';
import { expect, test, type Page } from '@playwright/test';
import { islandsReady, signUp } from './helpers.ts';

/*
 * Times print the same on the server and in the browser whatever the reader's zone: a browser
 * far from the server's UTC hydrates the chat and the withdrawal status without React's
 * hydration error (#418), first in UTC (the zone not known yet, and said), then, once the layout
 * has told the server its zone, in that zone on both sides.
 */
test.use({ timezoneId: 'Asia/Vladivostok', storageState: { cookies: [], origins: [] } });

function watchErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(message.text());
  });
  page.on('pageerror', (error) => errors.push(error.message));
  return errors;
}

test('chat and withdrawal times hydrate without a mismatch in another time zone, then show that zone', async ({ page }) => {
  test.slow();
  const account = await signUp(page, { prefix: 'tz' });
  expect((await page.request.post('/api/dev/level', { data: { account_id: account.accountId, level: 1 } })).ok()).toBe(true);
  expect((await page.request.post('/api/dev/credit', { data: { account_id: account.accountId, currency: 'USD', amount: '500' } })).ok()).toBe(true);
  // Above the auto-approval amount: it stays open on /withdraw with its expected time.
  const placed = await page.request.post('/api/withdraw/form/sandbox-bank', {
    headers: { 'idempotency-key': `e2e-tz-${randomBytes(6).toString('hex')}` },
    form: { currency: 'USD', amount: '150', iban: 'DE89370400440532013000', account_holder: 'Ivan Petrov' },
  });
  expect(placed.status(), await placed.text()).toBe(200);
  const sent = await page.request.post('/api/support', { data: { text: 'Когда придёт вывод?' } });
  expect(sent.status(), await sent.text()).toBe(200);

  // The server does not know the zone yet: the page and the islands print UTC and say so.
  const errors = watchErrors(page);
  for (const path of ['/chat/support', '/withdraw']) {
    await page.context().clearCookies({ name: 'tz' });
    await page.goto(path);
    await islandsReady(page);
  }
  await expect(page.locator('.wd-expected').first()).toContainText('UTC');
  expect((await page.context().cookies()).find((cookie) => cookie.name === 'tz')?.value).toBe('Asia/Vladivostok');

  // Told by the layout, the server now prints Vladivostok time (UTC+10), as the islands do.
  for (const path of ['/chat/support', '/withdraw']) {
    await page.goto(path);
    await islandsReady(page);
  }
  await expect(page.locator('.wd-expected').first()).not.toContainText('UTC');
  await page.goto('/chat/support');
  await islandsReady(page);
  const shown = page.getByTestId('chat-message').last().locator('time');
  const iso = (await shown.getAttribute('datetime'))!;
  const local = new Date(Date.parse(iso) + 10 * 3600_000);
  const hhmm = `${String(local.getUTCHours()).padStart(2, '0')}:${String(local.getUTCMinutes()).padStart(2, '0')}`;
  await expect(shown).toContainText(hhmm);
  expect(errors.filter((text) => /418|hydrat/i.test(text))).toEqual([]);
});
