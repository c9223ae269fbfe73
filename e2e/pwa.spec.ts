import { expect, test, type BrowserContext, type Page } from '@playwright/test';
import { BASE_URL, islandsReady, signUp } from './helpers.ts';

/*
 * The installable app: the manifest and the service worker are served with the right types and
 * fields, the worker registers for the whole site, keeps only public static files (never /api,
 * never a page of someone's), and a navigation without network gets the offline page in the
 * reader's language. A newer front-end build named by an /api answer reloads the page, or (within
 * the reload guard, or while the reader types) shows the update banner.
 */

// The suite blocks service workers (playwright.config.ts); here they are what is tested.
test.use({ serviceWorkers: 'allow' });

const SHELL_PATHS = /^\/(offline\?lang=(ru|en)|favicon\.svg|manifest\.webmanifest|icons\/[a-z0-9-]+\.png|_astro\/.+)$/;

/** The page once the worker controls it (it takes over its first page at once). */
async function controlled(page: Page): Promise<string> {
  await page.waitForFunction(() => navigator.serviceWorker.controller !== null);
  return page.evaluate(() => navigator.serviceWorker.controller!.scriptURL);
}

/** Every URL the worker has kept, as a path with its query. */
async function kept(page: Page): Promise<string[]> {
  return page.evaluate(async () => {
    const urls: string[] = [];
    for (const name of await caches.keys()) {
      for (const request of await (await caches.open(name)).keys()) {
        const url = new URL(request.url);
        urls.push(url.pathname + url.search);
      }
    }
    return urls;
  });
}

async function withLocale(context: BrowserContext, locale: 'ru' | 'en') {
  await context.addCookies([{ name: 'i18n_redirected', value: locale, url: BASE_URL }]);
}

test('the manifest, the icons and the service worker are served with their types, fields and headers', async ({ request, page }) => {
  const manifest = await request.get('/manifest.webmanifest');
  expect(manifest.headers()['content-type']).toMatch(/^application\/manifest\+json/);
  const fields = (await manifest.json()) as Record<string, unknown> & { icons: Array<{ src: string; sizes: string; purpose: string; type: string }> };
  expect(fields).toMatchObject({ name: 'Obmen', short_name: 'Obmen', display: 'standalone', scope: '/', theme_color: '#4d8887' });
  expect(String(fields.start_url)).toMatch(/^\//);
  for (const [sizes, purpose] of [
    ['192x192', 'any'],
    ['512x512', 'any'],
    ['512x512', 'maskable'],
    ['180x180', 'any'],
  ]) {
    const icon = fields.icons.find((entry) => entry.sizes === sizes && entry.purpose === purpose);
    expect(icon, `${sizes} ${purpose}`).toBeDefined();
    const file = await request.get(icon!.src);
    expect(file.headers()['content-type'], icon!.src).toBe('image/png');
  }
  const worker = await request.get('/sw.js?v=x&lang=ru');
  expect(worker.headers()['content-type']).toMatch(/javascript/);
  expect(worker.headers()['cache-control']).toBe('no-cache');
  await page.goto('/');
  await expect(page.locator('link[rel="manifest"]')).toHaveAttribute('href', '/manifest.webmanifest');
  await expect(page.locator('link[rel="apple-touch-icon"]')).toHaveAttribute('href', '/icons/apple-touch-icon.png');
  await expect(page.locator('meta[name="theme-color"]')).toHaveCount(2);
});

for (const locale of ['ru', 'en'] as const) {
  test(`offline (${locale}): the worker registers for the site, keeps only public files, and shows the offline page when the network is cut`, async ({
    page,
    context,
  }) => {
    await withLocale(context, locale);
    // Signed in: the pages seen are personal, and must not be kept.
    await signUp(page, { prefix: `pwa-${locale}` });
    await page.goto('/exchanges');
    const script = new URL(await controlled(page));
    expect(script.pathname).toBe('/sw.js');
    expect(script.searchParams.get('lang')).toBe(locale);
    expect(script.searchParams.get('v')).toBe(await page.locator('meta[name="obmen-fv"]').getAttribute('content'));
    expect(await page.evaluate(async () => (await navigator.serviceWorker.ready).scope)).toBe(`${BASE_URL}/`);
    // Chromium's own verdict on installing the site as an app (what Lighthouse's installable audit
    // asked): nothing about the site stands in the way. A test browser's context is incognito-like,
    // which Chromium names as a reason of its own: that one is the browser's, not the site's.
    const cdp = await context.newCDPSession(page);
    const { installabilityErrors } = await cdp.send('Page.getInstallabilityErrors');
    expect(installabilityErrors.map((error) => error.errorId).filter((id) => id !== 'in-incognito')).toEqual([]);
    await cdp.detach();
    await page.goto('/history');
    await islandsReady(page);
    const urls = await kept(page);
    expect(urls).toContain(`/offline?lang=${locale}`);
    expect(urls.filter((url) => !SHELL_PATHS.test(url))).toEqual([]);

    await context.setOffline(true);
    await page.goto('/settings');
    const offline = page.getByTestId('offline-page');
    await expect(offline).toBeVisible();
    await expect(page.locator('html')).toHaveAttribute('lang', locale);
    await expect(page.getByRole('heading', { level: 1 })).toHaveText(locale === 'ru' ? 'Нет соединения' : 'No connection');
    const path = test.info().outputPath(`offline-${locale}.png`);
    await page.screenshot({ path });
    await test.info().attach(`offline-${locale}`, { path, contentType: 'image/png' });
    // An /api call is never answered from the worker's cache.
    expect(
      await page.evaluate(() =>
        fetch('/api/auth/check').then(
          () => 'answered',
          () => 'failed',
        ),
      ),
    ).toBe('failed');
    await context.setOffline(false);
    await page.goto('/exchanges');
    await expect(page.getByTestId('offline-page')).toHaveCount(0);
  });
}

test('a newer front-end build named by an /api answer reloads the page once, then the update banner offers it', async ({ browser }) => {
  // Without the worker, so the page's /api calls can be rewritten on their way.
  const context = await browser.newContext({ serviceWorkers: 'block' });
  await withLocale(context, 'en');
  const page = await context.newPage();
  await page.route('**/api/exchange/rates/**', async (route) => {
    const answer = await route.fetch();
    await route.fulfill({ response: answer, body: (await answer.text()).replace(/"fv":"[^"]*"/, '"fv":"a-newer-build"') });
  });
  let loads = 0;
  page.on('load', () => loads++);
  await page.goto('/exchange/USDT/BTC');
  const banner = page.getByTestId('update-banner');
  await expect(banner).toBeVisible();
  // Spec §4: the stale page reloaded itself; the same build named again within a minute (the
  // reload guard) shows the banner instead of reloading in a loop.
  expect(loads).toBe(2);
  await expect(banner).toContainText('A new version of the site is out.');
  await expect(page.getByRole('status').filter({ has: banner })).toHaveCount(1);
  await banner.getByRole('button', { name: 'Later' }).click();
  await expect(banner).toBeHidden();
  await page.reload();
  await expect(banner).toBeVisible();
  await Promise.all([page.waitForEvent('load'), banner.getByRole('button', { name: 'Reload' }).click()]);
  await context.close();
});
