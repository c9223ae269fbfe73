import { expect, test, type Browser, type BrowserContext, type Page } from '@playwright/test';
import { closeSync, existsSync, mkdirSync, openSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import { axeOn } from './axe.ts';
import { A11Y_STATES, VIEWPORTS, type TA11yState, type TViewport } from './a11y-routes.ts';
import { BASE_URL, DEMO, islandsReady, logIn, sendNotification, signUp } from './helpers.ts';
import { sendPassport } from './kyc-helpers.ts';
import { freshSecondFactor, signedInOperator } from './ops-helpers.ts';

/*
 * Axe-core finds no serious or critical WCAG 2.2 A/AA violation on any page state of
 * e2e/a11y-routes.ts, signed in and out, ru and en, 375 and 1280 px, in the light theme; and in
 * the dark one every state again at one width per language (ru at 375 px, en at 1280 px), with
 * the rules a theme can change (contrast): the dark tokens change colours only, and the whole
 * rule set again would double the longest part of the suite. One browser context per sign-in state, locale and width walks
 * every state; failures are collected and reported together, so one run shows everything that
 * is wrong.
 */

const LOCALES = ['ru', 'en'] as const;
const WIDTHS: readonly TViewport[] = ['desktop', 'phone'];
const DARK_WIDTH: Record<(typeof LOCALES)[number], TViewport> = { ru: 'phone', en: 'desktop' };
/** What the dark theme can break: the contrast of text, and of links against the text around them. */
const DARK_RULES = ['color-contrast', 'link-in-text-block'];

/** Two frames: what a resize or a theme change restyles has been drawn. */
async function nextFrames(page: Page) {
  await page.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve))));
}

/**
 * The page as it is, in the dark theme: the attribute the server writes from the `theme` cookie
 * (e2e/theme.spec.ts checks that), set in place so the state prepared stays as it is; then light
 * again (the light walk goes on at the other width).
 */
async function auditDark(page: Page, state: string, scope?: string): Promise<TFinding[]> {
  await page.evaluate(() => {
    document.documentElement.dataset.theme = 'dark';
  });
  await nextFrames(page);
  const findings = await audit(page, `${state} dark`, scope, DARK_RULES);
  await page.evaluate(() => {
    delete document.documentElement.dataset.theme;
  });
  return findings;
}

type TFinding = { state: string; rule: string; impact: string; help: string; targets: string[] };

/** The serious and critical violations on the page as it is now. */
async function audit(page: Page, state: string, scope?: string, rules?: string[]): Promise<TFinding[]> {
  const all = axeOn(page);
  const builder = rules ? all.withRules(rules) : all;
  const result = await (scope ? builder.include(scope) : builder).analyze();
  return result.violations
    .filter((violation) => violation.impact === 'serious' || violation.impact === 'critical')
    .map((violation) => ({
      state,
      rule: violation.id,
      impact: violation.impact ?? '',
      help: violation.help,
      targets: violation.nodes
        .slice(0, 5)
        .map((node) => `${node.target.join(' ')}${node.failureSummary ? ` (${node.failureSummary.split('\n').slice(1, 2).join('').trim()})` : ''}`),
    }));
}

async function withLocale(context: BrowserContext, locale: string) {
  await context.addCookies([{ name: 'i18n_redirected', value: locale, url: BASE_URL }]);
}

type TAuth = 'in' | 'out' | 'new' | 'ops';

/** The states of this sign-in state, each with the widths it is checked at. */
function statesFor(auth: TAuth): Array<{ state: TA11yState; widths: TViewport[] }> {
  return A11Y_STATES.filter((state: TA11yState) => state.auth === auth || state.auth === 'both').map((state) => ({
    state,
    widths: WIDTHS.filter((width) => (state.viewports ?? WIDTHS).includes(width)),
  }));
}

/** Audits in one walk (the dark one included): the time limit of a test follows the length of its list, about 15 s an audit. */
function auditsOf(auth: TAuth): number {
  return statesFor(auth).reduce((sum, { widths }) => sum + widths.length + 1, 0);
}

