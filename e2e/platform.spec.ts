import { expect, test, type Page, type Response as NetworkResponse } from '@playwright/test';
import { BASE_URL, DEMO, logIn, openSignedInBurger, sendNotification, signUp, visible } from './helpers.ts';

/**
 * Articles in both languages and their 404, inner and modal notifications,
 * the burger menu at 375 px, the route progress bar, the tutorial flags, the front-end logger.
 */

// ---- articles ---------------------------------------------------------------------------------

test('an article page in Russian, then in English through the language switcher', async ({ page }) => {
  const response = await page.goto('/article/fees');
  expect(response?.status()).toBe(200);
  await expect(page.locator('html')).toHaveAttribute('lang', 'ru');
  await expect(page.locator('article h1')).toHaveText('Комиссии и лимиты');
  await expect(page).toHaveTitle(/Комиссии и лимиты/);
  await expect(page.locator('header').first()).toBeVisible();
  await expect(page.locator('footer').last()).toBeVisible();

  await visible(page, 'lang-en').click();
  await expect(page.locator('html')).toHaveAttribute('lang', 'en');
  await expect(page).toHaveURL(`${BASE_URL}/article/fees`);
  await expect(page.locator('article h1')).toHaveText('Fees and limits');
  await expect(page).toHaveTitle(/Fees and limits/);

  // The English page, not a cached Russian one, after a reload too.
  await page.reload();
  await expect(page.locator('article h1')).toHaveText('Fees and limits');
});

test('footer menu items link to article pages that open', async ({ page }) => {
  await page.goto('/');
  const link = page.locator('footer').last().locator('a[href="/article/terms"]');
  await expect(link).toBeVisible();
  await link.click();
  await expect(page).toHaveURL(`${BASE_URL}/article/terms`);
  await expect(page.locator('article h1')).toHaveText('Пользовательское соглашение');
});

test('an unknown article answers 404 with the not-found page, in both languages', async ({ page, context }) => {
  const response = await page.goto('/article/no-such-article');
  expect(response?.status()).toBe(404);
  await expect(page.getByRole('heading', { name: 'Страница не найдена' })).toBeVisible();
  await expect(page.locator('header').first()).toBeVisible();
  await expect(page.locator('footer').last()).toBeVisible();

  // A name the page-level validation refuses is the 404 page too (spec §5).
  expect((await page.goto('/article/Bad%20Name!'))?.status()).toBe(404);

  await context.addCookies([{ name: 'i18n_redirected', value: 'en', url: BASE_URL }]);
  expect((await page.goto('/article/no-such-article'))?.status()).toBe(404);
  await expect(page.getByRole('heading', { name: 'This page could not be found' })).toBeVisible();
});

// ---- notifications ----------------------------------------------------------------------------

function closeCall(page: Page, id: number) {
  return page.waitForResponse(
    (response) => response.url() === `${BASE_URL}/api/notify/close` && response.request().method() === 'POST' && response.request().postDataJSON()?.id === id,
  );
}

test('an inner and a modal notification: the modal opens by itself, closing one calls the server and it stays closed after a reload', async ({ page }) => {
  const account = await signUp(page, { prefix: 'notify' });
  // Through the dev-only endpoint (see helpers.ts sendNotification): the operator command
  // `notify:send` cannot reach the e2e server's PGlite while the server holds it.
  const innerId = await sendNotification(page.request, {
    account_id: account.accountId,
    display: 'inner',
    type: 'success',
    title: 'E2E: баннер',
    text: 'Текст с <b>разметкой</b>',
    buttons: [{ url: '/article/fees', title: 'Комиссии' }],
  });
  const modalId = await sendNotification(page.request, {
    account_id: account.accountId,
    display: 'modal',
    type: 'danger',
    title: 'E2E: окно',
    text: 'Важное сообщение',
  });

  await page.goto('/');
  const modal = page.locator(`[data-testid="notification-modal"][data-notification-id="${modalId}"]`);
  const inner = page.locator(`[data-testid="notification-inner"][data-notification-id="${innerId}"]`);
  // The modal is an open dialog by itself; the inner one is a banner.
  await expect(modal).toBeVisible();
  await expect(modal).toHaveJSProperty('open', true);
  await expect(modal).toHaveClass(/notice-danger/);
  await expect(modal).toContainText('E2E: окно');
  await expect(inner).toBeAttached();
  await expect(inner).toHaveClass(/notice-success/);
  await expect(inner.locator('.notice-text b')).toHaveText('разметкой');
  await expect(inner.getByRole('link', { name: 'Комиссии' })).toHaveAttribute('href', '/article/fees');

  // Close the modal: the server is told, then it goes.
  const closedModal = closeCall(page, modalId);
  await modal.getByTestId('notification-close').click();
  expect((await closedModal).status()).toBe(200);
  await expect(modal).toHaveCount(0);
  await expect(inner).toBeVisible();

  await page.reload();
  await expect(inner).toBeVisible();
  await expect(page.locator(`[data-notification-id="${modalId}"]`)).toHaveCount(0);

  // Close the inner one as well; after a reload neither comes back.
  const closedInner = closeCall(page, innerId);
  await inner.getByTestId('notification-close').click();
  expect((await closedInner).status()).toBe(200);
  await expect(inner).toHaveCount(0);
  await page.reload();
  await expect(inner).toHaveCount(0);
  await expect(page.locator(`[data-notification-id="${modalId}"]`)).toHaveCount(0);
  const open = (await (await page.request.get('/api/notify')).json()) as { notifications: Array<{ notification_id: number }> };
  expect(open.notifications.map((n) => n.notification_id)).not.toContain(innerId);
  expect(open.notifications.map((n) => n.notification_id)).not.toContain(modalId);
});

