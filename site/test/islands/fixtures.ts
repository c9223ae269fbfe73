import type { TCardOrder, TCardProduct, TDepositPayment, TPaymentLimits, TPurchaseQuote, TWalletEnvelope, TWithdrawal } from '@obmen/shared';

/** The balances every money-moving answer carries (the envelope's `wallets` and `total_balance`). */
export const walletEnvelope: TWalletEnvelope = { wallets: [], total_balance: { currency: 'USD', amount: '0.00', logo: '' } };

/** A card payment just opened, as the core answers it; `changes` for the fields a test looks at. */
export const openedPayment = (changes: Partial<TDepositPayment>): TDepositPayment => ({
  id: 'p1',
  direction: 'deposit',
  ps: 'card-usd',
  provider: 'sandbox-card',
  currency: 'USD',
  amount: '100.00',
  fee: '1.00',
  receive: '99.00',
  state: 'created',
  reason: null,
  created_at: '2026-01-01T10:00:00Z',
  expires_at: '2026-01-01T11:00:00Z',
  pay_url: null,
  url: '/deposit/p1',
  bank: null,
  address: null,
  confirmations: 0,
  required_confirmations: 0,
  ...changes,
});

/** What a purchase's quote holds while it is open. */
export const purchaseQuote: TPurchaseQuote = {
  buy: 'BTC',
  receive: '0.001',
  rate: '99000',
  expires_at: '2026-01-01T10:05:00Z',
  tolerance_percent: '1',
  outcome: null,
  final_receive: null,
  final_rate: null,
};

/** The deposit limits a payment form's check answers with. */
export const paymentLimits: TPaymentLimits = { level: 0, currency: 'USD', per_24h: '1000', per_30d: '5000', left_24h: '1000', left_30d: '5000' };

/** A withdrawal awaiting review, as the core answers it. */
export const requestedWithdrawal: TWithdrawal = {
  id: 'w1',
  ps: 'card',
  system: 'Card',
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
