import { expect, type APIRequestContext, type APIResponse, type Locator, type Page } from '@playwright/test';
import { createHmac, randomBytes } from 'node:crypto';

/**
 * Shared helpers of the e2e specs. Everything goes through the BFF on the test server (the
 * baseURL), never straight to the core, so cookies, CSRF and the envelope are the real ones.
 *
 * Rate limits (core/src/rate-limit.ts) key on the client address, and every test comes from
 * 127.0.0.1: a run may sign up at most 10 accounts (signup_ip), send 10 resets (reset_ip), 20
 * sign-in links (link_ip) and spend 30 mailed tokens (token_ip). Each run starts on a fresh
 * database, so the counters start at zero; keep new tests within those budgets.
 */

export const BASE_URL = `http://127.0.0.1:${process.env.E2E_PORT ?? 3100}`;

/** The seeded demo account (core/src/seed/demo.ts, development only): confirmed, with balances. */
export const DEMO = { email: 'demo@obmen.local', password: 'obmen-demo-2026' } as const;

/** A password the shared schema accepts (8+ characters, not the email). */
export const PASSWORD = 'Correct-Horse-42';

export type TMail = { id: number; kind: string; to: string; subject: string; text: string; locale: string; created_at: string; links: string[] };

export type TAuthState = {
  status?: string;
  user: { is_authenticated: boolean; account_id?: number; need_set_password?: boolean; locale?: string; email?: string };
  locale: string;
  site_settings: { auth_type: 'password' | 'email'; [key: string]: unknown };
};

/** A unique address per call: tests run in parallel and the database lives for the whole run. */
export function uniqueEmail(prefix = 'e2e'): string {
  return `${prefix}-${Date.now().toString(36)}-${randomBytes(3).toString('hex')}@e2e.example.com`;
}

async function json<T>(response: APIResponse, what: string): Promise<T> {
  expect(response.ok(), `${what}: HTTP ${response.status()} ${await response.text()}`).toBe(true);
  return (await response.json()) as T;
}

/** GET /api/dev/mailbox?to= (dev only): the mails to this address, newest first. */
export async function readMailbox(request: APIRequestContext, to: string): Promise<TMail[]> {
  const response = await request.get(`/api/dev/mailbox?to=${encodeURIComponent(to)}`);
  return (await json<{ mails: TMail[] }>(response, 'GET /api/dev/mailbox')).mails;
}

/**
 * Waits for a mail of `kind` to `to` (mails are queued in the same transaction as the answer,
 * but polling keeps this honest if delivery ever becomes asynchronous) and returns it. `after`
 * skips mails that were already there (their ids).
 */
export async function waitForMail(request: APIRequestContext, to: string, kind: string, after: number[] = []): Promise<TMail> {
  let found: TMail | undefined;
  await expect
    .poll(
      async () => {
        found = (await readMailbox(request, to)).find((mail) => mail.kind === kind && !after.includes(mail.id));
        return found !== undefined;
      },
      { message: `a "${kind}" mail to ${to} in the dev mailbox`, timeout: 10_000 },
    )
    .toBe(true);
  return found!;
}

/** The one link of a mail whose path is `path` (e.g. /login or /reset-password). */
export function linkTo(mail: TMail, path: string): URL {
  const link = mail.links.map((href) => new URL(href)).find((url) => url.pathname === path && url.search.length > 1);
  expect(link, `a ${path}?… link in the "${mail.kind}" mail: ${mail.links.join(', ')}`).toBeDefined();
  return link!;
}

/** Path + query of a mailed link: the test server may differ from the mails' PUBLIC_URL. */
export function localPath(url: URL): string {
  return `${url.pathname}${url.search}`;
}

/** POST /api/dev/auth_type (dev only): the site-wide login mode. Global: see playwright.config.ts. */
export async function setAuthType(request: APIRequestContext, authType: 'password' | 'email'): Promise<void> {
  const response = await request.post('/api/dev/auth_type', { data: { auth_type: authType } });
  await json(response, `POST /api/dev/auth_type ${authType}`);
}

/** GET /api/auth/check with the given context's cookies. */
export async function authCheck(request: APIRequestContext, headers: Record<string, string> = {}): Promise<TAuthState> {
  return json<TAuthState>(await request.get('/api/auth/check', { headers }), 'GET /api/auth/check');
}