test('notification HTML with XSS payloads is rendered without running any script', async ({ page }) => {
  const account = await signUp(page, { prefix: 'xss' });
  const payloads = [
    '<script>window.__xss = "script"</script>',
    '<img src="x" onerror="window.__xss = \'img\'">',
    '<svg onload="window.__xss = \'svg\'"></svg>',
    '<a href="javascript:window.__xss=\'href\'" id="xss-link">ссылка</a>',
    '<iframe src="javascript:parent.__xss=\'iframe\'"></iframe>',
    '<details open ontoggle="window.__xss=\'toggle\'"></details>',
  ];
  const id = await sendNotification(page.request, {
    account_id: account.accountId,
    display: 'inner',
    type: 'secondary',
    title: '<img src=x onerror="window.__xss=\'title\'">',
    text: `безопасный текст ${payloads.join(' ')}`,
  });
  const dialogs: string[] = [];
  page.on('dialog', (dialog) => {
    dialogs.push(dialog.message());
    void dialog.dismiss();
  });
  await page.goto('/');
  const notice = page.locator(`[data-notification-id="${id}"]`);
  await expect(notice).toContainText('безопасный текст');
  // The title is text, not HTML.
  await expect(notice.locator('.notice-title')).toHaveText('<img src=x onerror="window.__xss=\'title\'">');
  await expect(notice.locator('script, iframe, [onerror], [onload], [ontoggle]')).toHaveCount(0);
  // A javascript: link loses its anchor (the sanitiser keeps only its text): nothing to click.
  await expect(notice).toContainText('ссылка');
  await expect(notice.locator('a')).toHaveCount(0);
  // Any image the notice asked for has loaded or failed (an onerror would have run by then).
  await page.waitForLoadState('networkidle');
  expect(await page.evaluate(() => (window as unknown as { __xss?: string }).__xss)).toBeUndefined();
  expect(dialogs).toEqual([]);
});

// ---- the burger menu at 375 px ----------------------------------------------------------------

test.describe('at a 375 px phone viewport', () => {
  test.use({ viewport: { width: 375, height: 800 }, isMobile: true, hasTouch: true });

  test('the burger menu opens with its links, and closes on navigation', async ({ page }) => {
    await page.goto('/');
    await expect(page.locator('header .header-nav')).toBeHidden();
    await page.getByTestId('burger-open').click();
    const menu = page.getByTestId('mobile-menu');
    await expect(menu).toBeVisible();
    await expect(page.getByTestId('burger-open')).toHaveAttribute('aria-expanded', 'true');
    await expect(menu.locator('.mm-top a[href="/"] img')).toBeVisible();
    await expect(menu.getByTestId('burger-close')).toBeVisible();
    for (const [href, title] of [
      ['/exchanges', 'Обмен'],
      ['/article/fees', 'Комиссии'],
      ['/article/faq', 'Вопросы'],
      ['/article/contacts', 'Контакты'],
    ]) {
      await expect(menu.locator(`.mm-links a[href="${href}"]`)).toHaveText(title!);
    }
    await expect(menu.locator('a[href="/login"]')).toBeVisible();
    await expect(menu.getByTestId('lang-en')).toBeVisible();
    await expect(menu.locator('.mm-footer a[href="/article/terms"]')).toBeVisible();

    await menu.locator('.mm-links a[href="/article/fees"]').click();
    await expect(page).toHaveURL(`${BASE_URL}/article/fees`);
    await expect(page.locator('article h1')).toHaveText('Комиссии и лимиты');
    await expect(page.getByTestId('mobile-menu')).toBeHidden();
    await expect(page.getByTestId('burger-open')).toBeVisible();

    // Back (possibly from the back/forward cache): still closed.
    await page.goBack();
    await expect(page).toHaveURL(`${BASE_URL}/`);
    await expect(page.getByTestId('mobile-menu')).toBeHidden();
  });

  test('signed in, the burger menu shows the user menu, balance, chats and wallets panels and the main menu', async ({ page }) => {
    const { menu } = await openSignedInBurger(page);
    await expect(menu.getByTestId('balance')).toBeVisible();
    const panels = menu.locator('details.mm-panel');
    await expect(panels).toHaveCount(2);
    await panels.nth(1).locator(':scope > summary').click();
    await expect(panels.nth(1)).toHaveJSProperty('open', true);
    await expect(menu.locator('.mm-links [data-logout]')).toBeVisible();
    await expect(menu.locator('.mm-links a[href="/settings"]')).toBeVisible();

    // Copying the account id works from the burger's user menu too.
    await menu.getByTestId('account-id').click();
    await expect(page.getByTestId('toast')).toHaveText('Скопировано');
  });
});

