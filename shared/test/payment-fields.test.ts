import { describe, expect, it } from 'vitest';
import {
  addressFromBytes,
  ADDRESS_FORMATS,
  base58checkDecode,
  checkPaymentAmount,
  CURRENCY_ADDRESS_FORMAT,
  CURRENCY_NETWORK,
  exampleAddress,
  fieldsForCurrency,
  isAddress,
  isCardNumber,
  isIban,
  paymentFee,
  paymentFormSchema,
  segwitEncode,
  toChecksumEthAddress,
} from '../src/index.ts';

describe('card numbers (Luhn) and IBANs (mod 97)', () => {
  it('accepts test cards as typed, refuses a wrong check digit, letters and odd lengths', () => {
    for (const card of ['4111 1111 1111 1111', '4242-4242-4242-4242', '5555555555554444', '2200000000000004', '371449635398431']) {
      expect(isCardNumber(card), card).toBe(true);
    }
    for (const card of ['4111 1111 1111 1112', '4111', '41111111111111111111', '4111 1111 1111 111a', '']) expect(isCardNumber(card), card).toBe(false);
  });

  it('accepts IBANs with their country length and check digits, in any case and spacing', () => {
    for (const iban of ['DE89 3704 0044 0532 0130 00', 'gb82 west 1234 5698 7654 32', 'KZ86125KZT5004100100', 'FR1420041010050500013M02606']) {
      expect(isIban(iban), iban).toBe(true);
    }
    for (const iban of ['DE89 3704 0044 0532 0130 01', 'GB82WEST12345698765433', 'DE8937040044053201300', 'XX89370400440532013000', 'DE89-3704']) {
      expect(isIban(iban), iban).toBe(false);
    }
  });
});

