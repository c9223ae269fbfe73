import { expect, type Page } from '@playwright/test';
import { islandsReady } from './helpers.ts';

/*
 * What the identity specs share: document photos drawn by the browser, the upload, and the form
 * of a document page.
 */

/** A PNG drawn by the browser itself: nothing binary lives in the repository. */
export async function drawnPng(page: Page, label: string): Promise<Buffer> {
  const dataUrl = await page.evaluate((text) => {
    const canvas = document.createElement('canvas');
    canvas.width = 640;
    canvas.height = 400;
    const ctx = canvas.getContext('2d')!;
    ctx.fillStyle = '#e3efee';
    ctx.fillRect(0, 0, 640, 400);
    ctx.fillStyle = '#2e3440';
    ctx.font = '48px sans-serif';
    ctx.fillText(text, 40, 200);
    return canvas.toDataURL('image/png');
  }, label);
  return Buffer.from(dataUrl.split(',')[1]!, 'base64');
}

export async function upload(page: Page, side: string, label: string) {
  await page.getByTestId(`file-${side}`).setInputFiles({ name: `${side}.png`, mimeType: 'image/png', buffer: await drawnPng(page, label) });
  await expect(page.getByTestId(`uploaded-${side}`)).toBeVisible();
}

/** The document's fields; on a retry only what the form does not keep (the number is never shown again). */
export async function fillDocument(page: Page, fields: Record<string, string>) {
  for (const [name, value] of Object.entries(fields)) await page.locator(`input[name=${name}]`).fill(value);
}

export const PASSPORT = { number: 'AB 1234567', issuing_country: 'DE', issue_date: '2020-01-15', expiry_date: '2035-01-14' };

/** A passport sent for review from /settings/passport: both photos, the form, submitted. */
export async function sendPassport(page: Page): Promise<void> {
  await page.goto('/settings/passport');
  await islandsReady(page);
  await upload(page, 'front', 'PASSPORT');
  await upload(page, 'selfie', 'SELFIE');
  await fillDocument(page, { ...PASSPORT, last_name: 'Schmidt', first_name: 'Anna', birth_date: '1990-05-01' });
  await page.getByTestId('kyc-submit').click();
  await expect(page).toHaveURL(/\/settings\/verification$/);
}

export async function currentId(page: Page): Promise<string> {
  const answer = (await (await page.request.get('/api/verification')).json()) as { verification: { current: { id: string } } };
  return answer.verification.current.id;
}