// ---- the route progress bar -------------------------------------------------------------------

test('the progress bar appears on a navigation slower than 200 ms', async ({ page }) => {
  await page.goto('/');
  const bar = page.locator('#route-progress');
  await expect(bar).not.toHaveAttribute('data-active', 'true');

  // While a navigation is pending Playwright waits for it before looking at the page, so the
  // page records what the bar did (and when, relative to the click) in sessionStorage, which
  // the next page of the tab still sees, and says when it has.
  let barShown!: () => void;
  const shown = new Promise<void>((resolve) => (barShown = resolve));
  await page.exposeFunction('e2eProgressShown', () => barShown());
  await page.evaluate(() => {
    const element = document.getElementById('route-progress')!;
    let clickAt: number | undefined;
    document.addEventListener('click', () => (clickAt ??= performance.now()), { capture: true });
    new MutationObserver(() => {
      if (element.dataset.active !== 'true' || sessionStorage.getItem('e2e.progress')) return;
      const record = { afterClickMs: performance.now() - (clickAt ?? 0), opacity: element.style.opacity, width: element.style.width };
      sessionStorage.setItem('e2e.progress', JSON.stringify(record));
      (window as unknown as { e2eProgressShown: () => void }).e2eProgressShown();
    }).observe(element, { attributes: true, attributeFilter: ['data-active'] });
  });

  // The next page's document is held until the bar has shown (the navigation pending all the
  // while); 5 s at most, then the assertions below say it never did.
  await page.route(`${BASE_URL}/article/fees`, async (route) => {
    await Promise.race([shown, new Promise((resolve) => setTimeout(resolve, 5_000))]);
    await route.continue();
  });
  await page.locator('header .header-nav a[href="/article/fees"]').click();
  await expect(page).toHaveURL(`${BASE_URL}/article/fees`);
  await expect(page.locator('article h1')).toHaveText('Комиссии и лимиты');

  const record = await page.evaluate(() => sessionStorage.getItem('e2e.progress'));
  expect(record, 'the bar turned data-active="true" while the navigation was pending').not.toBeNull();
  const progress = JSON.parse(record!) as { afterClickMs: number; opacity: string; width: string };
  expect(progress.afterClickMs, 'not before the 200 ms throttle').toBeGreaterThanOrEqual(190);
  expect(progress.afterClickMs, 'soon after the throttle').toBeLessThan(900);
  expect(progress.opacity).toBe('1');
  expect(progress.width).not.toMatch(/^0(px|%)?$/);
  // The new page starts with the bar off.
  await expect(page.locator('#route-progress')).not.toHaveAttribute('data-active', 'true');
});

// ---- the tutorial -----------------------------------------------------------------------------

test('hidden tutorial steps stay hidden after a reload, the others stay visible', async ({ page }) => {
  await page.goto('/');
  const steps = page.locator('[data-testid^="tutorial-step_"]');
  await expect(steps).toHaveCount(14);
  for (let n = 1; n <= 14; n++) await expect(page.getByTestId(`tutorial-step_${n}`)).toBeVisible();

  for (const n of [2, 5]) {
    await page.getByTestId(`tutorial-step_${n}`).locator('[data-tutorial-hide]').click();
    await expect(page.getByTestId(`tutorial-step_${n}`)).toBeHidden();
  }
  const flags = await page.evaluate(() => JSON.parse(localStorage.getItem('obmen.tutorial') ?? '{}'));
  expect(flags).toMatchObject({ step_2: { show: false }, step_5: { show: false } });

  await page.reload();
  await expect(steps).toHaveCount(14);
  for (let n = 1; n <= 14; n++) {
    await expect(page.getByTestId(`tutorial-step_${n}`)).toBeVisible({ visible: n !== 2 && n !== 5 });
  }

  // "Show all" brings them back and forgets the flags.
  await page.locator('[data-tutorial-reset]').click();
  for (const n of [2, 5]) await expect(page.getByTestId(`tutorial-step_${n}`)).toBeVisible();
  await page.reload();
  await expect(page.getByTestId('tutorial-step_2')).toBeVisible();
});

