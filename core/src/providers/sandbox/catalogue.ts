import type { TSeedSystem } from '../../domains/payments/catalogue.ts';

/*
 * The sandbox systems a fresh database starts with where sandboxes may run (seed/demo.ts):
 * every flow works on a fresh machine. Data, not code: an operator edits them afterwards
 * (payments:system:price, enable, disable).
 */

const CARD = { ru: 'Банковская карта (песочница)', en: 'Bank card (sandbox)' };
const BANK = { ru: 'Банковский перевод (песочница)', en: 'Bank transfer (sandbox)' };
const CHAIN = { ru: 'Перевод в блокчейне (песочница)', en: 'Blockchain transfer (sandbox)' };
const FIAT_CARD_LIMITS: Record<string, [string, string]> = {
  RUB: ['100', '300000'],
  USD: ['1', '5000'],
  EUR: ['1', '5000'],
  KZT: ['500', '2000000'],
  UAH: ['50', '150000'],
};
const CHAIN_TERMS: Record<string, [min: string, max: string, networkFee: string, confirmations: number]> = {
  BTC: ['0.0001', '10', '0.0002', 2],
  ETH: ['0.001', '200', '0.002', 12],
  USDT: ['1', '500000', '1', 19],
  USDC: ['1', '500000', '5', 12],
  TON: ['0.1', '100000', '0.05', 1],
  LTC: ['0.001', '2000', '0.001', 6],
  TRX: ['1', '1000000', '1', 19],
};

function perCurrency<T extends string>(codes: readonly T[], terms: (code: T) => [string, string, string, string, number?]): TSeedSystem['currencies'] {
  return Object.fromEntries(codes.map((code) => [code, terms(code)]));
}

const FIAT = ['RUB', 'USD', 'EUR', 'KZT', 'UAH'] as const;
const CRYPTO = Object.keys(CHAIN_TERMS);

/** The hosted card page, for paying in (a deposit, or a purchase) in `codes`: `feePercent` and the fiat card limits. */
function payByCard(direction: 'deposit' | 'purchase', codes: readonly (typeof FIAT)[number][], feePercent: string): TSeedSystem {
  return {
    direction,
    id: 'sandbox-card',
    provider: 'sandbox-card',
    names: CARD,
    logo: '/image/payments/card.svg',
    level: 0,
    fields: [],
    currencies: perCurrency(codes, (code) => [feePercent, '0', FIAT_CARD_LIMITS[code]![0], FIAT_CARD_LIMITS[code]![1]]),
  };
}

export const SANDBOX_PAYMENT_SYSTEMS: TSeedSystem[] = [
  payByCard('deposit', FIAT, '1.5'),
  {
    direction: 'deposit',
    id: 'sandbox-bank',
    provider: 'sandbox-bank',
    names: BANK,
    logo: '/image/payments/bank.svg',
    level: 0,
    fields: [],
    currencies: perCurrency(FIAT, (code) => ['0', '0', FIAT_CARD_LIMITS[code]![0], (BigInt(FIAT_CARD_LIMITS[code]![1]) * 10n).toString()]),
  },
  {
    direction: 'deposit',
    id: 'sandbox-chain',
    provider: 'sandbox-chain',
    names: CHAIN,
    logo: '/image/payments/chain.svg',
    level: 0,
    fields: [],
    currencies: perCurrency(CRYPTO, (code) => ['0', '0', CHAIN_TERMS[code]![0], CHAIN_TERMS[code]![1], CHAIN_TERMS[code]![3]]),
  },
  {
    direction: 'withdraw',
    id: 'sandbox-card',
    provider: 'sandbox-card',
    names: CARD,
    logo: '/image/payments/card.svg',
    level: 1,
    fields: ['card_number', 'card_holder'],
    currencies: perCurrency(FIAT, (code) => [
      '1',
      code === 'RUB' ? '50' : code === 'KZT' ? '250' : code === 'UAH' ? '25' : '1',
      FIAT_CARD_LIMITS[code]![0],
      FIAT_CARD_LIMITS[code]![1],
    ]),
  },
  {
    direction: 'withdraw',
    id: 'sandbox-bank',
    provider: 'sandbox-bank',
    names: BANK,
    logo: '/image/payments/bank.svg',
    level: 1,
    fields: ['iban', 'account_holder'],
    currencies: perCurrency(FIAT, (code) => ['0.5', '0', FIAT_CARD_LIMITS[code]![0], (BigInt(FIAT_CARD_LIMITS[code]![1]) * 10n).toString()]),
  },
  {
    direction: 'withdraw',
    id: 'sandbox-chain',
    provider: 'sandbox-chain',
    names: CHAIN,
    logo: '/image/payments/chain.svg',
    level: 0,
    fields: ['address', 'memo'],
    currencies: perCurrency(CRYPTO, (code) => ['0', CHAIN_TERMS[code]![2], CHAIN_TERMS[code]![0], CHAIN_TERMS[code]![1]]),
  },
  payByCard('purchase', ['RUB', 'USD', 'EUR'], '2.5'),
];
