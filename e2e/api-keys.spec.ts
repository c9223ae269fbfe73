import { execFile } from 'node:child_process';
import { createHmac, randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { expect, test, type APIRequestContext } from '@playwright/test';
import { axeOn } from './axe.ts';
import { BASE_URL, enrolTotp, islandsReady, signUp, waitForMail } from './helpers.ts';

/*
 * Keys for bots, end to end over real sockets through the BFF: 2FA on, a key made in
 * /settings/api (its secret shown once), signed requests (the /article/api examples in curl and
 * TypeScript, run as written), a replay refused, the last use shown, the key revoked.
 */
const run = promisify(execFile);

type TKey = { id: string; secret: string };

/** One signed request, as /article/api describes. */
async function signed(request: APIRequestContext, key: TKey, method: 'GET' | 'POST', path: string, body?: object, nonce = randomBytes(16).toString('hex')) {
  const text = body === undefined ? '' : JSON.stringify(body);
  const timestamp = String(Math.floor(Date.now() / 1000));
  const signature = createHmac('sha256', key.secret).update(`${timestamp}\n${nonce}\n${method}\n${path}\n${text}`).digest('hex');
  return request.fetch(path, {
    method,
    headers: {
      'X-Obmen-Key': key.id,
      'X-Obmen-Timestamp': timestamp,
      'X-Obmen-Nonce': nonce,
      'X-Obmen-Signature': signature,
      ...(text ? { 'Content-Type': 'application/json' } : {}),
    },
    ...(text ? { data: text } : {}),
  });
}

test('API keys (ru): made with the second factor, used by a signed request and the guide examples, revoked', async ({ page, context, playwright }) => {
  await context.addCookies([{ name: 'i18n_redirected', value: 'ru', url: BASE_URL }]);
  const account = await signUp(page, { prefix: 'apikey' });
  await page.goto('/settings/api');
  await expect(page.getByTestId('api-keys-needs-2fa')).toBeVisible();
  await expect(page.getByTestId('api-key-form')).toHaveCount(0);

  const { recovery } = await enrolTotp(page);
  await page.getByTestId('api-keys-open').click();
  await expect(page).toHaveURL(/\/settings\/api$/);
  await islandsReady(page);
  // The form refuses a key without the second factor, next to its field.
  await page.getByTestId('api-key-label').fill('Торговый бот');
  await page.getByTestId('api-key-scope-exchange').check();
  await page.getByTestId('api-key-create').click();
  await expect(page.getByTestId('api-key-code')).toHaveAttribute('aria-invalid', 'true');
  for (const width of [375, 1280]) {
    await page.setViewportSize({ width, height: 900 });
    const { violations } = await axeOn(page).analyze();
    expect(violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => v.id)).toEqual([]);
  }
  await page.getByTestId('api-key-code').fill(recovery[0]!);
  await page.getByTestId('api-key-create').click();
  await expect(page.getByTestId('api-key-created')).toContainText('больше он показан не будет');
  const key = { id: (await page.getByTestId('api-key-id').textContent())!, secret: (await page.getByTestId('api-key-secret').textContent())! };
  expect(key.id).toMatch(/^ok_[a-z2-7]{20}$/);
  await expect(page.getByTestId('api-key')).toContainText('Торговый бот');
  await expect(page.getByTestId('api-key-last-used')).toContainText('не использовался');
  const { violations } = await axeOn(page).analyze();
  expect(violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => v.id)).toEqual([]);
  expect((await waitForMail(page.request, account.email, 'api_key_created')).text).toContain('Торговый бот');

  // A bot: its own client, no cookies, only the key.
  const bot = await playwright.request.newContext({ baseURL: BASE_URL });
  const wallets = await signed(bot, key, 'GET', '/api/wallets');
  expect(wallets.status(), await wallets.text()).toBe(200);
  expect((await wallets.json()).wallets.length).toBeGreaterThan(0);
  const nonce = randomBytes(16).toString('hex');
  const quote = await signed(bot, key, 'POST', '/api/exchange/check', { src: 'USDT', dst: 'BTC', amount: '10' }, nonce);
  expect(quote.status(), await quote.text()).toBe(200);
  const replay = await signed(bot, key, 'POST', '/api/exchange/check', { src: 'USDT', dst: 'BTC', amount: '10' }, nonce);
  expect([replay.status(), (await replay.json()).code]).toEqual([401, 'api_key_replayed']);
  const outOfScope = await signed(bot, key, 'POST', '/api/transfer/check', { account_id: '12345678', currency: 'USDT', amount: '1' });
  expect([outOfScope.status(), (await outOfScope.json()).code]).toEqual([403, 'api_key_scope']);

  // The guide's two examples, taken from the page and run as written with this key.
  await page.goto('/article/api');
  const [curl, typescript] = await page.locator('pre').allTextContents();
  const dir = await mkdtemp(join(tmpdir(), 'obmen-api-'));
  try {
    const env = { ...process.env, OBMEN_URL: BASE_URL, OBMEN_KEY: key.id, OBMEN_SECRET: key.secret };
    const script = curl!.replace(/^export OBMEN_URL=.*$/m, '');
    const shell = await run('bash', ['-eu', '-c', script], { env });
    expect(shell.stdout).toContain('"wallets"');
    expect(shell.stdout).toContain('"quote"');
    expect(shell.stdout).not.toContain('api_key_');
    await writeFile(join(dir, 'bot.mts'), typescript!);
    const node = await run(process.execPath, [join(dir, 'bot.mts')], { env });
    expect(node.stdout).toContain('USDT');
    expect(node.stdout).toContain('token');
  } finally {
    await rm(dir, { recursive: true, force: true });
  }

  await page.goto('/settings/api');
  await islandsReady(page);
  await expect(page.getByTestId('api-key-last-used')).toContainText('127.0.0.1');
  await page.getByTestId('api-key-revoke').click();
  await expect(page.getByTestId('api-keys-message')).toContainText('Ключ отозван');
  await expect(page.getByTestId('api-key')).toHaveCount(0);
  const revoked = await signed(bot, key, 'GET', '/api/wallets');
  expect([revoked.status(), (await revoked.json()).code]).toEqual([401, 'api_key_invalid']);
  await bot.dispose();
});