export type TAccount = { email: string; password: string; accountId: number };

/**
 * A fresh confirmed account, signed in in `page`'s browser context: register, take the
 * confirmation link from the dev mailbox and spend it (what /login?confirm= does in the
 * browser). Through page.request, so the BFF's remember_token cookie lands in the context.
 * Counts against signup_ip (10 per run, see above).
 */
export async function signUp(page: Page, options: { prefix?: string; password?: string } = {}): Promise<TAccount> {
  const email = uniqueEmail(options.prefix);
  const password = options.password ?? PASSWORD;
  await json(await page.request.post('/api/auth/register', { data: { email, password } }), 'POST /api/auth/register');
  const mail = await waitForMail(page.request, email, 'signup_confirm');
  const token = linkTo(mail, '/login').searchParams.get('confirm');
  expect(token, 'confirm token in the sign-up link').toBeTruthy();
  const state = await json<TAuthState>(await page.request.post(`/api/auth/confirm/${token}`, { data: {} }), 'POST /api/auth/confirm');
  expect(state.user.is_authenticated).toBe(true);
  return { email, password, accountId: state.user.account_id! };
}

/** Signs `page`'s context in by password through the API (no UI). */
export async function logIn(page: Page, email: string, password: string): Promise<TAuthState> {
  const response = await page.request.post('/api/auth/login_by_password', { data: { email, password } });
  const state = await json<TAuthState>(response, 'POST /api/auth/login_by_password');
  expect(state.user.is_authenticated).toBe(true);
  return state;
}

/** The session cookie of a context, or undefined. */
/** Signs the demo account in on a phone viewport and opens the burger menu on the home page; answers the menu and the sign-in. */
export async function openSignedInBurger(page: Page): Promise<{ menu: Locator; state: TAuthState }> {
  const state = await logIn(page, DEMO.email, DEMO.password);
  await page.goto('/');
  await page.getByTestId('burger-open').click();
  const menu = page.getByTestId('mobile-menu');
  await expect(menu).toBeVisible();
  await expect(menu.getByTestId('account-id')).toHaveAttribute('data-account-id', String(state.user.account_id));
  return { menu, state };
}

export async function sessionCookie(page: Page): Promise<string | undefined> {
  const cookies = await page.context().cookies(BASE_URL);
  return cookies.find((cookie) => cookie.name === 'remember_token' || cookie.name === '__Host-remember_token')?.value;
}

/** The element the visitor can see (several copies exist: header and burger menu). */
export function visible(page: Page, testId: string) {
  return page.getByTestId(testId).filter({ visible: true });
}

/**
 * Creates a notification through the dev-only POST /api/dev/notify (the e2e core holds its
 * PGlite directory, one process at a time, so the operator CLI `notify:send` cannot open it).
 */
export async function sendNotification(
  request: APIRequestContext,
  body: {
    account_id?: number;
    all?: true;
    display: 'inner' | 'modal';
    type: 'danger' | 'success' | 'secondary';
    title: string;
    text?: string;
    buttons?: Array<{ url: string; title: string }>;
    closable?: boolean;
    locale?: 'ru' | 'en';
  },
): Promise<number> {
  const response = await request.post('/api/dev/notify', { data: body });
  expect(response.status(), `POST /api/dev/notify: ${await response.text()}`).toBe(200);
  const answer = (await response.json()) as { id?: number; notification_id?: number; sent?: number };
  const id = answer.id ?? answer.notification_id ?? answer.sent;
  expect(typeof id, `notification id in ${JSON.stringify(answer)}`).toBe('number');
  return id!;
}

// ---- money (e2e/money.spec.ts) -------------------------------------------------------------------

/** An exact decimal string as an integer at `scale` decimals: "0.05" at 8 → 5000000n (no floats near money). */
export function toMinor(text: string, scale: number): bigint {
  const [whole = '0', fraction = ''] = text.trim().split('.');
  expect(fraction.replace(/0+$/, '').length, `${text} has at most ${scale} decimals`).toBeLessThanOrEqual(scale);
  return BigInt((whole || '0') + fraction.padEnd(scale, '0').slice(0, scale));
}

/** The exact balance of a wallet as the sidebar holds it (data-balance, kept live by the layout script). */
export async function walletBalance(page: Page, currency: string): Promise<string> {
  const balance = await page.locator(`.sidebar [data-wallet-currency="${currency}"]`).getAttribute('data-balance');
  expect(balance, `wallet ${currency} in the sidebar`).not.toBeNull();
  return balance!;
}

