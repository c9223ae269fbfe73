import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { FastifyRequest } from 'fastify';
import { displayMoney, isCardNumber, normalizeCardNumber, THEME_HEADER, themeAttribute, translate, type TI18nKey, type TLocale } from '@obmen/shared';
import { notFoundOf } from '../../errors.ts';
import type { TProviders } from '../../domains/payments/providers.ts';
import { paymentPageUrl } from '../../domains/payments/deposits.ts';
import { cancelCard, cardPayment, SANDBOX_CARDS, SANDBOX_CHALLENGE_CODE, submitCard, submitChallenge, type TCardPayment } from './payments.ts';

/*
 * The card sandbox's hosted payment page, served by core at its own path (reached through the
 * BFF's /api proxy, so on the site's origin): plain HTML forms, no script, one stylesheet. The
 * payer enters a test card; the outcome (paid, declined, or a 3-D Secure challenge first) goes
 * to our webhook signed with the provider's secret, then the payer is sent back to the site's
 * page of the payment.
 */

const PAGE_PATH = '/api/payments/sandbox-card/pay/:id';
const CSS_PATH = '/api/payments/sandbox-card/page.css';

// The site's two colour sets (site/src/styles/global.css): `light-dark()` follows the page's
// `color-scheme`, which is the reader's system unless the BFF passes the reader's choice.
const CSS = `*{box-sizing:border-box}:root{color-scheme:light dark}:root[data-theme=light]{color-scheme:light}:root[data-theme=dark]{color-scheme:dark}
body{margin:0;font:16px/1.5 system-ui,sans-serif;background:light-dark(#eef2f2,#2e3440);color:light-dark(#1d2b2b,#eceff4)}
main{max-width:28rem;margin:2rem auto;padding:1.5rem;background:light-dark(#fff,#3b4252);border-radius:12px;box-shadow:0 2px 12px rgb(0 0 0/.08)}
h1{font-size:1.25rem;margin:0 0 .25rem}.amount{font-size:1.75rem;font-weight:700;margin:.5rem 0 1rem}
.badge{display:inline-block;font-size:.75rem;padding:.1rem .5rem;border-radius:1rem;background:light-dark(#fff3cd,#4d4536);color:light-dark(#5c4400,#ebcb8b)}
label{display:block;font-weight:600;margin:.75rem 0 .25rem}input{width:100%;padding:.6rem;font:inherit;color:inherit;background:light-dark(#fff,#2e3440);border:1px solid light-dark(#6b7b7b,#8a94a8);border-radius:8px}
input:focus-visible,button:focus-visible{outline:3px solid light-dark(#2f5f5e,#8fbcbb);outline-offset:2px}.row{display:flex;gap:.75rem}.row>div{flex:1}
.error{color:light-dark(#9b1c1c,#eba4aa);margin:.25rem 0 0}.actions{display:flex;gap:.75rem;margin-top:1.25rem;flex-wrap:wrap}
button{font:inherit;padding:.65rem 1.25rem;border-radius:8px;border:1px solid light-dark(#2f5f5e,#8fbcbb);cursor:pointer}
.primary{background:light-dark(#2f5f5e,#8fbcbb);color:light-dark(#fff,#2e3440)}.secondary{background:light-dark(#fff,#3b4252);color:light-dark(#2f5f5e,#9dc8c7)}.hint{font-size:.875rem;color:light-dark(#4a5a5a,#c0c8d6)}
.hint code{background:light-dark(#eef2f2,#2e3440);padding:0 .25rem}`;

const ZPageParams = z.object({ id: z.string().max(64) });
const ZPageBody = z.object({
  action: z.enum(['pay', 'challenge', 'cancel']),
  card_number: z.string().max(40).optional(),
  expiry: z.string().max(10).optional(),
  cvc: z.string().max(10).optional(),
  code: z.string().max(20).optional(),
});
type TPageBody = z.infer<typeof ZPageBody>;

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);
}

type TFieldErrors = Partial<Record<'card_number' | 'expiry' | 'cvc' | 'code', TI18nKey>>;

