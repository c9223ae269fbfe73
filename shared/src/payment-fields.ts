import { keccak_256 } from '@noble/hashes/sha3.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { z } from 'zod';
import { ZVisibleText } from './text.ts';

/*
 * The fields a payment system's form asks for, and their checks: the same functions run in the
 * browser (the form's own validation) and in core (the route schema), so a value the page
 * accepts is one the core accepts. Messages are i18n keys.
 *
 * Checksums: card numbers by Luhn, IBANs by ISO 13616 mod 97 (and the country's length),
 * Bitcoin and Litecoin addresses by base58check or bech32/bech32m (BIP 173/350), TRON by
 * base58check, Ethereum by EIP-55 when the address is written in mixed case (all-lower or
 * all-upper carry no checksum), TON user-friendly addresses by their CRC-16.
 */

// ---- encodings -----------------------------------------------------------------------------

const BASE58 = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';

export function base58Encode(bytes: Uint8Array): string {
  let value = 0n;
  for (const byte of bytes) value = value * 256n + BigInt(byte);
  let out = '';
  while (value > 0n) {
    out = BASE58[Number(value % 58n)] + out;
    value /= 58n;
  }
  for (const byte of bytes) {
    if (byte !== 0) break;
    out = `1${out}`;
  }
  return out;
}

export function base58Decode(text: string): Uint8Array | null {
  let value = 0n;
  for (const char of text) {
    const digit = BASE58.indexOf(char);
    if (digit < 0) return null;
    value = value * 58n + BigInt(digit);
  }
  const bytes: number[] = [];
  while (value > 0n) {
    bytes.unshift(Number(value % 256n));
    value /= 256n;
  }
  for (const char of text) {
    if (char !== '1') break;
    bytes.unshift(0);
  }
  return Uint8Array.from(bytes);
}

function checksum4(payload: Uint8Array): Uint8Array {
  return sha256(sha256(payload)).subarray(0, 4);
}

export function base58checkEncode(payload: Uint8Array): string {
  const out = new Uint8Array(payload.length + 4);
  out.set(payload);
  out.set(checksum4(payload), payload.length);
  return base58Encode(out);
}

/** The payload (version byte included) of a base58check string whose checksum holds; else null. */
export function base58checkDecode(text: string): Uint8Array | null {
  const bytes = base58Decode(text);
  if (!bytes || bytes.length < 5) return null;
  const payload = bytes.subarray(0, bytes.length - 4);
  const sum = checksum4(payload);
  for (let i = 0; i < 4; i++) if (sum[i] !== bytes[bytes.length - 4 + i]) return null;
  return payload;
}

const BECH32_CHARSET = 'qpzry9x8gf2tvdw0s3jn54khce6mua7l';
const BECH32_CONST = 1;
const BECH32M_CONST = 0x2bc830a3;

function bech32Polymod(values: number[]): number {
  const generators = [0x3b6a57b2, 0x26508e6d, 0x1ea119fa, 0x3d4233dd, 0x2a1462b3];
  let chk = 1;
  for (const value of values) {
    const top = chk >>> 25;
    chk = ((chk & 0x1ffffff) << 5) ^ value;
    for (let i = 0; i < 5; i++) if ((top >>> i) & 1) chk ^= generators[i]!;
  }
  return chk >>> 0;
}

function hrpExpand(hrp: string): number[] {
  const out: number[] = [];
  for (const char of hrp) out.push(char.charCodeAt(0) >> 5);
  out.push(0);
  for (const char of hrp) out.push(char.charCodeAt(0) & 31);
  return out;
}

function convertBits(data: ArrayLike<number>, from: number, to: number, pad: boolean): number[] | null {
  let acc = 0;
  let bits = 0;
  const out: number[] = [];
  const maxv = (1 << to) - 1;
  for (let i = 0; i < data.length; i++) {
    const value = data[i]!;
    if (value >> from) return null;
    acc = (acc << from) | value;
    bits += from;
    while (bits >= to) {
      bits -= to;
      out.push((acc >> bits) & maxv);
    }
  }
  if (pad) {
    if (bits > 0) out.push((acc << (to - bits)) & maxv);
  } else if (bits >= from || (acc << (to - bits)) & maxv) {
    return null;
  }
  return out;
}

/** A segwit address (BIP 173 for version 0, BIP 350's bech32m for 1 and up). */
export function segwitEncode(hrp: string, version: number, program: Uint8Array): string {
  const data = [version, ...(convertBits(program, 8, 5, true) ?? [])];
  const constant = version === 0 ? BECH32_CONST : BECH32M_CONST;
  const mod = bech32Polymod([...hrpExpand(hrp), ...data, 0, 0, 0, 0, 0, 0]) ^ constant;
  const checksum = Array.from({ length: 6 }, (_, i) => (mod >>> (5 * (5 - i))) & 31);
  return `${hrp}1${[...data, ...checksum].map((value) => BECH32_CHARSET[value]).join('')}`;
}

