/**
 * The key that counts a client address in rate limits (core) and log throttling (BFF): IPv6
 * users usually hold a whole /64, so the /64 is the client; IPv4-mapped IPv6 is the IPv4
 * address; IPv4 is itself. `ip` is a socket address (a colon means IPv6).
 */
export function clientKey(ip: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  if (mapped) return mapped[1]!;
  if (!ip.includes(':')) return ip;
  const [head = '', tail = ''] = ip.toLowerCase().split('::');
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const groups = ip.includes('::') ? [...left, ...Array(Math.max(0, 8 - left.length - right.length)).fill('0'), ...right] : left;
  return `${groups
    .slice(0, 4)
    .map((group: string) => group.replace(/^0+(?=.)/, ''))
    .join(':')}::/64`;
}
