/**
 * Display helpers for amounts and rates as the core sends them: decimal strings, never floats.
 * Dependency-free on purpose: the layout script (boot.ts) uses them for the wallet list.
 */

const NARROW_NBSP = '\u202f';

/** "1.500000000000000000" → "1.50", "0.05000000" → "0.05", "12" → "12": only zeros are dropped. */
export function trimAmount(text: string, minDecimals = 2): string {
  const [whole = '0', fraction = ''] = text.split('.');
  if (!fraction) return whole;
  let kept = fraction.replace(/0+$/, '');
  if (kept.length < minDecimals) kept = fraction.slice(0, Math.min(minDecimals, fraction.length));
  return kept ? `${whole}.${kept}` : whole;
}

/**
 * Thousands grouped the way each language writes them: "50 000.00" (ru) or "50,000.00" (en).
 * The decimal point stays a point in both (as in the header balance and the API).
 */
export function groupAmount(text: string, locale: string): string {
  const negative = text.startsWith('-');
  const [whole = '0', fraction] = (negative ? text.slice(1) : text).split('.');
  const separator = locale === 'ru' ? NARROW_NBSP : ',';
  const grouped = whole.length > 4 || (locale !== 'ru' && whole.length > 3) ? whole.replace(/\B(?=(\d{3})+(?!\d))/g, separator) : whole;
  return `${negative ? '-' : ''}${grouped}${fraction !== undefined ? `.${fraction}` : ''}`;
}

/** An amount for people: trailing zeros dropped (two decimals kept), thousands grouped. */
export function displayAmount(text: string, locale: string, minDecimals = 2): string {
  return groupAmount(trimAmount(text, minDecimals), locale);
}

/**
 * A rate shortened to `significant` digits (cut, not rounded: it is shown with "≈"):
 * "0.0000153076923076" → "0.0000153076", "91.2844036696" → "91.2844".
 */
export function shortDecimal(text: string, significant = 6): string {
  const [whole = '0', fraction = ''] = text.split('.');
  const wholeDigits = whole.replace(/^0+/, '').length;
  let kept: string;
  if (wholeDigits >= significant) kept = '';
  else if (wholeDigits > 0) kept = fraction.slice(0, significant - wholeDigits);
  else {
    const zeros = /^0*/.exec(fraction)?.[0].length ?? 0;
    kept = fraction.slice(0, zeros + significant);
  }
  kept = kept.replace(/0+$/, '');
  return kept ? `${whole}.${kept}` : whole;
}

/** Is this decimal text zero ("0", "0.000")? */
export function isZeroAmount(text: string): boolean {
  return !/[1-9]/.test(text);
}

/** A fraction as a percentage, exactly: "0.001" → "0.1", "0.0125" → "1.25", "0" → "0". */
export function percentText(fraction: string): string {
  const [whole = '0', part = ''] = fraction.split('.');
  const digits = whole + part.padEnd(2, '0');
  const integer = digits.slice(0, whole.length + 2).replace(/^0+(?=\d)/, '');
  const rest = digits.slice(whole.length + 2).replace(/0+$/, '');
  return rest ? `${integer}.${rest}` : integer;
}

/** The exact sum of decimal strings (non-negative, any number of decimals): "0.10" + "0.005" → "0.105". */
export function sumAmounts(values: readonly string[]): string {
  const scale = Math.max(0, ...values.map((value) => (value.split('.')[1] ?? '').length));
  let total = 0n;
  for (const value of values) {
    const [whole = '0', fraction = ''] = value.split('.');
    total += BigInt((whole || '0') + fraction.padEnd(scale, '0'));
  }
  if (scale === 0) return total.toString();
  const digits = total.toString().padStart(scale + 1, '0');
  return `${digits.slice(0, -scale)}.${digits.slice(-scale)}`;
}