describe('addresses in each network format, with checksums', () => {
  it('Bitcoin: base58check P2PKH and P2SH, bech32 v0 and bech32m v1; a changed character fails', () => {
    for (const address of [
      '1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN2',
      '3J98t1WpEZ73CNmQviecrnyiWrnqRhWNLy',
      'bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4',
      'BC1QW508D6QEJXTDG4Y5R3ZARVARY0C5XW7KV8F3T4',
      'bc1p5d7rjq7g6rdk2yhzks9smlaqtedr4dekq08ge8ztwac72sfr9rusxg3297',
    ]) {
      expect(isAddress('bitcoin', address), address).toBe(true);
    }
    for (const address of [
      '1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN3',
      'bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t5',
      'bc1Qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4',
      'tb1qw508d6qejxtdg4y5r3zarvary0c5xw7kxpjzsx',
      'LVg2kJoFNg45Nbpy53h7Fe1wKyeXVRhMH9',
      // a v1 program with the v0 checksum (bech32 where bech32m is due)
      'bc1pw508d6qejxtdg4y5r3zarvary0c5xw7kw508d6qejxtdg4y5r3zarvary0c5xw7k7grplx',
    ]) {
      expect(isAddress('bitcoin', address), address).toBe(false);
    }
  });

  it('Litecoin, TRON and TON', () => {
    expect(isAddress('litecoin', 'LVg2kJoFNg45Nbpy53h7Fe1wKyeXVRhMH9')).toBe(true);
    expect(isAddress('litecoin', 'MGxNPPB7eBoWPUaprtX9v9CXJZoD2465zN')).toBe(true);
    expect(isAddress('litecoin', 'LVg2kJoFNg45Nbpy53h7Fe1wKyeXVRhMH8')).toBe(false);
    expect(isAddress('litecoin', '1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN2')).toBe(false);
    expect(isAddress('tron', 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t')).toBe(true);
    expect(isAddress('tron', 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6u')).toBe(false);
    expect(isAddress('ton', 'EQCD39VS5jcptHL8vMjEXrzGaRcCVYto7HUn4bpAOg8xqB2N')).toBe(true);
    expect(isAddress('ton', 'EQCD39VS5jcptHL8vMjEXrzGaRcCVYto7HUn4bpAOg8xqB2M')).toBe(false);
    expect(isAddress('ton', `0:${'ab'.repeat(32)}`)).toBe(true);
  });

  it('Ethereum: EIP-55 mixed case is checked; all-lower and all-upper carry no checksum', () => {
    const address = '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed';
    expect(toChecksumEthAddress(address.toLowerCase())).toBe(address);
    expect(isAddress('ethereum', address)).toBe(true);
    expect(isAddress('ethereum', address.toLowerCase())).toBe(true);
    expect(isAddress('ethereum', `0x${address.slice(2).toUpperCase()}`)).toBe(true);
    expect(isAddress('ethereum', '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeD')).toBe(false);
    expect(isAddress('ethereum', '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAe')).toBe(false);
  });

  it('addresses made for deposits are in the real format of every network and pass their own checks', () => {
    const material = Uint8Array.from({ length: 32 }, (_, i) => (i * 37 + 11) & 0xff);
    for (const format of ADDRESS_FORMATS) {
      const address = addressFromBytes(format, material);
      expect(isAddress(format, address), `${format} ${address}`).toBe(true);
    }
    expect(addressFromBytes('bitcoin', material)).toMatch(/^bc1q[02-9ac-hj-np-z]{38}$/);
    expect(addressFromBytes('tron', material)).toMatch(/^T[1-9A-HJ-NP-Za-km-z]{33}$/);
    expect(base58checkDecode(addressFromBytes('tron', material))?.[0]).toBe(0x41);
    expect(segwitEncode('bc', 0, Uint8Array.from(Buffer.from('751e76e8199196d454941c45d1b3a323f1433bd6', 'hex')))).toBe(
      'bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4',
    );
  });
});

describe('the form schema shared by browser and core', () => {
  it('asks a memo only where the network has one, and normalises what it accepts', () => {
    expect(fieldsForCurrency(['address', 'memo'], 'TON')).toEqual(['address', 'memo']);
    expect(fieldsForCurrency(['address', 'memo'], 'BTC')).toEqual(['address']);
    const card = paymentFormSchema(['card_number', 'card_holder'], 'RUB').safeParse({ card_number: '4111 1111 1111 1111', card_holder: 'ivan  petrov' });
    expect(card.success && card.data).toEqual({ card_number: '4111111111111111', card_holder: 'IVAN PETROV' });
    const iban = paymentFormSchema(['iban', 'account_holder'], 'EUR').safeParse({ iban: 'de89 3704 0044 0532 0130 00', account_holder: 'Иван Петров' });
    expect(iban.success && iban.data).toEqual({ iban: 'DE89370400440532013000', account_holder: 'Иван Петров' });
  });

  it('names every bad field with its i18n key', () => {
    const messages = (schema: ReturnType<typeof paymentFormSchema>, value: unknown) => {
      const parsed = schema.safeParse(value);
      return parsed.success ? {} : Object.fromEntries(parsed.error.issues.map((issue) => [issue.path[0], issue.message]));
    };
    expect(messages(paymentFormSchema(['card_number', 'card_holder'], 'RUB'), { card_number: '4111 1111 1111 1112', card_holder: 'Иван' })).toEqual({
      card_number: 'payments.field.card_number_invalid',
      card_holder: 'payments.field.card_holder_invalid',
    });
    expect(messages(paymentFormSchema(['address', 'memo'], 'BTC'), { address: '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed' })).toEqual({
      address: 'payments.field.address_invalid',
    });
    expect(messages(paymentFormSchema(['address', 'memo'], 'TON'), {})).toEqual({ address: 'validation.required' });
    expect(messages(paymentFormSchema(['iban'], 'EUR'), { iban: 'DE89 3704 0044 0532 0130 01' })).toEqual({ iban: 'payments.field.iban_invalid' });
  });
});

describe('fees and limits', () => {
  const terms = { feePercent: '1.5', feeFixed: 50n, min: 10_000n, max: 1_000_000n };
  it('rounds the percentage up to a minor unit and adds the fixed part', () => {
    expect(paymentFee(terms, 10_000n)).toBe(200n);
    expect(paymentFee(terms, 10_001n)).toBe(201n);
    expect(paymentFee({ feePercent: '0', feeFixed: 0n }, 123n)).toBe(0n);
  });
  it('refuses below the minimum, above the maximum, and an amount the fee eats', () => {
    expect(checkPaymentAmount(terms, 10_000n)).toEqual({ ok: true, fee: 200n, receive: 9_800n });
    expect(checkPaymentAmount(terms, 9_999n)).toMatchObject({ ok: false, reason: 'too_small' });
    expect(checkPaymentAmount(terms, 1_000_001n)).toMatchObject({ ok: false, reason: 'too_large' });
    expect(checkPaymentAmount({ ...terms, min: 1n, feeFixed: 500n }, 500n)).toMatchObject({ ok: false, reason: 'fee_exceeds_amount' });
  });
});

describe("the withdraw form's network and example address", () => {
  it("names every chain currency's network and shows a well-formed address of it", () => {
    for (const [currency, format] of Object.entries(CURRENCY_ADDRESS_FORMAT)) {
      expect(CURRENCY_NETWORK[currency], currency).toBeTruthy();
      expect(isAddress(format, exampleAddress(format)), currency).toBe(true);
    }
    expect(CURRENCY_NETWORK.USDT).toBe('TRC-20 (TRON)');
    expect(CURRENCY_NETWORK.USDC).toBe('ERC-20 (Ethereum)');
    expect(exampleAddress('tron')).toMatch(/^T/);
  });
});
