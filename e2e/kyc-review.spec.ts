import { expect, test, type Browser } from '@playwright/test';
import { BASE_URL, islandsReady, signUp } from './helpers.ts';
import { currentId, fillDocument, PASSPORT, sendPassport, upload } from './kyc-helpers.ts';
import { signedInOperator } from './ops-helpers.ts';

/*
 * Identity review in the back office, end to end in two browsers: a customer sends a passport,
 * a compliance operator rejects its photo as blurry in /ops/kyc, the customer reads the reason
 * with what to redo and sends only that photo again, the operator approves and the customer's
 * level rises (cards become orderable). A support operator cannot open the review or its
 * images: the "not your role" page, and the attempt in the audit trail.
 */

const TEXTS = {
  ru: { blurry: 'размыто или нечитаемо', level1: 'Уровень 1' },
  en: { blurry: 'blurry or unreadable', level1: 'Level 1' },
} as const;

async function contextIn(browser: Browser, locale: 'ru' | 'en') {
  const context = await browser.newContext();
  await context.addCookies([{ name: 'i18n_redirected', value: locale, url: BASE_URL }]);
  return context;
}

for (const locale of ['ru', 'en'] as const) {
  test(`a compliance operator rejects a blurry passport photo, the customer sends only it again, approval raises the level (${locale})`, async ({
    browser,
  }) => {
    test.setTimeout(180_000);
    const customerContext = await contextIn(browser, locale);
    const customer = await customerContext.newPage();
    await signUp(customer, { prefix: `kyc-review-${locale}` });
    await sendPassport(customer);
    const id = await currentId(customer);

    const opsContext = await contextIn(browser, locale);
    const operator = await opsContext.newPage();
    await signedInOperator(operator, ['compliance']);
    await operator.goto('/ops/kyc');
    await islandsReady(operator);
    const item = operator.locator(`[data-testid="kyc-item"][data-id="${id}"]`);
    await expect(item).toBeVisible();
    await item.getByTestId('kyc-claim').click();
    await expect(operator).toHaveURL(new RegExp(`/ops/kyc/${id}$`));
    await islandsReady(operator);
    await expect(operator.getByTestId('kyc-data')).toContainText('AB1234567');
    await expect(operator.getByTestId('kyc-review-claim')).toBeVisible();
    // The image streams from the private route; the look is in the audit trail.
    await expect
      .poll(() =>
        operator
          .getByTestId('kyc-image-front')
          .locator('img')
          .evaluate((img: HTMLImageElement) => img.naturalWidth),
      )
      .toBeGreaterThan(0);
    await operator.getByTestId('kyc-reason-front').selectOption('blurry');
    await operator.getByTestId('kyc-reject').click();
    await expect(operator.getByTestId('kyc-decided')).toBeVisible();

    await customer.goto('/settings/verification');
    await expect(customer.getByTestId('kyc-rejected-front')).toContainText(TEXTS[locale].blurry);
    await customer.goto('/settings/passport');
    await islandsReady(customer);
    await expect(customer.getByTestId('rejected-front')).toContainText(TEXTS[locale].blurry);
    await expect(customer.getByTestId('redo-front')).toBeVisible();
    // Only the rejected photo can be sent again: the selfie stays accepted.
    await expect(customer.getByTestId('file-selfie')).toHaveCount(0);
    await upload(customer, 'front', 'PASSPORT SHARP');
    await fillDocument(customer, { number: PASSPORT.number });
    await customer.getByTestId('kyc-submit').click();
    await expect(customer).toHaveURL(/\/settings\/verification$/);

    await operator.goto(`/ops/kyc/${id}`);
    await islandsReady(operator);
    await operator.getByTestId('kyc-approve').click();
    await expect(operator.getByTestId('kyc-decided')).toBeVisible();

    await customer.goto('/settings/verification');
    await expect(customer.getByTestId('kyc-level')).toContainText(TEXTS[locale].level1);
    const cards = (await (await customer.request.get('/api/card')).json()) as { requirements: { met: boolean } };
    expect(cards.requirements.met).toBe(true);

    const audit = (await (await operator.request.get(`/api/ops/audit?subject=${id}`)).json()) as { rows: Array<{ action: string; outcome: string }> };
    expect(audit.rows.map((row) => `${row.action} ${row.outcome}`)).toEqual(
      expect.arrayContaining(['verification.file viewed', 'verification.reject done', 'verification.approve done']),
    );
    await customerContext.close();
    await opsContext.close();
  });
}

test('a support operator cannot open identity review or its document images: 403 and an audit row', async ({ browser }) => {
  test.setTimeout(120_000);
  const customerContext = await contextIn(browser, 'en');
  const customer = await customerContext.newPage();
  await signUp(customer, { prefix: 'kyc-support' });
  await sendPassport(customer);
  const verification = (await (await customer.request.get('/api/verification')).json()) as {
    verification: { current: { id: string; files: Array<{ id: string }> } };
  };
  const { id, files } = verification.verification.current;

  const supportContext = await contextIn(browser, 'en');
  const support = await supportContext.newPage();
  const { email } = await signedInOperator(support, ['support']);
  for (const path of ['/ops/kyc', `/ops/kyc/${id}`]) {
    await support.goto(path);
    await expect(support.getByTestId('ops-forbidden')).toBeVisible();
  }
  const image = await support.request.get(`/api/ops/kyc/file/${files[0]!.id}`);
  expect(image.status()).toBe(403);
  expect(((await image.json()) as { code: string }).code).toBe('ops_forbidden');

  const auditorContext = await contextIn(browser, 'en');
  await signedInOperator(await auditorContext.newPage(), ['compliance']);
  const action = encodeURIComponent('GET /api/ops/kyc/file/:id');
  const audit = (await (await auditorContext.request.get(`/api/ops/audit?action=${action}`)).json()) as {
    rows: Array<{ actor: string; outcome: string }>;
  };
  expect(audit.rows).toEqual(expect.arrayContaining([{ ...audit.rows[0], actor: expect.stringMatching(`:${email}$`), outcome: 'denied' }]));
  await customerContext.close();
  await supportContext.close();
  await auditorContext.close();
});
