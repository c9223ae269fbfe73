import { expect, type Page } from '@playwright/test';
import { totpCode, TOTP_STEP_S } from '../core/src/domains/security/totp.ts';
import { islandsReady, localPath, uniqueEmail } from './helpers.ts';
import { axeOn } from './axe.ts';

/*
 * The back office in a browser: operators are created as `operator:create` does (through its dev
 * route: the CLI cannot open the live PGlite), enrolled from the one-time link and signed in
 * with both factors through the pages themselves.
 */

export const OPERATOR_PASSWORD = 'operator-correct-horse-42';

export type TOperator = { email: string; secret: string };

/** The signed-in back-office pages need an operator, out of a11y-routes.ts's reach: audited here, as there. */
export async function expectNoSeriousViolations(page: Page): Promise<void> {
  const result = await axeOn(page).analyze();
  const serious = result.violations.filter((violation) => violation.impact === 'serious' || violation.impact === 'critical');
  expect(serious.map((violation) => `${violation.id}: ${violation.nodes.map((node) => node.target.join(' ')).join(', ')}`)).toEqual([]);
}

/** operator:create, as the CLI prints it: the enrolment link. */
export async function createOperator(page: Page, roles: string[]): Promise<{ email: string; link: URL }> {
  const response = await page.request.post('/api/dev/operator', { data: { email: uniqueEmail('op'), roles } });
  expect(response.status()).toBe(200);
  const body = (await response.json()) as { email: string; enrol_link: string };
  return { email: body.email, link: new URL(body.enrol_link) };
}

/** The enrolment page, from the link: password and the first TOTP code; the secret it showed. */
export async function enrolOperator(page: Page, email: string, link: URL): Promise<string> {
  await page.goto(`${localPath(link)}${link.hash}`);
  await islandsReady(page);
  await expect(page.getByTestId('ops-enrol-email')).toHaveText(email);
  const secret = (await page.getByTestId('ops-secret').getAttribute('data-secret')) ?? '';
  await page.getByTestId('ops-password').fill(OPERATOR_PASSWORD);
  await page.getByTestId('ops-code').fill(totpCode(secret, Date.now()));
  await page.getByTestId('ops-enrol-submit').click();
  await expect(page.getByTestId('ops-enrol-done')).toBeVisible();
  return secret;
}

/** A code the core has not seen yet: each counts once, so the next step's (inside the accepted window). */
export const freshCode = (secret: string, steps = 1) => totpCode(secret, Date.now() + steps * TOTP_STEP_S * 1000);

/** /ops/login with both factors; lands on /ops. */
export async function signInOperator(page: Page, operator: TOperator): Promise<void> {
  await page.goto('/ops/login');
  await islandsReady(page);
  await page.getByTestId('ops-email').fill(operator.email);
  await page.getByTestId('ops-password').fill(OPERATOR_PASSWORD);
  await page.getByTestId('ops-code').fill(freshCode(operator.secret));
  await page.getByTestId('ops-login-submit').click();
  await expect(page).toHaveURL(/\/ops$/);
}

/** A new operator with these roles, enrolled and signed in on this page. */
export async function signedInOperator(page: Page, roles: string[]): Promise<TOperator> {
  const { email, link } = await createOperator(page, roles);
  const operator = { email, secret: await enrolOperator(page, email, link) };
  await signInOperator(page, operator);
  return operator;
}

/** As if the operator's second factor were an hour old: the next step-up route asks for it again, and `freshCode(secret, 0)` answers it. */
export async function staleSecondFactor(page: Page, operator: TOperator): Promise<void> {
  expect((await page.request.post('/api/dev/operator/stale-factor', { data: { email: operator.email } })).status()).toBe(200);
}

/** A fresh second factor through the real step-up (after `staleSecondFactor`, the current code counts): for walks longer than 5 minutes. */
export async function freshSecondFactor(page: Page, operator: TOperator): Promise<void> {
  await staleSecondFactor(page, operator);
  expect((await page.request.post('/api/ops/step-up', { data: { code: freshCode(operator.secret, 0) } })).status()).toBe(200);
}
