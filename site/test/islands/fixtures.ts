import type { TCardOrder, TCardProduct, TWithdrawal } from '@obmen/shared';

/** A withdrawal awaiting review, as the core answers it. */
export const requestedWithdrawal: TWithdrawal = {
  id: 'w1',
  ps: 'card',
  provider: 'sandbox',
  currency: 'USD',
  amount: '100.00',
  fee: '1.00',
  receive: '99.00',
  details: '4111 **** 1111',
  state: 'requested',
  reason: null,
  created_at: '2026-01-01T10:00:00Z',
  expected_at: null,
  finished_at: null,
  cancellable: true,
};

export const virtualCard: TCardProduct = {
  id: 'virtual-usd',
  kind: 'virtual',
  name: { ru: 'Виртуальная', en: 'Virtual' },
  description: { ru: '', en: '' },
  currencies: ['USD', 'EUR'],
  fee_currency: 'USD',
  issue_fee: '5.00',
  monthly_fee: '1.00',
  limits: [],
  delivery_days: null,
  image: '/image/card.svg',
};

export const placedOrder: TCardOrder = {
  id: 'c1',
  product: { id: 'virtual-usd', kind: 'virtual', name: virtualCard.name, image: virtualCard.image },
  currency: 'USD',
  name_on_card: 'IVAN PETROV',
  address: null,
  status: 'placed',
  fee_currency: 'USD',
  issue_fee: '5.00',
  monthly_fee: '1.00',
  reason: null,
  can_confirm: true,
  can_cancel: true,
  created_at: '2026-01-01T10:00:00Z',
  updated_at: '2026-01-01T10:00:00Z',
};
