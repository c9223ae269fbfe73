import { expect, type Page } from '@playwright/test';
import { totpCode, TOTP_STEP_S } from '../core/src/domains/security/totp.ts';
import { uniqueEmail } from './helpers.ts';

const PASSWORD = 'operator-correct-horse-42';

/**
 * A new operator with these roles, signed in in `page`'s browser context without the screens
 * (ops.spec.ts walks those): operator:create through its dev route, the enrolment link's calls,
 * then the sign-in with the next TOTP step's code (a code counts once). The ops_token cookie
 * lands in the context.
 */
export async function signedInOperator(page: Page, roles: string[]): Promise<{ email: string }> {
  const created = await page.request.post('/api/dev/operator', { data: { email: uniqueEmail('op'), roles } });
  expect(created.status()).toBe(200);
  const { email, enrol_link } = (await created.json()) as { email: string; enrol_link: string };
  const token = decodeURIComponent(new URL(enrol_link).hash.slice(1));
  const started = await page.request.post('/api/ops/enrol/start', { data: { token } });
  expect(started.status()).toBe(200);
  const { secret } = (await started.json()) as { secret: string };
  const finished = await page.request.post('/api/ops/enrol/finish', { data: { token, password: PASSWORD, code: totpCode(secret, Date.now()) } });
  expect(finished.status()).toBe(200);
  const signedIn = await page.request.post('/api/ops/sign-in', {
    data: { email, password: PASSWORD, code: totpCode(secret, Date.now() + TOTP_STEP_S * 1000) },
  });
  expect(signedIn.status(), await signedIn.text()).toBe(200);
  return { email };
}