/** The header's total balance text, e.g. "10 095,00 USD" (ru: narrow no-break space, comma) or "10,095.00 USD" (en). */
export async function headerBalance(page: Page): Promise<string> {
  return (await visible(page, 'balance').locator('[data-balance-amount]').textContent())?.trim() ?? '';
}

/** Waits until every island of the page has hydrated (Astro drops the `ssr` attribute then). */
export async function islandsReady(page: Page): Promise<void> {
  await expect(page.locator('astro-island[ssr]')).toHaveCount(0);
}

// ---- payments (e2e/deposit.spec.ts) --------------------------------------------------------------

/**
 * The operator's payments:bank:received / payments:chain:send / payments:chain:mine through the
 * dev-only POST /api/dev/payments (the CLI cannot open the e2e core's live PGlite).
 */
export async function sandboxPayments(
  request: APIRequestContext,
  body:
    | { action: 'bank_received'; reference: string; amount?: string; currency?: string; payer?: string }
    | { action: 'chain_send'; address: string; amount: string }
    | { action: 'chain_mine'; blocks: number },
): Promise<void> {
  await json(await request.post('/api/dev/payments', { data: body }), `POST /api/dev/payments ${body.action}`);
}

function base32Decode(text: string): Buffer {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
  let bits = 0;
  let value = 0;
  const out: number[] = [];
  for (const ch of text.replace(/\s/g, '')) {
    value = (value << 5) | alphabet.indexOf(ch);
    bits += 5;
    if (bits >= 8) {
      out.push((value >>> (bits - 8)) & 255);
      bits -= 8;
    }
  }
  return Buffer.from(out);
}

/** RFC 6238: HMAC-SHA-1, 30-second steps, 6 digits. */
export function totp(secret: string, atMs: number): string {
  const counter = Buffer.alloc(8);
  counter.writeBigUInt64BE(BigInt(Math.floor(atMs / 30_000)));
  const digest = createHmac('sha1', base32Decode(secret)).update(counter).digest();
  const offset = digest[digest.length - 1]! & 0x0f;
  return String((digest.readUInt32BE(offset) & 0x7fffffff) % 1_000_000).padStart(6, '0');
}

/** Turns on 2FA in /settings/security (a wrong code first, refused); answers the secret and the recovery codes. */
export async function enrolTotp(page: Page): Promise<{ secret: string; recovery: string[] }> {
  await page.goto('/settings/security');
  await islandsReady(page);
  await expect(page.getByTestId('tfa-status')).toHaveAttribute('data-enabled', 'false');
  await page.getByTestId('totp-start').click();
  await expect(page.getByTestId('totp-qr')).toBeVisible();
  const secret = (await page.getByTestId('totp-secret').getAttribute('data-secret'))!;
  expect(secret).toMatch(/^[A-Z2-7]{32}$/);
  await expect(page.getByTestId('totp-uri')).toHaveText(new RegExp(`^otpauth://totp/Obmen:.*secret=${secret}`));
  // A wrong code first: refused next to the field.
  await page.getByTestId('enable-code').fill('000000');
  await page.getByTestId('totp-confirm').click();
  await expect(page.getByTestId('enable-error')).toBeVisible();
  await page.getByTestId('enable-code').fill(totp(secret, Date.now()));
  await page.getByTestId('totp-confirm').click();
  await expect(page.getByTestId('recovery-codes').locator('li')).toHaveCount(10);
  const recovery = await page.getByTestId('recovery-codes').locator('li code').allTextContents();
  await page.getByTestId('codes-done').click();
  await expect(page.getByTestId('tfa-status')).toHaveAttribute('data-enabled', 'true');
  return { secret, recovery };
}

/** The development EVM chain's outside wallet pays an address (a real signed transaction), or blocks are mined: POST /api/dev/evm. */
export async function evmChain(
  request: APIRequestContext,
  body: { action: 'send'; currency: 'ETH' | 'USDT' | 'USDC'; address: string; amount: string } | { action: 'mine'; blocks: number },
): Promise<void> {
  await json(await request.post('/api/dev/evm', { data: body }), `POST /api/dev/evm ${body.action}`);
}
