import { expect, type Page } from '@playwright/test';
import { islandsReady } from './helpers.ts';

/*
 * Every page and page state that axe-core checks (e2e/a11y.spec.ts), signed in and out, ru and
 * en, at 375 and 1280 px. A new page adds its routes here, and the states that change what is
 * on screen (an open dialog or menu, a form showing its errors, a quote): CI then fails when it
 * has serious or critical accessibility violations.
 *
 * Signed-in states run as the seeded demo account and must not move money (other specs check
 * its balances to the unit): quotes are fine, confirming is not.
 */

export type TViewport = 'phone' | 'desktop';
export type TA11yState = {
  /** Shown in the report: route plus state. */
  name: string;
  path: string;
  /**
   * Who sees it: signed-out visitors, the signed-in (verified) demo account, both, or a new
   * account at verification level 0 (locked payment systems and cards, the document forms), or
   * a back-office operator of the compliance, support, finance and admin roles, with a passport
   * waiting for review, a customer's question waiting on the desk and a withdrawal waiting for an
   * operator ('ops').
   */
  auth: 'out' | 'in' | 'both' | 'new' | 'ops';
  /** Only at these widths (default both): the burger menu exists only on a phone. */
  viewports?: readonly TViewport[];
  /** Brings the page into the state to check, after it has loaded and hydrated. */
  prepare?: (page: Page) => Promise<void>;
  /**
   * The part of the page `prepare` changes (a CSS selector). The same path without `prepare` is
   * audited whole; this state then audits only this part again, which keeps the run short.
   */
  scope?: string;
};

export const VIEWPORTS: Record<TViewport, { width: number; height: number }> = {
  phone: { width: 375, height: 812 },
  desktop: { width: 1280, height: 800 },
};

async function openBurger(page: Page) {
  await page.getByTestId('burger-open').click();
  await expect(page.getByTestId('mobile-menu')).toBeVisible();
}

async function submitEmpty(page: Page, form: string) {
  await page.locator(`${form} button[type="submit"]`).click();
  await expect(page.locator(`${form} [aria-invalid="true"]`).first()).toBeVisible();
}

/** A form submitted empty, audited where its errors show. */
function formErrors(name: string, path: string, auth: TA11yState['auth'], testId: string): TA11yState {
  const form = `[data-testid="${testId}"]`;
  return { name, path, auth, prepare: (page) => submitEmpty(page, form), scope: form };
}

/** From the identity queue to the review of its first submission (a look: nothing is claimed). */
async function openFirstReview(page: Page) {
  await page.getByTestId('kyc-open').first().click();
  await expect(page.getByTestId('kyc-data')).toBeVisible();
  await islandsReady(page);
}

/** A file marked for rejection with the reason that needs a note: the note's field and the customer's hint show. */
async function rejectWithNote(page: Page) {
  await openFirstReview(page);
  await page.locator('[data-testid^="kyc-reason-"]').first().selectOption('other');
  await expect(page.locator('[data-testid^="kyc-note-"]').first()).toBeVisible();
}

/** The customer view of the first customer the search found. */
async function openFirstCustomer(page: Page) {
  await page.getByTestId('ops-customer-hits').getByRole('link').first().click();
  await expect(page.getByTestId('ops-customer-profile')).toBeVisible();
  await islandsReady(page);
}

/** The customer view's money form sent without an amount or memo: the core's field errors show. */
async function proposeEmptyMoney(page: Page) {
  await openFirstCustomer(page);
  await page.getByTestId('ops-money-submit').click();
  await expect(page.locator('[data-testid="ops-money-form"] [aria-invalid="true"]').first()).toBeVisible();
}

/** The withdrawals desk with the first waiting request's rejection form open. */
async function openRejection(page: Page) {
  await page.getByTestId('ops-wd-reject').first().click();
  await expect(page.getByTestId('ops-wd-reject-form')).toBeVisible();
}

/** The desk with its first conversation open. */
async function openFirstConversation(page: Page) {
  await page.getByTestId('desk-item').first().click();
  await expect(page.getByTestId('desk-thread')).toBeVisible();
}