/** MM/YY, not in the past (by the injected clock). */
function expiryError(text: string | undefined, now: Date): TI18nKey | undefined {
  const match = /^\s*(\d{2})\s*\/\s*(\d{2})\s*$/.exec(text ?? '');
  if (!match) return 'sandbox.expiry_invalid';
  const month = Number(match[1]);
  const year = 2000 + Number(match[2]);
  if (month < 1 || month > 12) return 'sandbox.expiry_invalid';
  const lastDay = Date.UTC(year, month, 1);
  return lastDay <= now.getTime() ? 'sandbox.expiry_past' : undefined;
}

type TPageLook = { locale: TLocale; theme: 'light' | 'dark' | undefined };

function render(
  { locale, theme }: TPageLook,
  payment: TCardPayment,
  view: 'card' | 'challenge',
  errors: TFieldErrors = {},
  values: TPageBody | null = null,
): string {
  const t = (key: TI18nKey, vars?: Record<string, string | number>) => escapeHtml(translate(locale, key, vars));
  const action = `/api/payments/sandbox-card/pay/${payment.id}`;
  const field = (name: keyof TFieldErrors, label: TI18nKey, attrs: string, value = '') => {
    const error = errors[name];
    return `<label for="${name}">${t(label)}</label>
<input id="${name}" name="${name}" ${attrs} value="${escapeHtml(value)}"${error ? ` aria-invalid="true" aria-describedby="${name}-error"` : ''}>
${error ? `<p class="error" id="${name}-error" role="alert">${t(error)}</p>` : ''}`;
  };
  const body =
    view === 'card'
      ? `<form method="post" action="${action}" novalidate>
<input type="hidden" name="action" value="pay">
${field('card_number', 'sandbox.card_number', 'inputmode="numeric" autocomplete="cc-number" required', values?.card_number)}
<div class="row"><div>${field('expiry', 'sandbox.expiry', 'inputmode="numeric" autocomplete="cc-exp" placeholder="MM/YY" required', values?.expiry)}</div>
<div>${field('cvc', 'sandbox.cvc', 'inputmode="numeric" autocomplete="cc-csc" required', values?.cvc)}</div></div>
<div class="actions"><button class="primary" type="submit" data-testid="sandbox-pay">${t('sandbox.pay')}</button></div>
</form>
<p class="hint">${t('sandbox.test_cards', { approve: SANDBOX_CARDS.approve, decline: SANDBOX_CARDS.decline, challenge: SANDBOX_CARDS.challenge })}</p>`
      : `<h2>${t('sandbox.challenge_title')}</h2><p>${t('sandbox.challenge_text')}</p>
<form method="post" action="${action}" novalidate>
<input type="hidden" name="action" value="challenge">
${field('code', 'sandbox.challenge_code', 'inputmode="numeric" autocomplete="one-time-code" required')}
<div class="actions"><button class="primary" type="submit" data-testid="sandbox-confirm">${t('sandbox.confirm')}</button></div>
</form>
<p class="hint">${t('sandbox.challenge_hint', { code: SANDBOX_CHALLENGE_CODE })}</p>`;
  return `<!doctype html>
<html lang="${locale}"${theme ? ` data-theme="${theme}"` : ''}><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${t('sandbox.title')}</title><link rel="stylesheet" href="${CSS_PATH}"></head>
<body><main>
<span class="badge">${t('sandbox.badge')}</span>
<h1>${t('sandbox.heading')}</h1>
<p class="amount" data-testid="sandbox-amount">${escapeHtml(displayMoney(payment.amount, payment.currency, locale))}</p>
${body}
<form method="post" action="${action}"><input type="hidden" name="action" value="cancel">
<div class="actions"><button class="secondary" type="submit" data-testid="sandbox-cancel">${t('sandbox.cancel')}</button></div></form>
</main></body></html>`;
}

/** The reader's language, and the theme the BFF passes from the reader's cookie (checked: a bad value is none). */
function lookOf(request: FastifyRequest): TPageLook {
  return { locale: request.locale, theme: themeAttribute(request.headers[THEME_HEADER]) };
}