/** Whether `text` is a valid segwit address of `hrp` (checksum, witness version and program length). */
export function isSegwitAddress(hrp: string, text: string): boolean {
  if (text.length > 90 || (text !== text.toLowerCase() && text !== text.toUpperCase())) return false;
  const lower = text.toLowerCase();
  const separator = lower.lastIndexOf('1');
  if (lower.slice(0, separator) !== hrp || lower.length - separator - 1 < 7) return false;
  const data: number[] = [];
  for (const char of lower.slice(separator + 1)) {
    const value = BECH32_CHARSET.indexOf(char);
    if (value < 0) return false;
    data.push(value);
  }
  const version = data[0]!;
  if (version > 16) return false;
  const polymod = bech32Polymod([...hrpExpand(hrp), ...data]);
  if (polymod !== (version === 0 ? BECH32_CONST : BECH32M_CONST)) return false;
  const program = convertBits(data.slice(1, -6), 5, 8, false);
  if (!program || program.length < 2 || program.length > 40) return false;
  return version !== 0 || program.length === 20 || program.length === 32;
}

function hex(bytes: Uint8Array): string {
  return Array.from(bytes, (byte) => byte.toString(16).padStart(2, '0')).join('');
}

/** EIP-55: the hex letters of the address in upper case where keccak256 of its lower-case form has a nibble ≥ 8. */
export function toChecksumEthAddress(address: string): string {
  const lower = address.replace(/^0x/i, '').toLowerCase();
  const hash = hex(keccak_256(new TextEncoder().encode(lower)));
  let out = '0x';
  for (let i = 0; i < lower.length; i++) out += Number.parseInt(hash[i]!, 16) >= 8 ? lower[i]!.toUpperCase() : lower[i]!;
  return out;
}

