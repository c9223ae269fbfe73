import { expect, test, type Browser, type BrowserContext, type Page } from '@playwright/test';
import { BASE_URL, islandsReady, signUp } from './helpers.ts';
import { signedInOperator } from './ops-helpers.ts';

/*
 * The support desk in browsers: a customer writes to support; a support operator sees the
 * conversation arrive on /ops/support (live over /ws?ops=1, the header's count), claims it and
 * replies with a saved reply and a file; the customer sees the reply live in their own context;
 * a second operator sees who holds the conversation and cannot answer over it.
 */

const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==', 'base64');

async function contextIn(browser: Browser, locale: 'ru' | 'en'): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({ storageState: { cookies: [], origins: [] } });
  await context.addCookies([{ name: 'i18n_redirected', value: locale, url: BASE_URL }]);
  return { context, page: await context.newPage() };
}

const unreadOf = async (page: Page) => Number((await page.getByTestId('desk-unread').textContent())?.match(/\d+/)?.[0] ?? Number.NaN);

for (const locale of ['ru', 'en'] as const) {
  test(`a support operator claims a conversation and replies with a file; the customer sees it live (${locale})`, async ({ browser }) => {
    // A customer and two operators, each signed up or enrolled and signed in: 26 s alone on a
    // quiet machine, past the default 30 s beside other specs (as the other two-operator flows).
    test.setTimeout(90_000);
    const customer = await contextIn(browser, locale);
    const ann = await contextIn(browser, locale);
    const bob = await contextIn(browser, locale);
    const account = await signUp(customer.page, { prefix: `desk-${locale}` });
    await customer.page.goto('/chat/support');
    await islandsReady(customer.page);
    await customer.page.getByTestId('chat-input').fill('Where is my deposit?');
    await customer.page.getByTestId('chat-send').click();
    await expect(customer.page.getByTestId('chat-message')).toHaveCount(1);

    const annOp = await signedInOperator(ann.page, ['support']);
    await ann.page.goto('/ops/support');
    await islandsReady(ann.page);
    const item = ann.page.locator(`[data-testid="desk-item"][data-account="${account.accountId}"]`);
    await expect(item).toBeVisible();
    await expect(item.getByTestId('desk-waited')).toBeVisible();

    // Live: the customer's next message raises the desk's count without a reload.
    const before = await unreadOf(ann.page);
    await customer.page.getByTestId('chat-input').fill('Hello?');
    await customer.page.getByTestId('chat-send').click();
    await expect.poll(() => unreadOf(ann.page)).toBeGreaterThan(before);

    await item.click();
    await expect(ann.page.getByTestId('desk-message')).toHaveCount(2);
    await ann.page.getByTestId('desk-claim').click();
    await expect(ann.page.getByTestId('desk-thread').getByTestId('desk-claim-note')).toBeVisible();

    // The second operator sees who holds it, and cannot answer over it.
    await signedInOperator(bob.page, ['support']);
    await bob.page.goto(`/ops/support?account=${account.accountId}`);
    await islandsReady(bob.page);
    await expect(bob.page.getByTestId('desk-thread').getByTestId('desk-claim-note')).toContainText(annOp.email);
    await expect(bob.page.getByTestId('desk-claim')).toBeDisabled();
    await expect(bob.page.getByTestId('desk-send')).toBeDisabled();

    // A saved reply in the customer's language fills the box; a file goes with it.
    const saved = ann.page.getByTestId('desk-saved');
    const value = await saved.locator(`optgroup[label="${locale.toUpperCase()}"] option`).first().getAttribute('value');
    await saved.selectOption(value!);
    await expect(ann.page.getByTestId('desk-reply')).not.toHaveValue('');
    const text = await ann.page.getByTestId('desk-reply').inputValue();
    await ann.page.getByTestId('desk-files').setInputFiles({ name: 'receipt.png', mimeType: 'image/png', buffer: PNG });
    await ann.page.getByTestId('desk-send').click();
    await expect(ann.page.getByTestId('desk-message')).toHaveCount(3);

    const reply = customer.page.getByTestId('chat-message').last();
    await expect(reply).toContainText(text.slice(0, 20));
    await expect(reply.getByTestId('chat-file')).toBeVisible();
    for (const open of [customer, ann, bob]) await open.context.close();
  });
}
