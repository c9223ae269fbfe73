import { readFile } from 'node:fs/promises';
import { expect, test } from '@playwright/test';
import { VIEWPORTS } from './a11y-routes.ts';
import { BASE_URL, islandsReady } from './helpers.ts';
import { expectNoSeriousViolations, signedInOperator } from './ops-helpers.ts';

/*
 * Reconciliation, ru and en: the sandbox card provider's book holds a payout nobody asked for; a
 * finance operator finds it on /ops/reconciliation, resolves it as explained, and downloads the
 * period's differences as CSV.
 */

for (const locale of ['ru', 'en'] as const) {
  test(`a finance operator finds a difference, explains it and downloads the CSV (${locale})`, async ({ page }) => {
    test.setTimeout(90_000);
    const reference = `e2e-unasked-${locale}-${Date.now()}`;
    const unasked = await page.request.post('/api/dev/payments', {
      data: { action: 'payout_unasked', provider: 'sandbox-card', reference, currency: 'RUB', amount: '12.34' },
    });
    expect(unasked.ok()).toBe(true);

    await page.context().addCookies([{ name: 'i18n_redirected', value: locale, url: BASE_URL }]);
    await signedInOperator(page, ['finance']);
    await page.getByTestId('ops-nav-reconciliation').click();
    await islandsReady(page);
    await page.getByTestId('ops-recon-provider').selectOption('sandbox-card');
    await page.getByTestId('ops-recon-run').click();
    await expect(page.getByTestId('ops-recon-differences')).toContainText(reference);

    const item = page.locator('[data-testid="ops-recon-item"]').filter({ hasText: reference });
    await expect(item).toHaveAttribute('data-state', 'open');
    await item.getByTestId('ops-recon-explain').click();
    for (const viewport of [VIEWPORTS.phone, VIEWPORTS.desktop]) {
      await page.setViewportSize(viewport);
      await expectNoSeriousViolations(page);
    }
    await item.getByTestId('ops-recon-explain-text').fill(`provider's test payout (${locale})`);
    await item.getByTestId('ops-recon-explain-submit').click();
    await expect(page.getByTestId('ops-recon-done')).toBeVisible();
    await expect(item).toHaveAttribute('data-state', 'resolved');
    await expect(item.getByTestId('ops-recon-resolution')).toContainText(`provider's test payout (${locale})`);

    const [download] = await Promise.all([page.waitForEvent('download'), page.getByTestId('ops-recon-csv').click()]);
    expect(download.suggestedFilename()).toMatch(/^reconciliation-sandbox-card-.*\.csv$/);
    const csv = await readFile((await download.path())!, 'utf8');
    expect(csv.split('\r\n')[0]).toBe('id,kind,provider,currency,reference,provider_amount,ledger_amount,found_at,state');
    expect(csv).toContain(`,payout_missing_in_ledger,sandbox-card,RUB,${reference},12.34,,`);
  });
}
