import { expect, test, type Page } from '@playwright/test';
import { islandsReady, signUp, waitForMail } from './helpers.ts';
import { currentId, fillDocument, PASSPORT, upload } from './kyc-helpers.ts';

/**
 * Identity: personal data, and a passport verified end to end in the browser:
 * photos made by the test, uploaded through the island, submitted, one file rejected by the
 * operator and uploaded again, approved, level 1 and /settings/verification_success.
 * The operator decides through the dev-only POST /api/dev/kyc (kyc:approve / kyc:reject): the
 * e2e core holds its PGlite directory, so the CLI cannot open it beside the running core.
 */

async function decide(page: Page, body: object) {
  const response = await page.request.post('/api/dev/kyc', { data: body });
  expect(response.status(), await response.text()).toBe(200);
}

test('personal data: saved, shown again after a reload', async ({ page }) => {
  await signUp(page, { prefix: 'personal' });
  await page.goto('/settings/personal');
  await islandsReady(page);
  await page.locator('input[name=first_name]').fill('Anna');
  await page.locator('input[name=last_name]').fill('Schmidt');
  await page.locator('input[name=birth_date]').fill('1990-05-01');
  await page.locator('input[name=phone]').fill('+49 30 1234567');
  await page.locator('input[name=country]').fill('de');
  await page.getByRole('button', { name: 'Сохранить' }).click();
  await expect(page.getByTestId('form-success')).toBeVisible();
  await page.reload();
  await expect(page.locator('input[name=first_name]')).toHaveValue('Anna');
  await expect(page.locator('input[name=phone]')).toHaveValue('+49301234567');
  await expect(page.locator('input[name=country]')).toHaveValue('DE');
});

test('passport: upload, submit, one file rejected and uploaded again, approved: level 1', async ({ page }) => {
  test.setTimeout(120_000);
  const account = await signUp(page, { prefix: 'kyc' });
  await page.goto('/settings/verification');
  await expect(page.getByTestId('kyc-level')).toContainText('0');
  // Each "Начать" names its document for a screen reader.
  const starts = page.locator('.kyc-types').getByRole('link');
  await expect(starts).toHaveCount(3);
  const names = await starts.evaluateAll((links) => links.map((link) => link.getAttribute('aria-label')));
  expect(new Set(names).size).toBe(3);
  await expect(page.getByRole('link', { name: 'Начать: Паспорт' })).toBeVisible();
  await page.getByTestId('kyc-type-passport').getByRole('link').click();
  await expect(page).toHaveURL(/\/settings\/passport$/);
  await islandsReady(page);

  // A submit with nothing uploaded says what is missing, next to each side.
  await page.getByTestId('kyc-submit').click();
  await expect(page.getByTestId('error-front')).toBeVisible();

  await upload(page, 'front', 'PASSPORT');
  await upload(page, 'selfie', 'SELFIE');
  await fillDocument(page, { ...PASSPORT, last_name: 'Schmidt', first_name: 'Anna', birth_date: '1990-05-01' });
  await page.getByTestId('kyc-submit').click();
  await expect(page).toHaveURL(/\/settings\/verification$/);
  await expect(page.getByTestId('kyc-next')).toBeVisible();

  const id = await currentId(page);
  await decide(page, { action: 'reject', id, files: [{ side: 'selfie', reason: 'blurry' }], retry: true });
  await waitForMail(page.request, account.email, 'verification_rejected_retry');

  await page.goto('/settings/passport');
  await islandsReady(page);
  await expect(page.getByTestId('rejected-selfie')).toBeVisible();
  // Only the rejected file can be uploaded again.
  await expect(page.getByTestId('file-front')).toHaveCount(0);
  await upload(page, 'selfie', 'SELFIE 2');
  await expect(page.locator('input[name=first_name]')).toHaveValue('Anna');
  await fillDocument(page, { number: PASSPORT.number });
  await page.getByTestId('kyc-submit').click();
  await expect(page).toHaveURL(/\/settings\/verification$/);

  await decide(page, { action: 'approve', id });
  await page.goto('/settings/verification');
  await expect(page.getByTestId('kyc-level')).toContainText('1');
  await page.goto('/settings/passport');
  await expect(page).toHaveURL(/\/settings\/verification_success$/);
  await expect(page.getByTestId('kyc-success')).toBeVisible();

  // The fields the passport proved are read-only now.
  await page.goto('/settings/personal');
  await expect(page.getByTestId('verified-lock')).toBeVisible();
  await expect(page.locator('input[name=first_name]')).toHaveAttribute('readonly', '');
  await expect(page.locator('input[name=first_name]')).toHaveValue('Anna');
});
