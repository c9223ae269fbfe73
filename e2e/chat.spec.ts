import { expect, test, type Browser, type Page } from '@playwright/test';
import { BASE_URL, islandsReady, signUp, type TAccount } from './helpers.ts';
import { axeOn } from './axe.ts';

/*
 * Chats with two browser contexts, A and B (two sign-ups of the run's budget).
 * B sees A's private message, its badge and the unread popup without a reload (the /ws socket),
 * and the same after a navigation; the popup is absent on /exchanges and /chat/*; a file is sent
 * and opened; the support chat gets an operator's reply, live, through POST /api/dev/support (the dev-only twin of
 * `support:reply`: the CLI cannot open the e2e core's PGlite beside it).
 */

/** A 1×1 PNG: the core re-encodes it and serves it inline. */
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==', 'base64');

test.describe.configure({ mode: 'serial' });

let pageA: Page;
let pageB: Page;
let a: TAccount;
let b: TAccount;

async function newPage(browser: Browser): Promise<Page> {
  const context = await browser.newContext({ baseURL: BASE_URL, locale: 'ru-RU' });
  return context.newPage();
}

test.beforeAll(async ({ browser }) => {
  pageA = await newPage(browser);
  pageB = await newPage(browser);
  a = await signUp(pageA, { prefix: 'chat-a' });
  b = await signUp(pageB, { prefix: 'chat-b' });
  // A private chat is titled by the other's name ("Анна С."), never by the e-mail.
  const named = await pageA.request.post('/api/user/info', { form: { first_name: 'Анна', last_name: 'Смирнова' } });
  expect(named.status(), await named.text()).toBe(200);
});

test.afterAll(async () => {
  await pageA?.context().close();
  await pageB?.context().close();
});

async function send(page: Page, text: string) {
  await page.getByTestId('chat-input').fill(text);
  await page.getByTestId('chat-send').click();
  await expect(page.getByTestId('chat-message').filter({ hasText: text })).toBeVisible();
}

