import { test } from '@playwright/test';
import { BASE_URL, islandsReady } from './helpers.ts';
import { signedInOperator } from './ops-helpers.ts';

for (const locale of ['ru', 'en'] as const) {
  test(`shots ${locale}`, async ({ page }) => {
    test.setTimeout(90_000);
    await page.request.post('/api/dev/payments', {
      data: { action: 'payout_unasked', provider: 'sandbox-card', reference: `shot-${locale}-${Date.now()}`, currency: 'RUB', amount: '12.34' },
    });
    await page.context().addCookies([{ name: 'i18n_redirected', value: locale, url: BASE_URL }]);
    await signedInOperator(page, ['finance', 'support']);
    for (const [name, path] of [['home', '/ops'], ['recon', '/ops/reconciliation']] as const) {
      for (const width of [375, 1280]) {
        await page.setViewportSize({ width, height: 900 });
        await page.goto(path);
        await islandsReady(page);
        await page.waitForTimeout(800);
        if (name === 'recon') await page.getByTestId('ops-recon-explain').first().click();
        await page.screenshot({ path: `/tmp/recon-shots/${name}-${locale}-${width}.png`, fullPage: true });
      }
    }
  });
}
