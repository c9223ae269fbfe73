import { expect, type BrowserContext, type Page } from '@playwright/test';
import { totpCode, TOTP_STEP_S } from '../core/src/domains/security/totp.ts';
import { BASE_URL, islandsReady, uniqueEmail } from './helpers.ts';

/*
 * What the identity specs share: document photos drawn by the browser, the upload and the form
 * of a document page, and an operator made and signed in without the door's pages (ops.spec.ts
 * walks those).
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

const OPERATOR_PASSWORD = 'operator-correct-horse-42';

/**
 * An operator with these roles, signed in in this browser context: made as operator:create does
 * (the dev route), enrolled and signed in through /api/ops (a code counts once: sign-in takes the
 * next step's). Its second factor is fresh for the next 5 minutes.
 */
export async function signedInOperator(context: BrowserContext, roles: string[]): Promise<{ email: string; secret: string }> {
  const request = context.request;
  const headers = { origin: BASE_URL };
  const made = await request.post('/api/dev/operator', { data: { email: uniqueEmail('op'), roles }, headers });
  expect(made.status()).toBe(200);
  const { email, enrol_link } = (await made.json()) as { email: string; enrol_link: string };
  const token = decodeURIComponent(new URL(enrol_link).hash.slice(1));
  const started = await request.post('/api/ops/enrol/start', { data: { token }, headers });
  expect(started.status(), await started.text()).toBe(200);
  const { secret } = (await started.json()) as { secret: string };
  const finished = await request.post('/api/ops/enrol/finish', { data: { token, password: OPERATOR_PASSWORD, code: totpCode(secret, Date.now()) }, headers });
  expect(finished.status(), await finished.text()).toBe(200);
  const signedIn = await request.post('/api/ops/sign-in', {
    data: { email, password: OPERATOR_PASSWORD, code: totpCode(secret, Date.now() + TOTP_STEP_S * 1000) },
    headers,
  });
  expect(signedIn.status(), await signedIn.text()).toBe(200);
  return { email, secret };
}
