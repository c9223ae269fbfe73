import { createRequire } from 'node:module';
import { readFile } from 'node:fs/promises';
import { isIP } from 'node:net';
import type { TLocale } from '@obmen/shared';
import { describeDevice } from './device.ts';

/*
 * Where a sign-in came from, as its owner can recognise it: the device (browser and system,
 * without versions, so an update is not a new device), the network (IPv4 /24, IPv6 /48), and the
 * country of an IPv4 address from the NRO's delegation statistics (CC BY 4.0, nro.net; the
 * @ip-location-db/geo-whois-asn-country package), read from disk at the first lookup. Never a
 * security decision: only what the "new sign-in" mail tells and how it decides a place is new.
 */

/** The device's key: "Chrome · Windows", or "unknown". */
export function deviceKey(userAgent: string | null | undefined): string {
  return describeDevice(userAgent)?.replace(/ \d+/g, '') ?? 'unknown';
}

/** An IPv4 address inside an IPv6 one (::ffff:a.b.c.d) as IPv4. */
const plain = (ip: string) => (/^::ffff:\d+\.\d+\.\d+\.\d+$/i.test(ip) ? ip.slice(7) : ip);

function ipv6Groups(ip: string): string[] {
  const [head = '', tail = ''] = ip.split('::');
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  return [...left, ...Array(8 - left.length - right.length).fill('0'), ...right].map((group) => group.toLowerCase().replace(/^0+(?=.)/, ''));
}

/** The network's key: "203.0.113.0/24", "2001:db8:1::/48", or "unknown". */
export function networkKey(address: string | null | undefined): string {
  const ip = plain(address ?? '');
  if (isIP(ip) === 4) return `${ip.split('.').slice(0, 3).join('.')}.0/24`;
  if (isIP(ip) === 6 && !ip.includes('.')) return `${ipv6Groups(ip).slice(0, 3).join(':')}::/48`;
  return 'unknown';
}

type TRanges = { starts: Uint32Array; ends: Uint32Array; countries: string[] };
let ranges: Promise<TRanges> | null = null;

async function loadRanges(): Promise<TRanges> {
  const require = createRequire(import.meta.url);
  const text = await readFile(require.resolve('@ip-location-db/geo-whois-asn-country/geo-whois-asn-country-ipv4-num.csv'), 'utf8');
  const lines = text.split('\n').filter(Boolean);
  const loaded: TRanges = { starts: new Uint32Array(lines.length), ends: new Uint32Array(lines.length), countries: new Array(lines.length) };
  lines.forEach((line, i) => {
    const [start, end, country] = line.split(',');
    loaded.starts[i] = Number(start);
    loaded.ends[i] = Number(end);
    loaded.countries[i] = country!.trim();
  });
  return loaded;
}

const PRIVATE = [/^10\./, /^127\./, /^192\.168\./, /^172\.(1[6-9]|2\d|3[01])\./, /^169\.254\./];

/** The country code of an IPv4 address; 'local' for private and loopback ones; null when unknown. */
export async function countryOf(address: string | null | undefined): Promise<string | null> {
  const ip = plain(address ?? '');
  if (ip === '::1' || PRIVATE.some((pattern) => pattern.test(ip))) return 'local';
  if (isIP(ip) !== 4) return null;
  const { starts, ends, countries } = await (ranges ??= loadRanges());
  const value = ip.split('.').reduce((sum, part) => sum * 256 + Number(part), 0);
  let low = 0;
  let high = starts.length - 1;
  while (low <= high) {
    const mid = (low + high) >> 1;
    if (starts[mid]! > value) high = mid - 1;
    else if (ends[mid]! < value) low = mid + 1;
    else return countries[mid]!;
  }
  return null;
}

/** A country code as the reader names it ("Germany", "Германия"). */
export function countryName(code: string, locale: TLocale): string {
  try {
    return new Intl.DisplayNames([locale], { type: 'region' }).of(code) ?? code;
  } catch {
    return code;
  }
}
