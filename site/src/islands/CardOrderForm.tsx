import { useState, type FormEvent } from 'react';
import { useTranslation } from 'react-i18next';
import type { TCardProduct } from '@obmen/shared';
import { displayAmount } from '@obmen/shared/format';
import { api } from '../lib/api.ts';
import { CALLS } from '@obmen/shared/calls';
import { useMoneyForm } from '../lib/use-money-form.ts';
import { IslandRoot, type TIslandProps } from './IslandRoot.tsx';
import { FormError } from './FormParts.tsx';

type TProps = TIslandProps & { products: TCardProduct[]; initialProduct?: string | undefined };
type TField = 'product' | 'currency' | 'name_on_card' | 'address_country' | 'address_city' | 'address_postcode' | 'address_line';
const ADDRESS: TField[] = ['address_country', 'address_city', 'address_postcode', 'address_line'];
const FIELDS: TField[] = ['product', 'currency', 'name_on_card', ...ADDRESS];
const LATIN = /^[A-Za-z][A-Za-z .'-]*$/;

/** /cards/order/{product?}: the order form; the issue fee is held when it is sent. */
function CardOrderFormBody({ products, initialProduct, locale }: Omit<TProps, 'messages'>) {
  const { t } = useTranslation();
  const first = products.find((p) => p.id === initialProduct) ?? products[0];
  const [values, setValues] = useState<Record<TField, string>>({
    product: first?.id ?? '',
    currency: first?.currencies[0] ?? '',
    name_on_card: '',
    address_country: '',
    address_city: '',
    address_postcode: '',
    address_line: '',
  });
  const { errors, formError, busy, formRef, submit, edit, showErrors, hydrated } = useMoneyForm(FIELDS);
  const product = products.find((p) => p.id === values.product) ?? first;
  const physical = product?.kind === 'physical';

  function set(field: TField, value: string) {
    setValues((current) => {
      const next = { ...current, [field]: value };
      if (field === 'product') next.currency = products.find((p) => p.id === value)?.currencies[0] ?? '';
      return next;
    });
    edit(field);
  }

  async function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    if (!product) return;
    const found: Partial<Record<TField, string>> = {};
    const name = values.name_on_card.trim();
    if (!name) found.name_on_card = t('validation.required');
    else if (!LATIN.test(name)) found.name_on_card = t('cards.name_latin');
    if (physical) for (const field of ADDRESS) if (!values[field].trim()) found[field] = t('validation.required');
    if (Object.keys(found).length) {
      showErrors(found);
      return;
    }
    const form: Record<string, string> = { product: values.product, currency: values.currency, name_on_card: name };
    if (physical) for (const field of ADDRESS) form[field] = values[field].trim();
    const answer = await submit((idempotencyKey) => api(CALLS['POST /api/card/order'], { body: form, idempotencyKey }), { leaving: true });
    if (answer) window.location.assign(`/cards/order/confirm?card=${answer.order.id}`);
  }

  const input = (field: TField, label: string, extra: { autoComplete?: string; hint?: string } = {}) => (
    <label className="field">
      <span className="field-label">{label}</span>
      <input
        name={field}
        value={values[field]}
        autoComplete={extra.autoComplete ?? 'off'}
        onChange={(event) => set(field, event.target.value)}
        aria-invalid={errors[field] ? 'true' : undefined}
        aria-describedby={errors[field] || extra.hint ? `co-${field}-note` : undefined}
        data-testid={`card-${field}`}
      />
      {errors[field] ? (
        <span className="field-error" id={`co-${field}-note`} role="alert">
          {errors[field]}
        </span>
      ) : (
        extra.hint && (
          <span className="field-hint" id={`co-${field}-note`}>
            {extra.hint}
          </span>
        )
      )}
    </label>
  );

  return (
    <form method="post" className="xf card-order-form" noValidate onSubmit={onSubmit} ref={formRef} data-testid="card-order-form">
      <FormError text={formError} testId="form-error" />
      <label className="field">
        <span className="field-label">{t('cardspage.product')}</span>
        <select name="product" value={values.product} onChange={(event) => set('product', event.target.value)} data-testid="card-product">
          {products.map((p) => (
            <option key={p.id} value={p.id}>
              {p.name[locale]}
            </option>
          ))}
        </select>
      </label>
      <label className="field">
        <span className="field-label">{t('cardspage.currency')}</span>
        <select name="currency" value={values.currency} onChange={(event) => set('currency', event.target.value)} data-testid="card-currency">
          {(product?.currencies ?? []).map((code) => (
            <option key={code} value={code}>
              {code}
            </option>
          ))}
        </select>
      </label>
      {input('name_on_card', t('cardspage.name_on_card'), { autoComplete: 'cc-name', hint: t('cardspage.name_hint') })}
      {physical && (
        <fieldset className="card-address">
          <legend>{t('cardspage.address')}</legend>
          {input('address_country', t('cardspage.address_country'), { autoComplete: 'country-name' })}
          {input('address_city', t('cardspage.address_city'), { autoComplete: 'address-level2' })}
          {input('address_postcode', t('cardspage.address_postcode'), { autoComplete: 'postal-code' })}
          {input('address_line', t('cardspage.address_line'), { autoComplete: 'street-address' })}
        </fieldset>
      )}
      {product && (
        <p className="field-hint" data-testid="card-order-terms">
          {t('cardspage.order_terms', {
            fee: displayAmount(product.issue_fee, locale),
            monthly: displayAmount(product.monthly_fee, locale),
            currency: product.fee_currency,
          })}
        </p>
      )}
      <button type="submit" className="btn btn-primary" disabled={busy || !hydrated} data-testid="card-order-submit">
        {t('cardspage.place_order')}
      </button>
    </form>
  );
}

export default function CardOrderForm({ messages, ...props }: TProps) {
  return (
    <IslandRoot locale={props.locale} messages={messages}>
      <CardOrderFormBody {...props} />
    </IslandRoot>
  );
}
