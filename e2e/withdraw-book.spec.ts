import { expect, test } from '@playwright/test';
import { BASE_URL, islandsReady, linkTo, signUp, waitForMail } from './helpers.ts';

/*
 * The withdrawal address book, in ru and en: a card added is mailed, confirmed by the mailed
 * link (a click, signed in), and usable only 24 hours after it was added; "allow-list only"
 * turns on at once and off a day later.
 */
const TEXT = {
  ru: { added: 'Адрес добавлен', confirmed: 'Адрес подтверждён', waiting: 'станет доступен', on: 'Включено.', goingOff: 'затем выключится' },
  en: { added: 'Destination added', confirmed: 'Destination confirmed', waiting: 'can be used from', on: 'On.', goingOff: 'then off' },
} as const;

for (const locale of ['ru', 'en'] as const) {
  test(`address book (${locale}): add a card, confirm it by mail, see when it opens; allow-list only`, async ({ page, context }) => {
    await context.addCookies([{ name: 'i18n_redirected', value: locale, url: BASE_URL }]);
    const account = await signUp(page, { prefix: `book-${locale}` });
    await page.goto('/withdraw/book');
    await islandsReady(page);
    await page.getByTestId('book-system').selectOption('sandbox-card|RUB');
    await page.getByTestId('book-label').fill('Salary card');
    await page.getByTestId('book-card_number').fill('4111 1111 1111 1111');
    await page.getByTestId('book-card_holder').fill('IVAN PETROV');
    await page.getByTestId('book-add-submit').click();
    await expect(page.getByTestId('book-message')).toContainText(TEXT[locale].added);
    await expect(page.getByTestId('book-entry')).toHaveAttribute('data-state', 'unconfirmed');
    await expect(page.getByTestId('book-entry')).toContainText('•••• 1111');

    const mail = await waitForMail(page.request, account.email, 'withdraw_destination_added');
    const link = linkTo(mail, '/withdraw/book');
    await page.goto(link.pathname + link.search);
    await islandsReady(page);
    await page.getByTestId('book-confirm-button').click();
    await expect(page.getByTestId('book-message')).toContainText(TEXT[locale].confirmed);
    await expect(page.getByTestId('book-entry')).toHaveAttribute('data-state', 'waiting');
    await expect(page.getByTestId('book-entry')).toContainText(TEXT[locale].waiting);

    await page.getByTestId('book-allowlist-toggle').click();
    await expect(page.getByTestId('book-allowlist-state')).toHaveText(TEXT[locale].on);
    await page.getByTestId('book-allowlist-toggle').click();
    await expect(page.getByTestId('book-allowlist-state')).toContainText(TEXT[locale].goingOff);
    await page.reload();
    await expect(page.getByTestId('book-allowlist')).toHaveAttribute('data-on', 'true');
  });
}