/**
 * Walks the states for this sign-in state in one page; returns every finding. Each state is
 * loaded and prepared once and audited at each of its widths: the page is resized in place
 * (the layout is CSS media queries), which halves the loads of the walk.
 */
async function auditStates(page: Page, auth: TAuth, locale: (typeof LOCALES)[number], beforeState?: () => Promise<void>): Promise<TFinding[]> {
  const label = `${auth} ${locale}`;
  const findings: TFinding[] = [];
  for (const { state, widths } of statesFor(auth)) {
    await test.step(`${label} ${state.name} (${state.path})`, async () => {
      await beforeState?.();
      for (const [index, width] of widths.entries()) {
        await page.setViewportSize(VIEWPORTS[width]);
        if (index === 0) {
          await page.goto(state.path);
          await islandsReady(page);
          if (state.prepare) await state.prepare(page);
        } else {
          await nextFrames(page);
        }
        const name = `${label} ${width} ${state.name} (${state.path})`;
        findings.push(...(await audit(page, name, state.scope)));
        if (width === DARK_WIDTH[locale]) findings.push(...(await auditDark(page, name, state.scope)));
      }
    });
  }
  return findings;
}

function report(findings: TFinding[]): string {
  return findings.map((f) => `${f.state}\n  ${f.impact} ${f.rule}: ${f.help}\n    ${f.targets.join('\n    ')}`).join('\n');
}

async function newContext(browser: Browser, locale: string, storageState?: string): Promise<BrowserContext> {
  const context = await browser.newContext(storageState ? { storageState } : { storageState: { cookies: [], origins: [] } });
  await withLocale(context, locale);
  return context;
}

/*
 * One test per sign-in state and locale, so the walks spread over the workers and each test's
 * time limit follows the length of its list (every page added to a11y-routes.ts adds its share).
 */
for (const auth of ['out', 'in'] as const) {
  test.describe(auth === 'out' ? 'axe-core, signed out' : 'axe-core, signed in as the demo account', () => {
    for (const locale of LOCALES) {
      test(`every page, ${locale}, 1280 and 375 px`, async ({ browser }) => {
        test.setTimeout(60_000 + 15_000 * auditsOf(auth));
        const context = await newContext(browser, locale, auth === 'in' ? await demoSession(browser) : undefined);
        const findings = await auditStates(await context.newPage(), auth, locale);
        await context.close();
        expect(findings, report(findings)).toEqual([]);
      });
    }
  });
}

/**
 * One sign-in of the demo account for the whole run, shared by the workers (its sign-ins are
 * rate-limited; see helpers.ts): the first worker signs in and writes the session where the
 * others wait for it, in the run's output folder (emptied when a run starts).
 */
async function demoSession(browser: Browser): Promise<string> {
  const folder = test.info().project.outputDir;
  // Named by the runner's process: checkouts running side by side may share the output folder.
  const file = join(folder, `a11y-demo-session-${process.ppid}.json`);
  mkdirSync(folder, { recursive: true });
  try {
    closeSync(openSync(`${file}.lock`, 'wx'));
  } catch {
    await expect.poll(() => existsSync(file), { message: 'the demo session of another worker', timeout: 60_000 }).toBe(true);
    return file;
  }
  const context = await newContext(browser, 'ru');
  await logIn(await context.newPage(), DEMO.email, DEMO.password);
  await context.storageState({ path: `${file}.tmp` });
  renameSync(`${file}.tmp`, file);
  await context.close();
  return file;
}