async function deskView(page: Page, view: 'closed' | 'reports') {
  await page.getByTestId(`desk-view-${view}`).click();
  await expect(page.getByTestId(`desk-view-${view}`)).toHaveAttribute('aria-pressed', 'true');
  await expect(page.locator('[data-testid="desk"] .ops-wait')).toHaveCount(0);
}

async function quote(page: Page) {
  await page.getByTestId('exchange-amount').fill('100');
  await expect(page.getByTestId('exchange-quote')).toHaveAttribute('data-state', 'ready');
}

/** The pair page's chart with a past (a made-up one, through the dev route), on its year range. */
async function chartYear(page: Page) {
  expect((await page.request.post('/api/dev/rates/history', { data: { src: 'BTC', dst: 'USDT' } })).status()).toBe(200);
  await page.reload();
  await islandsReady(page);
  await expect(page.getByTestId('rate-chart')).toHaveAttribute('data-status', 'ready');
  await page.getByTestId('rate-chart-range-year').click();
  await expect(page.getByTestId('rate-chart')).toHaveAttribute('data-range', 'year');
  await expect(page.getByTestId('rate-chart')).toHaveAttribute('data-status', 'ready');
  await expect(page.getByTestId('rate-chart-summary')).toBeVisible();
}

async function openLogoutDialog(page: Page) {
  await page.locator('[data-logout]').filter({ visible: true }).first().click();
  await expect(page.getByTestId('logout-dialog')).toBeVisible();
}

async function quotePurchase(page: Page, amount: string, state: 'ready' | 'error') {
  await page.getByTestId('purchase-amount').fill(amount);
  await expect(page.getByTestId('purchase-quote')).toHaveAttribute('data-state', state);
}

/** Opens a purchase (no money moves until it is paid) and shows its status page, awaiting payment. */
async function openPurchase(page: Page) {
  const answer = await page.request.post('/api/purchase/integration_json', { form: { ps: 'sandbox-card', currency: 'USD', buy: 'BTC', amount: '10' } });
  expect(answer.ok(), await answer.text()).toBe(true);
  await page.goto(((await answer.json()) as { payment: { url: string } }).payment.url);
  await expect(page.getByTestId('purchase-status')).toHaveAttribute('data-state', 'created');
}

async function copyAccountId(page: Page) {
  await page.getByTestId('account-id').filter({ visible: true }).click();
  await expect(page.getByTestId('toast')).toBeVisible();
}

/** Sends a message in the open chat (the demo's own messages are never unread: no popup elsewhere). */
async function sendChatMessage(page: Page) {
  await page.getByTestId('chat-input').fill('Accessibility check: https://example.com/a11y');
  await page.getByTestId('chat-send').click();
  await expect(page.getByTestId('chat-message').last()).toContainText('Accessibility check');
}

async function sendEmptyChatMessage(page: Page) {
  await page.getByTestId('chat-send').click();
  await expect(page.getByTestId('chat-error')).toBeVisible();
}

async function depositBelowMinimum(page: Page) {
  await page.getByTestId('deposit-amount').fill('1');
  await expect(page.getByTestId('error-amount')).toBeVisible();
}

/** Opens a bank deposit (no money moves until the transfer is reported) and shows its page: details and reference. */
async function openBankDeposit(page: Page) {
  // Small: the demo's deposits count against its level's daily deposit limit.
  await page.getByTestId('deposit-amount').fill('10');
  await page.getByTestId('deposit-submit').click();
  await expect(page.getByTestId('deposit-bank')).toBeVisible();
  await islandsReady(page);
}

