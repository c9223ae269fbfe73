import { readFile } from 'node:fs/promises';
import { expect, test } from '@playwright/test';
import { BASE_URL, DEMO, logIn } from './helpers.ts';

/*
 * The statement from /history, as a person gets it: the month's form downloads a PDF named for
 * the account and the month (its content and totals: core/test/domains/history/statement.test.ts).
 */
for (const locale of ['ru', 'en'] as const) {
  test(`statement (${locale}): this month's PDF downloads from /history`, async ({ page, context }) => {
    await context.addCookies([{ name: 'i18n_redirected', value: locale, url: BASE_URL }]);
    await logIn(page, DEMO.email, DEMO.password);
    await page.goto('/history');
    await expect(page.getByTestId('statement')).toBeVisible();
    const month = new Date().toISOString().slice(0, 7);
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByTestId('statement-month-download').click()]);
    expect(download.suggestedFilename()).toMatch(new RegExp(`^obmen-statement-\\d{8}-${month}-01\\.pdf$`));
    const bytes = await readFile((await download.path())!);
    expect(bytes.subarray(0, 5).toString()).toBe('%PDF-');
    expect(bytes.length).toBeGreaterThan(5_000);
  });
}