test('A writes to B privately; B sees the badge, the popup and the message without a reload', async () => {
  // B waits on an ordinary page: nothing unread, no popup.
  await pageB.goto('/transfer');
  await islandsReady(pageB);
  const unreadB = pageB.getByTestId('unread').first().locator('[data-unread-count]');
  await expect(unreadB).toBeHidden();
  await expect(pageB.getByTestId('unread-popup')).toBeHidden();

  await pageA.goto('/chat');
  await pageA.getByTestId('chat-new-id').fill(String(b.accountId));
  await pageA.getByTestId('chat-new-open').click();
  await expect(pageA).toHaveURL(new RegExp(`/chat/private/${b.accountId}$`));
  await islandsReady(pageA);
  await expect(pageA.getByTestId('chat-empty')).toBeVisible();
  await send(pageA, 'Привет, B! Условия: https://example.com/terms <b>не жирный</b>');
  // Markup is text, the link an anchor that opens apart.
  const message = pageA.getByTestId('chat-message').last();
  await expect(message.locator('b')).toHaveCount(0);
  await expect(message.getByRole('link', { name: 'https://example.com/terms' })).toHaveAttribute('rel', /noopener/);

  // Live on B's page (the /ws socket): the header counter, the chat's sidebar badge, the popup.
  await expect(unreadB).toHaveText('1');
  await expect(pageB.locator(`.sidebar [data-chat-badge="${a.accountId}"]`)).toHaveText('1');
  await expect(pageB.locator(`.sidebar a[href="/chat/private/${a.accountId}"]`)).toContainText('Анна С.');
  const popup = pageB.getByTestId('unread-popup');
  await expect(popup).toBeVisible();
  await expect(popup).toContainText('1');
  // Only a private message is unread: the popup opens the chats, not the support chat.
  await expect(popup.getByTestId('unread-popup-open')).toHaveAttribute('href', '/chat');
  const axe = await axeOn(pageB).include('[data-testid="unread-popup"]').analyze();
  expect(axe.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical')).toEqual([]);
  // After a navigation the server renders the same: support first, then A's chat with its badge.
  await pageB.goto('/transfer');
  await expect(pageB.locator('.sidebar [data-chat-list] a').first()).toHaveAttribute('href', '/chat/support');
  await expect(pageB.locator(`.sidebar [data-chat-badge="${a.accountId}"]`)).toHaveText('1');
  await expect(pageB.getByTestId('unread-popup')).toBeVisible();
  // No popup on exchange and chat pages.
  await pageB.goto('/exchanges');
  await expect(pageB.getByTestId('unread').first().locator('[data-unread-count]')).toHaveText('1');
  await expect(pageB.getByTestId('unread-popup')).toBeHidden();
  await pageB.goto('/chat');
  await expect(pageB.getByTestId('unread-popup')).toBeHidden();
  await pageB.getByRole('link', { name: 'Чат: Анна С.' }).click();
  await expect(pageB).toHaveURL(new RegExp(`/chat/private/${a.accountId}$`));
  await expect(pageB.getByRole('heading', { level: 1 })).toHaveText('Чат: Анна С.');
  await islandsReady(pageB);
  await expect(pageB.getByTestId('chat-message').filter({ hasText: 'Привет, B!' })).toBeVisible();
  await expect(pageB.getByTestId('unread-popup')).toBeHidden();
  // Shown, it is read: the counter goes to zero (the island moved the read cursor), and so does
  // the chat's own badge, which the server rendered before the read.
  await expect(pageB.getByTestId('unread').first().locator('[data-unread-count]')).toBeHidden();
  await expect(pageB.locator(`.sidebar [data-chat-badge="${a.accountId}"]`)).toBeHidden();
  // With the chat open, A's next message appears without a reload and is read at once.
  await send(pageA, 'Ты здесь?');
  await expect(pageB.getByTestId('chat-message').filter({ hasText: 'Ты здесь?' })).toBeVisible();
  await expect(pageB.getByTestId('unread').first().locator('[data-unread-count]')).toBeHidden();
  await pageB.goto('/transfer');
  await expect(pageB.getByTestId('unread-popup')).toBeHidden();
});

test('a file is sent, previewed and opened; a wrong type is refused', async () => {
  await pageA.goto(`/chat/private/${b.accountId}`);
  await islandsReady(pageA);
  await pageA.getByTestId('chat-files').setInputFiles({ name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from('just text') });
  await pageA.getByTestId('chat-send').click();
  await expect(pageA.getByTestId('chat-error')).toBeVisible();
  // The chosen files are listed by name and can be removed before sending.
  await pageA.getByTestId('chat-files').setInputFiles({ name: 'receipt.png', mimeType: 'image/png', buffer: PNG });
  const pending = pageA.getByTestId('chat-pending-files');
  await expect(pending.locator('li')).toHaveCount(2);
  await expect(pending).toContainText('notes.txt');
  await expect(pending).toContainText('receipt.png');
  await pending.getByRole('button', { name: 'Убрать файл notes.txt' }).click();
  await expect(pending.locator('li')).toHaveCount(1);
  await expect(pending).not.toContainText('notes.txt');
  await pageA.getByTestId('chat-input').fill('чек');
  await pageA.getByTestId('chat-send').click();
  await expect(pageA.getByTestId('chat-message').filter({ hasText: 'чек' }).locator('img')).toBeVisible();
  await expect(pageA.getByTestId('chat-pending-files')).toHaveCount(0);

  await pageB.goto(`/chat/private/${a.accountId}`);
  const preview = pageB.getByTestId('chat-message').filter({ hasText: 'чек' }).getByTestId('chat-file');
  await expect(preview.locator('img')).toBeVisible();
  const href = (await preview.getAttribute('href'))!;
  const [opened] = await Promise.all([pageB.context().waitForEvent('page'), preview.click()]);
  const response = await opened.waitForLoadState().then(() => opened.request.get(href));
  expect(response.status()).toBe(200);
  expect(response.headers()['content-type']).toBe('image/png');
  await opened.close();
  // Nobody else: a visitor without a session, and the file under another chat's path.
  expect((await pageB.request.get(href.replace(`/${a.accountId}/`, `/${b.accountId}/`))).status()).toBe(404);
  const anonymous = await pageB.context().browser()!.newContext({ baseURL: BASE_URL });
  expect((await anonymous.request.get(href)).status()).toBe(401);
  await anonymous.close();
});

test('the support chat gets an operator reply; /support shows the same conversation without the footer', async () => {
  await pageB.goto('/chat/support');
  await islandsReady(pageB);
  await send(pageB, 'Где мой депозит?');
  const reply = await pageB.request.post('/api/dev/support', { data: { action: 'reply', account_id: b.accountId, text: 'Зачислен в 10:15.' } });
  expect(reply.status(), await reply.text()).toBe(200);
  // Live, without a reload: the reply shows in the open chat.
  await expect(pageB.getByTestId('chat-message').filter({ hasText: 'Зачислен в 10:15.' })).toContainText('Поддержка');
  // Unread again for the /support check below: a second reply while B is elsewhere.
  await pageB.goto('/exchanges');
  await pageB.request.post('/api/dev/support', { data: { action: 'reply', account_id: b.accountId, text: 'Что-нибудь ещё?' } });
  await expect(pageB.getByTestId('unread').first().locator('[data-unread-count]')).toHaveText('1');
  await pageB.goto('/support');
  await expect(pageB.locator('.site-footer')).toHaveCount(0);
  await expect(pageB.getByTestId('chat-message').filter({ hasText: 'Где мой депозит?' })).toBeVisible();
  await expect(pageB.getByTestId('chat-message').filter({ hasText: 'Зачислен в 10:15.' })).toContainText('Поддержка');
  await expect(pageB.getByTestId('unread').first().locator('[data-unread-count]')).toBeHidden();
  await pageB.goto('/chat/support');
  await expect(pageB.locator('.site-footer')).toHaveCount(1);
  await expect(pageB.getByTestId('chat-message')).toHaveCount(3);
});