export const A11Y_STATES: readonly TA11yState[] = [
  { name: 'home', path: '/', auth: 'both' },
  { name: 'home, burger menu open', path: '/', auth: 'both', viewports: ['phone'], prepare: openBurger, scope: '#mobile-menu' },
  { name: 'pairs', path: '/exchanges', auth: 'both' },
  { name: 'pairs, searched', path: '/exchanges?search=BTC%2F', auth: 'both' },
  { name: 'pair page', path: '/exchange/USDT/BTC', auth: 'both' },
  { name: 'pair page, chart over a year', path: '/exchange/BTC/USDT', auth: 'both', prepare: chartYear, scope: '[data-testid="rate-chart"]' },
  { name: 'pair page, quoted', path: '/exchange/USDT/BTC', auth: 'both', prepare: quote, scope: '[data-testid="exchange-form"]' },
  { name: 'pair page, invalid amount', path: '/exchange/USDT/BTC?amount=0.0000001', auth: 'in' },
  { name: 'exchange all', path: '/exchange/all', auth: 'in' },
  { name: 'exchange all into BTC', path: '/exchange/all/BTC', auth: 'in' },
  { name: 'transfer', path: '/transfer', auth: 'in' },
  formErrors('transfer, form errors', '/transfer', 'in', 'transfer-form'),
  { name: 'cards', path: '/cards', auth: 'in' },
  { name: 'cards, list', path: '/cards/list', auth: 'in' },
  { name: 'cards, my cards', path: '/cards/my', auth: 'in' },
  { name: 'cards, order', path: '/cards/order', auth: 'in' },
  { name: 'cards, order a virtual card', path: '/cards/order/virtual', auth: 'in' },
  { name: 'history', path: '/history', auth: 'in' },
  { name: 'history of transfers', path: '/history/transfer', auth: 'in' },
  { name: 'withdraw', path: '/withdraw', auth: 'in' },
  { name: 'withdraw form (chain, BTC)', path: '/withdraw/form/sandbox-chain/BTC', auth: 'in' },
  { name: 'history of withdrawals', path: '/history/withdraw', auth: 'in' },
  { name: 'deposit', path: '/deposit', auth: 'in' },
  { name: 'deposit form (card, RUB)', path: '/deposit/form/sandbox-card/RUB', auth: 'in' },
  {
    name: 'deposit form, amount below the minimum',
    path: '/deposit/form/sandbox-card/RUB',
    auth: 'in',
    prepare: depositBelowMinimum,
    scope: '[data-testid="deposit-form"]',
  },
  { name: 'deposit form (chain, BTC): address and QR code', path: '/deposit/form/sandbox-chain/BTC', auth: 'in' },
  { name: 'deposit by bank transfer, awaiting payment', path: '/deposit/form/sandbox-bank/USD', auth: 'in', prepare: openBankDeposit },
  { name: 'history of deposits', path: '/history/deposit', auth: 'in' },
  { name: 'history of payments', path: '/history/payment', auth: 'in' },
  { name: 'purchase', path: '/purchase', auth: 'in' },
  { name: 'purchase of ETH', path: '/purchase?currency=ETH', auth: 'in' },
  { name: 'purchase form (card, BTC)', path: '/purchase/form/sandbox-card/BTC?currency=USD', auth: 'in' },
  {
    name: 'purchase form, quoted',
    path: '/purchase/form/sandbox-card/BTC?currency=USD',
    auth: 'in',
    prepare: (page) => quotePurchase(page, '100', 'ready'),
    scope: '[data-testid="purchase-form"]',
  },
  {
    name: 'purchase form, amount refused',
    path: '/purchase/form/sandbox-card/BTC?currency=EUR',
    auth: 'in',
    prepare: (page) => quotePurchase(page, '0.5', 'error'),
    scope: '[data-testid="purchase-form"]',
  },
  { name: 'purchase status, awaiting payment', path: '/purchase', auth: 'in', prepare: openPurchase, scope: 'main' },
  { name: 'referral bonuses', path: '/history/referral', auth: 'in' },
  { name: 'referral programme', path: '/referral', auth: 'in' },
  formErrors('referral programme, invite form errors', '/referral', 'in', 'form-referral-mailing'),
  { name: 'history, empty filter', path: '/history/exchange?currency=TRX&status=failed', auth: 'in' },
  { name: 'change password', path: '/settings/change-password', auth: 'in' },
  { name: 'personal data', path: '/settings/personal', auth: 'in' },
  { name: 'verification', path: '/settings/verification', auth: 'in' },
  { name: 'verification, level 0', path: '/settings/verification', auth: 'new' },
  { name: 'passport', path: '/settings/passport', auth: 'new' },
  formErrors('passport, form errors', '/settings/passport', 'new', 'form-verification'),
  { name: 'id card', path: '/settings/id_card', auth: 'new' },
  { name: "driver's licence", path: '/settings/drivers_license', auth: 'new' },
  { name: 'withdraw, level 0', path: '/withdraw', auth: 'new' },
  {
    name: 'withdraw, level 0, locked systems unfolded',
    path: '/withdraw',
    auth: 'new',
    prepare: (page) => page.getByTestId('withdraw-locked').locator('summary').click(),
    scope: '[data-testid="withdraw-locked"]',
  },
  { name: 'cards, level 0', path: '/cards/list', auth: 'new' },
  { name: 'purchase, level 0', path: '/purchase', auth: 'new' },
  { name: 'deposit, level 0', path: '/deposit', auth: 'new' },
  { name: 'mail preferences', path: '/settings/mail', auth: 'in' },
  { name: 'your data (privacy)', path: '/settings/privacy', auth: 'in' },
  { name: 'API keys (2FA off)', path: '/settings/api', auth: 'in' },
  { name: 'API for bots (article)', path: '/article/api', auth: 'out' },
  { name: 'withdrawal address book', path: '/withdraw/book', auth: 'in' },
  { name: 'security', path: '/settings/security', auth: 'in' },
  {
    // Starting an enrolment only stores a secret that is not in force: the demo account keeps 2FA off.
    name: 'security, enrolment QR and code errors',
    path: '/settings/security',
    auth: 'in',
    prepare: async (page) => {
      await page.getByTestId('totp-start').click();
      await expect(page.getByTestId('totp-qr')).toBeVisible();
      await submitEmpty(page, '[data-testid="form-totp-enable"]');
    },
    scope: '[data-testid="tfa-card"]',
  },
  {
    name: 'security, passkey form errors',
    path: '/settings/security',
    auth: 'in',
    prepare: async (page) => {
      await page.getByTestId('passkey-add').click();
      await expect(page.getByTestId('error-passkey-name')).toBeVisible();
    },
    scope: '[data-testid="passkeys-card"]',
  },
  { name: 'bind e-mail', path: '/settings/bind-email', auth: 'in' },
  formErrors('bind e-mail, form errors', '/settings/bind-email', 'in', 'form-bind-email'),
  // The "it was not me" page waits for a click, so visiting it spends nothing.
  { name: 'bind e-mail, report link', path: '/settings/bind-email?report=e2e-not-a-token-e2e-not-a-token-e2e-not-a-t', auth: 'out' },
  { name: "sign-in report (this wasn't me)", path: '/settings/sign-in-report?t=e2e-not-a-token-e2e-not-a-token-e2e-not-a-t', auth: 'out' },
  { name: 'unsubscribe, invalid link', path: '/unsubscribe?t=e2e-not-a-token', auth: 'both' },
  { name: 'offline page (what the service worker keeps)', path: '/offline', auth: 'out' },
  {
    name: 'logout dialog',
    path: '/exchanges',
    auth: 'in',
    prepare: async (page) => {
      if ((page.viewportSize()?.width ?? 0) < 992) await openBurger(page);
      await openLogoutDialog(page);
    },
    scope: '#logout-dialog',
  },
  { name: 'account id copied (toast)', path: '/transfer', auth: 'in', viewports: ['desktop'], prepare: copyAccountId, scope: '#toasts' },
  { name: 'login', path: '/login', auth: 'out' },
  formErrors('login, form errors', '/login', 'out', 'form-login_password'),
  { name: 'signup', path: '/signup', auth: 'out' },
  { name: 'forgot password', path: '/forgot-password', auth: 'out' },
  { name: 'reset password', path: '/reset-password?token=e2e-not-a-token', auth: 'out' },
  { name: 'support', path: '/support', auth: 'both' },
  // The back office's door: the same for a customer's session as for none (signed-in /ops: ops.spec.ts).
  { name: 'ops sign-in', path: '/ops/login', auth: 'both' },
  formErrors('ops sign-in, form errors', '/ops/login', 'out', 'ops-login-form'),
  // The hash state first: from /ops/enrol, a goto to /ops/enrol#… would not load the page again.
  { name: 'ops enrolment, spent link', path: '/ops/enrol#e2e-not-a-token', auth: 'out' },
  { name: 'ops enrolment, link without its token', path: '/ops/enrol', auth: 'out' },
  // Signed in as an operator (a11y.spec.ts makes one, a passport waiting for review and a question on the desk).
  { name: 'ops identity queue', path: '/ops/kyc', auth: 'ops' },
  { name: 'ops identity review', path: '/ops/kyc', auth: 'ops', prepare: openFirstReview },
  { name: 'ops identity review, a file rejected', path: '/ops/kyc', auth: 'ops', prepare: rejectWithNote, scope: '[data-testid="kyc-decision"]' },
  { name: 'ops home with the queues', path: '/ops', auth: 'ops' },
  { name: 'ops customer search', path: '/ops/customers?q=demo%40obmen.local', auth: 'ops' },
  { name: 'ops customer view', path: '/ops/customers?q=demo%40obmen.local', auth: 'ops', prepare: openFirstCustomer },
  {
    name: 'ops customer view, a money proposal refused',
    path: '/ops/customers?q=demo%40obmen.local',
    auth: 'ops',
    prepare: proposeEmptyMoney,
    scope: '[data-testid="ops-customer-money"]',
  },
  { name: 'ops withdrawals desk', path: '/ops/withdrawals', auth: 'ops' },
  { name: 'ops payments desk', path: '/ops/payments', auth: 'ops' },
  { name: 'ops withdrawals desk, a rejection open', path: '/ops/withdrawals', auth: 'ops', prepare: openRejection, scope: '[data-testid="ops-wd-waiting"]' },
  { name: 'ops reconciliation', path: '/ops/reconciliation', auth: 'ops' },
  { name: 'ops approvals', path: '/ops/approvals', auth: 'ops' },
  { name: 'ops operators', path: '/ops/operators', auth: 'ops' },
  { name: 'ops own passkeys', path: '/ops/security', auth: 'ops' },
  { name: 'ops audit trail', path: '/ops/audit', auth: 'ops' },
  { name: 'ops configuration', path: '/ops/config', auth: 'ops' },
  { name: 'ops configuration, notifications', path: '/ops/config/notifications', auth: 'ops' },
  { name: 'ops configuration, articles', path: '/ops/config/articles', auth: 'ops' },
  { name: 'ops configuration, menus', path: '/ops/config/menus', auth: 'ops' },
  { name: 'ops configuration, rates', path: '/ops/config/rates', auth: 'ops' },
  { name: 'ops configuration, payment systems', path: '/ops/config/payments', auth: 'ops' },
  { name: 'ops configuration, verification limits', path: '/ops/config/limits', auth: 'ops' },
  { name: 'ops configuration, transfers and withdrawals', path: '/ops/config/money', auth: 'ops' },
  { name: 'ops configuration, card products', path: '/ops/config/cards', auth: 'ops' },
  { name: 'ops configuration, site', path: '/ops/config/site', auth: 'ops' },
  { name: 'ops configuration, footer logos', path: '/ops/config/footer', auth: 'ops' },
  { name: 'ops configuration, referral terms', path: '/ops/config/referral', auth: 'ops' },
  { name: 'ops support desk', path: '/ops/support', auth: 'ops' },
  { name: 'ops support desk, a conversation open', path: '/ops/support', auth: 'ops', prepare: openFirstConversation, scope: '[data-testid="desk"]' },
  {
    name: 'ops support desk, closed conversations',
    path: '/ops/support',
    auth: 'ops',
    prepare: (page) => deskView(page, 'closed'),
    scope: '[data-testid="desk"]',
  },
  { name: 'ops support desk, reported chats', path: '/ops/support', auth: 'ops', prepare: (page) => deskView(page, 'reports'), scope: '[data-testid="desk"]' },
  { name: 'chats', path: '/chat', auth: 'in' },
  { name: 'chats, invalid account id', path: '/chat/private?id=123', auth: 'in' },
  { name: 'support chat', path: '/chat/support', auth: 'in' },
  { name: 'support chat, message sent', path: '/chat/support', auth: 'in', prepare: sendChatMessage, scope: '[data-testid="chat-thread"]' },
  { name: 'support chat, empty message refused', path: '/chat/support', auth: 'in', prepare: sendEmptyChatMessage, scope: '[data-testid="chat-thread"]' },
  // An account nobody has written to (valid check digit): the empty chat, as for any account.
  { name: 'private chat', path: '/chat/private/12345674', auth: 'in' },
  { name: 'private chat, malformed id (404)', path: '/chat/private/12345678', auth: 'in' },
  { name: 'article', path: '/article/fees', auth: 'both' },
  { name: 'not found', path: '/no-such-page', auth: 'both' },
];