const sandboxCardPage: FastifyPluginAsyncZod<{ providers: TProviders; now: () => Date }> = async (app, { providers, now }) => {
  const html = { 200: { content: { 'text/html': { schema: z.string() } } }, 303: z.null().describe('back to the payment on the site') };

  app.get(
    CSS_PATH,
    {
      schema: {
        tags: ['Deposit'],
        summary: "The card sandbox's hosted page: its stylesheet",
        response: { 200: { content: { 'text/css': { schema: z.string() } } } },
      },
    },
    async (_request, reply) => {
      reply.type('text/css; charset=utf-8').header('cache-control', 'public, max-age=3600');
      return CSS;
    },
  );

  const returnUrl = async (payment: TCardPayment) => {
    const [purchase] = await app.db.query<{ buy_currency: string }>(
      'SELECT buy_currency FROM purchases WHERE payment_id = (SELECT id FROM payments WHERE public_id = $1)',
      [payment.id],
    );
    return paymentPageUrl(
      { direction: payment.direction as 'deposit' | 'purchase', system_id: payment.system_id, currency: payment.currency, public_id: payment.id },
      purchase?.buy_currency,
    );
  };

  app.get(
    PAGE_PATH,
    {
      config: { paramsError: () => notFoundOf('payment') },
      schema: { tags: ['Deposit'], summary: "The card sandbox's hosted payment page (HTML): enter a test card", params: ZPageParams, response: html },
    },
    async (request, reply) => {
      const payment = await cardPayment(app.db, request.params.id);
      if (!payment) throw notFoundOf('payment');
      reply.header('cache-control', 'no-store');
      if (payment.state === 'challenge') return reply.type('text/html; charset=utf-8').send(render(lookOf(request), payment, 'challenge'));
      if (payment.state !== 'open' || (payment.payment_state !== 'created' && payment.payment_state !== 'pending')) {
        return reply.redirect(await returnUrl(payment), 303);
      }
      return reply.type('text/html; charset=utf-8').send(render(lookOf(request), payment, 'card'));
    },
  );

  app.post(
    PAGE_PATH,
    {
      config: { paramsError: () => notFoundOf('payment') },
      schema: {
        tags: ['Deposit'],
        summary: "The card sandbox's hosted page: pay, answer the 3-D Secure challenge, or cancel (form post)",
        params: ZPageParams,
        body: ZPageBody,
        response: html,
      },
    },
    async (request, reply) => {
      const payment = await cardPayment(app.db, request.params.id);
      if (!payment) throw notFoundOf('payment');
      const body = request.body;
      const at = now();
      reply.header('cache-control', 'no-store');
      const page = (view: 'card' | 'challenge', errors: TFieldErrors = {}) =>
        reply.type('text/html; charset=utf-8').send(render(lookOf(request), payment, view, errors, view === 'card' ? body : null));
      let outcome;
      if (body.action === 'cancel') {
        outcome = await cancelCard(app.db, providers, payment, at);
      } else if (body.action === 'challenge') {
        outcome = await submitChallenge(app.db, providers, payment, body.code ?? '', at);
        if (outcome === 'wrong_code') return page('challenge', { code: 'sandbox.challenge_wrong' });
      } else {
        const errors: TFieldErrors = {};
        if (!isCardNumber(body.card_number ?? '')) errors.card_number = 'payments.field.card_number_invalid';
        const expiry = expiryError(body.expiry, at);
        if (expiry) errors.expiry = expiry;
        if (!/^\d{3,4}$/.test((body.cvc ?? '').trim())) errors.cvc = 'sandbox.cvc_invalid';
        if (Object.keys(errors).length && payment.state === 'open') return page('card', errors);
        outcome = await submitCard(app.db, providers, payment, normalizeCardNumber(body.card_number ?? ''), at);
        if (outcome === 'challenge') return page('challenge');
      }
      return reply.redirect(await returnUrl(payment), 303);
    },
  );
};

export default sandboxCardPage;