function crc16Xmodem(bytes: Uint8Array): number {
  let crc = 0;
  for (const byte of bytes) {
    crc ^= byte << 8;
    for (let i = 0; i < 8; i++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc;
}

function base64UrlEncode(bytes: Uint8Array): string {
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_');
}

/** A TON user-friendly address (bounceable, mainnet) of `workchain:hash`. */
export function tonFriendlyAddress(workchain: 0 | -1, hash: Uint8Array): string {
  const bytes = new Uint8Array(36);
  bytes[0] = 0x11;
  bytes[1] = workchain === -1 ? 0xff : 0;
  bytes.set(hash.subarray(0, 32), 2);
  const crc = crc16Xmodem(bytes.subarray(0, 34));
  bytes[34] = crc >> 8;
  bytes[35] = crc & 0xff;
  return base64UrlEncode(bytes);
}

function isTonAddress(text: string): boolean {
  if (/^(0|-1):[0-9a-fA-F]{64}$/.test(text)) return true;
  if (!/^[A-Za-z0-9_+/-]{48}$/.test(text)) return false;
  let binary: string;
  try {
    binary = atob(text.replace(/-/g, '+').replace(/_/g, '/'));
  } catch {
    return false;
  }
  const bytes = Uint8Array.from(binary, (char) => char.charCodeAt(0));
  // 0x11 bounceable, 0x51 non-bounceable; the testnet bit (0x80) is refused.
  if (bytes.length !== 36 || (bytes[0] !== 0x11 && bytes[0] !== 0x51) || (bytes[1] !== 0 && bytes[1] !== 0xff)) return false;
  const crc = crc16Xmodem(bytes.subarray(0, 34));
  return bytes[34] === crc >> 8 && bytes[35] === (crc & 0xff);
}

// ---- addresses per network -----------------------------------------------------------------

export const ADDRESS_FORMATS = ['bitcoin', 'litecoin', 'ethereum', 'tron', 'ton'] as const;
export type TAddressFormat = (typeof ADDRESS_FORMATS)[number];

/**
 * The network each crypto currency moves on here (USDT as TRC-20 on TRON, USDC as ERC-20 on
 * Ethereum), so the format its addresses have. A currency missing here has no chain system.
 */
export const CURRENCY_ADDRESS_FORMAT: Readonly<Record<string, TAddressFormat>> = {
  BTC: 'bitcoin',
  LTC: 'litecoin',
  ETH: 'ethereum',
  USDC: 'ethereum',
  USDT: 'tron',
  TRX: 'tron',
  TON: 'ton',
};

/**
 * How people name the network a currency moves on here, as exchanges and wallets write it: the
 * token standard for tokens (USDT on TRON is TRC-20), the chain for a chain's own coin.
 */
export const CURRENCY_NETWORK: Readonly<Record<string, string>> = {
  BTC: 'Bitcoin',
  LTC: 'Litecoin',
  ETH: 'Ethereum (ERC-20)',
  USDC: 'ERC-20 (Ethereum)',
  USDT: 'TRC-20 (TRON)',
  TRX: 'TRON (TRC-20)',
  TON: 'TON',
};

/** A well-formed address of the network for a form's example (the real format and checksum; made-up bytes). */
export function exampleAddress(format: TAddressFormat): string {
  return addressFromBytes(
    format,
    Uint8Array.from({ length: 32 }, (_, i) => (i * 37 + 11) & 0xff),
  );
}

/** Networks whose transfers carry a memo (a comment) that some recipients need. */
export const MEMO_FORMATS: ReadonlySet<TAddressFormat> = new Set(['ton']);

export function addressFormatOf(currency: string): TAddressFormat | undefined {
  return Object.hasOwn(CURRENCY_ADDRESS_FORMAT, currency) ? CURRENCY_ADDRESS_FORMAT[currency] : undefined;
}

function isBase58checkWithVersion(text: string, versions: readonly number[]): boolean {
  const payload = base58checkDecode(text);
  return payload !== null && payload.length === 21 && versions.includes(payload[0]!);
}

/** Whether `text` is an address of this network, checksum included where the format has one. */
export function isAddress(format: TAddressFormat, text: string): boolean {
  switch (format) {
    case 'bitcoin':
      return /^[13]/.test(text) ? isBase58checkWithVersion(text, [0x00, 0x05]) : isSegwitAddress('bc', text);
    case 'litecoin':
      return /^[LM3]/.test(text) ? isBase58checkWithVersion(text, [0x30, 0x32, 0x05]) : isSegwitAddress('ltc', text);
    case 'ethereum': {
      if (!/^0x[0-9a-fA-F]{40}$/.test(text)) return false;
      const body = text.slice(2);
      if (body === body.toLowerCase() || body === body.toUpperCase()) return true;
      return toChecksumEthAddress(text) === text;
    }
    case 'tron':
      return /^T/.test(text) && isBase58checkWithVersion(text, [0x41]);
    case 'ton':
      return isTonAddress(text);
  }
}

/**
 * A deposit address of this network made from 32 bytes of key material (the chain sandbox
 * derives them per user and currency): the real format, checksum and all.
 */
export function addressFromBytes(format: TAddressFormat, material: Uint8Array): string {
  const hash20 = material.subarray(0, 20);
  switch (format) {
    case 'bitcoin':
      return segwitEncode('bc', 0, hash20);
    case 'litecoin':
      return segwitEncode('ltc', 0, hash20);
    case 'ethereum':
      return toChecksumEthAddress(hex(hash20));
    case 'tron':
      return base58checkEncode(Uint8Array.from([0x41, ...hash20]));
    case 'ton':
      return tonFriendlyAddress(0, material.subarray(0, 32));
  }
}

// ---- cards and bank accounts ---------------------------------------------------------------

/** Digits only: the spaces and dashes people type between groups are dropped. */
export function normalizeCardNumber(text: string): string {
  return text.replace(/[\s-]/g, '');
}

export function isLuhnValid(digits: string): boolean {
  if (!/^\d+$/.test(digits)) return false;
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let digit = Number(digits[digits.length - 1 - i]);
    if (i % 2 === 1) {
      digit *= 2;
      if (digit > 9) digit -= 9;
    }
    sum += digit;
  }
  return sum % 10 === 0;
}

export function isCardNumber(text: string): boolean {
  const digits = normalizeCardNumber(text);
  return /^\d{12,19}$/.test(digits) && isLuhnValid(digits);
}

/** IBAN lengths of the ISO 13616 registry, per country. */
const IBAN_LENGTHS: Readonly<Record<string, number>> = {
  AD: 24,
  AE: 23,
  AL: 28,
  AT: 20,
  AZ: 28,
  BA: 20,
  BE: 16,
  BG: 22,
  BH: 22,
  BR: 29,
  BY: 28,
  CH: 21,
  CR: 22,
  CY: 28,
  CZ: 24,
  DE: 22,
  DK: 18,
  DO: 28,
  EE: 20,
  EG: 29,
  ES: 24,
  FI: 18,
  FO: 18,
  FR: 27,
  GB: 22,
  GE: 22,
  GI: 23,
  GL: 18,
  GR: 27,
  GT: 28,
  HR: 21,
  HU: 28,
  IE: 22,
  IL: 23,
  IQ: 23,
  IS: 26,
  IT: 27,
  JO: 30,
  KW: 30,
  KZ: 20,
  LB: 28,
  LC: 32,
  LI: 21,
  LT: 20,
  LU: 20,
  LV: 21,
  MC: 27,
  MD: 24,
  ME: 22,
  MK: 19,
  MR: 27,
  MT: 31,
  MU: 30,
  NL: 18,
  NO: 15,
  PK: 24,
  PL: 28,
  PS: 29,
  PT: 25,
  QA: 29,
  RO: 24,
  RS: 22,
  SA: 24,
  SC: 31,
  SE: 24,
  SI: 19,
  SK: 24,
  SM: 27,
  ST: 25,
  SV: 28,
  TL: 23,
  TN: 24,
  TR: 26,
  UA: 29,
  VA: 22,
  VG: 24,
  XK: 20,
};

/** Upper case without spaces: "de89 3704 0044 0532 0130 00" → "DE89370400440532013000". */
export function normalizeIban(text: string): string {
  return text.replace(/\s/g, '').toUpperCase();
}

export function isIban(text: string): boolean {
  const iban = normalizeIban(text);
  if (!/^[A-Z]{2}\d{2}[A-Z0-9]{11,30}$/.test(iban)) return false;
  const length = IBAN_LENGTHS[iban.slice(0, 2)];
  if (length === undefined || iban.length !== length) return false;
  const rearranged = iban.slice(4) + iban.slice(0, 4);
  let remainder = 0;
  for (const char of rearranged) {
    const value = char >= 'A' ? String(char.charCodeAt(0) - 55) : char;
    for (const digit of value) remainder = (remainder * 10 + Number(digit)) % 97;
  }
  return remainder === 1;
}

// ---- the fields and the form schema --------------------------------------------------------

/**
 * Every field a payment system's form may ask for. `memo` is asked only for currencies whose
 * network carries one (MEMO_FORMATS); it is optional there.
 */
export const PAYMENT_FIELDS = ['card_number', 'card_holder', 'iban', 'account_holder', 'address', 'memo'] as const;
export type TPaymentField = (typeof PAYMENT_FIELDS)[number];

/** The fields a system with `fields` asks for in `currency`. */
export function fieldsForCurrency(fields: readonly TPaymentField[], currency: string): TPaymentField[] {
  const format = addressFormatOf(currency);
  return fields.filter((field) => field !== 'memo' || (format !== undefined && MEMO_FORMATS.has(format)));
}

const required = (issue: { input?: unknown }) => (issue.input === undefined ? 'validation.required' : 'validation.invalid');
const text = (max: number) => z.string({ error: required }).trim().min(1, 'validation.required').max(max, 'validation.too_long');

export const ZCardNumber = text(40).refine(isCardNumber, 'payments.field.card_number_invalid').transform(normalizeCardNumber);
export const ZCardHolder = text(60)
  .regex(/^[A-Za-z][A-Za-z .'-]{1,59}$/, 'payments.field.card_holder_invalid')
  .transform((value) => value.toUpperCase().replace(/\s+/g, ' '));
export const ZIban = text(50).refine(isIban, 'payments.field.iban_invalid').transform(normalizeIban);
export const ZAccountHolder = ZVisibleText(100).refine((value) => value.length >= 2, 'payments.field.account_holder_invalid');
export const ZMemo = z.preprocess((value) => (typeof value === 'string' && value.trim() === '' ? undefined : value), ZVisibleText(120).optional());

export function ZAddress(currency: string) {
  const format = addressFormatOf(currency);
  return text(120).refine((value) => format !== undefined && isAddress(format, value), 'payments.field.address_invalid');
}

/**
 * The schema of a system's form for one currency: browser and core parse the same object with
 * it. Unknown keys are dropped; values come back normalised (digits of a card, an IBAN in upper
 * case without spaces).
 */
export function paymentFormSchema(fields: readonly TPaymentField[], currency: string) {
  const shape: Record<string, z.ZodType> = {};
  for (const field of fieldsForCurrency(fields, currency)) {
    if (field === 'card_number') shape[field] = ZCardNumber;
    else if (field === 'card_holder') shape[field] = ZCardHolder;
    else if (field === 'iban') shape[field] = ZIban;
    else if (field === 'account_holder') shape[field] = ZAccountHolder;
    else if (field === 'address') shape[field] = ZAddress(currency);
    else shape[field] = ZMemo;
  }
  return z.object(shape);
}
export type TPaymentFormValues = Partial<Record<TPaymentField, string>>;
