import { BlockList, isIPv4, isIPv6 } from 'node:net';

/** "10.0.0.0/8, ::1/128" → a list to check addresses against; null when any part is not a network. */
export function parseCidrList(text: string): BlockList | null {
  const list = new BlockList();
  const parts = text
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean);
  if (parts.length === 0) return null;
  for (const part of parts) {
    const [address = '', bits = ''] = part.split('/');
    const family = isIPv4(address) ? 'ipv4' : isIPv6(address) ? 'ipv6' : null;
    const prefix = Number(bits);
    if (!family || !/^\d{1,3}$/.test(bits) || prefix > (family === 'ipv4' ? 32 : 128)) return null;
    list.addSubnet(address, prefix, family);
  }
  return list;
}

/** Is this address (v4, v6, or v4 mapped into v6) inside the list? */
export function isAddressIn(list: BlockList, address: string): boolean {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1];
  if (mapped) return list.check(mapped, 'ipv4');
  if (isIPv4(address)) return list.check(address, 'ipv4');
  return isIPv6(address) && list.check(address, 'ipv6');
}