test('axe-core: notifications (banner and modal) over the pages, ru and en', async ({ browser }) => {
  test.setTimeout(150_000);
  const context = await newContext(browser, 'ru');
  const page = await context.newPage();
  const account = await signUp(page, { prefix: 'a11y' });
  for (const type of ['success', 'danger', 'secondary'] as const) {
    await sendNotification(page.request, {
      account_id: account.accountId,
      display: 'inner',
      type,
      title: `A11y ${type}`,
      text: '<p>Text with <a href="/exchanges">a link</a>.</p>',
      buttons: [{ url: '/exchanges', title: 'Go' }],
    });
  }
  await sendNotification(page.request, {
    account_id: account.accountId,
    display: 'modal',
    type: 'danger',
    title: 'A11y modal',
    text: '<p>Modal text</p>',
    closable: true,
  });
  const findings: TFinding[] = [];
  for (const locale of LOCALES) {
    await withLocale(context, locale);
    for (const width of WIDTHS) {
      await page.setViewportSize(VIEWPORTS[width]);
      for (const path of ['/', '/exchange/USDT/BTC']) {
        await page.goto(path);
        await islandsReady(page);
        await expect(page.locator('dialog.notice-modal[open]')).toBeVisible();
        await expect(page.locator('.notice-inner')).toHaveCount(3);
        const name = `${locale} ${width} ${path} with notifications`;
        findings.push(...(await audit(page, name)));
        if (width === DARK_WIDTH[locale]) findings.push(...(await auditDark(page, name)));
      }
    }
  }
  await context.close();
  expect(findings, report(findings)).toEqual([]);
});

/*
 * What a new, unverified account sees (the demo account is verified): one sign-up, then every
 * `auth: 'new'` state, ru and en, at both widths.
 */
test('axe-core: every page state of a new account at level 0, ru and en', async ({ browser }) => {
  test.setTimeout(60_000 + 2 * 15_000 * auditsOf('new'));
  const context = await newContext(browser, 'ru');
  const page = await context.newPage();
  await signUp(page, { prefix: 'a11y-level0' });
  const findings: TFinding[] = [];
  for (const locale of LOCALES) {
    await withLocale(context, locale);
    findings.push(...(await auditStates(page, 'new', locale)));
  }
  await context.close();
  expect(findings, report(findings)).toEqual([]);
});

/**
 * The back office as an operator of the compliance, support, finance and admin roles sees it, with a
 * passport waiting for review, the demo account's question waiting on the desk and a customer's
 * withdrawal waiting for an operator: every `auth: 'ops'`
 * state, ru and en, at both widths.
 */
test('axe-core: the back office, ru and en', async ({ browser }) => {
  test.setTimeout(120_000 + 2 * 15_000 * auditsOf('ops'));
  const customer = await newContext(browser, 'ru');
  const customerPage = await customer.newPage();
  await signUp(customerPage, { prefix: 'a11y-kyc' });
  await sendPassport(customerPage);
  // A withdrawal above the auto-approval amount waits on the withdrawals desk.
  const waiting = await signUp(customerPage, { prefix: 'a11y-withdraw' });
  expect((await customerPage.request.post('/api/dev/level', { data: { account_id: waiting.accountId, level: 1 } })).ok()).toBe(true);
  expect((await customerPage.request.post('/api/dev/credit', { data: { account_id: waiting.accountId, currency: 'RUB', amount: '20000' } })).ok()).toBe(true);
  const withdrawal = await customerPage.request.post('/api/withdraw/form/sandbox-card', {
    form: { amount: '15000', currency: 'RUB', card_number: '4242 4242 4242 4242', card_holder: 'IVAN PETROV' },
    headers: { 'idempotency-key': `a11y-withdrawal-${Date.now()}` },
  });
  expect(withdrawal.ok(), await withdrawal.text()).toBe(true);
  await customer.close();
  const asker = await newContext(browser, 'ru', await demoSession(browser));
  expect((await (await asker.newPage()).request.post('/api/support', { data: { text: 'a11y: a question for the desk' } })).status()).toBe(200);
  await asker.close();
  const context = await newContext(browser, 'ru');
  const page = await context.newPage();
  const operator = await signedInOperator(page, ['compliance', 'support', 'finance', 'admin']);
  const findings: TFinding[] = [];
  // The review needs a second factor under 5 minutes old; the whole walk takes longer.
  let stepUpAt = 0;
  const keepSecondFactorFresh = async () => {
    if (Date.now() - stepUpAt < 120_000) return;
    await freshSecondFactor(page, operator);
    stepUpAt = Date.now();
  };
  for (const locale of LOCALES) {
    await withLocale(context, locale);
    findings.push(...(await auditStates(page, 'ops', locale, keepSecondFactorFresh)));
  }
  await context.close();
  expect(findings, report(findings)).toEqual([]);
});