// ---- the front-end logger ---------------------------------------------------------------------

type TFrontLog = { type: string; message: string; stack?: string; url: string; user_agent: string; time: string };

/**
 * The site reports by navigator.sendBeacon, whose body Playwright's network events do not
 * carry: the page's own reports are recorded on their way out (the call still goes through),
 * and the request itself is watched on the network.
 */
async function recordReports(page: Page) {
  await page.addInitScript(() => {
    const w = window as unknown as { __reports: string[] };
    w.__reports = [];
    const isLogger = (url: unknown) => String(url instanceof Request ? url.url : url).includes('/api/logger/front');
    const beacon = navigator.sendBeacon?.bind(navigator);
    if (beacon) {
      navigator.sendBeacon = (url, data) => {
        if (isLogger(url)) {
          if (data instanceof Blob) void data.text().then((text) => w.__reports.push(text));
          else if (typeof data === 'string') w.__reports.push(data);
        }
        return beacon(url, data);
      };
    }
    const fetch = window.fetch.bind(window);
    window.fetch = (input, init) => {
      if (isLogger(input) && typeof init?.body === 'string') w.__reports.push(init.body);
      return fetch(input, init);
    };
  });
}

async function waitForReport(page: Page, match: (body: TFrontLog) => boolean): Promise<TFrontLog> {
  let found: TFrontLog | undefined;
  await expect
    .poll(
      async () => {
        const reports = await page.evaluate(() => (window as unknown as { __reports?: string[] }).__reports ?? []);
        found = reports.map((text) => JSON.parse(text) as TFrontLog).find(match);
        return found !== undefined;
      },
      { message: 'a matching report sent to /api/logger/front', timeout: 10_000 },
    )
    .toBe(true);
  return found!;
}

function loggerCall(page: Page): Promise<NetworkResponse> {
  return page.waitForResponse((response) => response.url() === `${BASE_URL}/api/logger/front` && response.request().method() === 'POST', {
    timeout: 10_000,
  });
}

function expectAccepted(response: NetworkResponse) {
  expect(response.status(), 'the BFF accepts the report').toBe(204);
}

function expectReport(body: TFrontLog, type: string, message: string) {
  expect(body.type).toBe(type);
  expect(body.message).toContain(message);
  expect(body.url).toMatch(new RegExp(`^${BASE_URL}/`));
  expect(body.user_agent).toMatch(/Chrome/);
  expect(Number.isNaN(Date.parse(body.time))).toBe(false);
}

test('a window error and an unhandled rejection reach POST /api/logger/front', async ({ page }) => {
  await recordReports(page);
  await page.goto('/');
  const tag = `e2e-${Date.now()}`;

  let call = loggerCall(page);
  await page.evaluate((message) => {
    setTimeout(() => {
      throw new Error(message);
    }, 0);
  }, `${tag} window`);
  expectAccepted(await call);
  const windowError = await waitForReport(page, (body) => body.message.includes(`${tag} window`));
  expectReport(windowError, 'window', `${tag} window`);
  expect(windowError.stack).toContain(`${tag} window`);

  call = loggerCall(page);
  await page.evaluate((message) => {
    void Promise.reject(new Error(message));
  }, `${tag} rejection`);
  expectAccepted(await call);
  expectReport(await waitForReport(page, (body) => body.message.includes(`${tag} rejection`)), 'unhandledrejection', `${tag} rejection`);
});

test('an island that throws while rendering shows its fallback and reaches the logger as a React error', async ({ page }) => {
  await recordReports(page);
  // Make the login form island throw: its server-rendered props name a form kind that does not
  // exist, so the island's render fails (FORMS[kind] is undefined) inside its error boundary.
  await page.route(`${BASE_URL}/login`, async (route) => {
    const response = await route.fetch();
    const html = await response.text();
    const broken = html.replace('&quot;kind&quot;:[0,&quot;login_password&quot;]', '&quot;kind&quot;:[0,&quot;e2e_no_such_form&quot;]');
    expect(broken, 'the AuthForm island props in the /login page').not.toBe(html);
    await route.fulfill({ response, body: broken });
  });
  const call = loggerCall(page);
  await page.goto('/login');
  expectAccepted(await call);
  const report = await waitForReport(page, (body) => body.type === 'react');
  expectReport(report, 'react', '');
  expect(report.message).not.toBe('');
  expect(report.stack).toMatch(/AuthForm/);
  // The boundary's apology instead of the form; the rest of the page lives on.
  await expect(page.locator('.island-error')).toHaveText('Что-то пошло не так. Попробуйте ещё раз.');
  await expect(page.getByTestId('form-login_password')).toHaveCount(0);
  await expect(page.locator('header').first()).toBeVisible();
});
