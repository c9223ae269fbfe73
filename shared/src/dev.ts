/**
 * Development helpers (the core's /api/dev/*, the site's /dev/* pages) hand out sign-in and
 * reset links: they answer loopback clients only. The check is on the socket's peer address
 * (and, behind a trusted proxy, on the forwarded client too), never on a header alone.
 */

/** 127.0.0.0/8 and ::1, also in their IPv4-mapped IPv6 form. */
export function isLoopbackAddress(address: string | undefined): boolean {
  if (address === undefined) return false;
  if (address === '::1') return true;
  const v4 = address.startsWith('::ffff:') ? address.slice(7) : address;
  return /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(v4);
}

const MAYBE_DEV = /dev|%/i;
const MAX_DECODES = 3;

/** The path's segments as a router would see them: decoded, case-folded, dot segments resolved. */
function pathSegments(url: string): string[] {
  const end = url.search(/[?#]/);
  let path = end === -1 ? url : url.slice(0, end);
  for (let i = 0; i < MAX_DECODES && path.includes('%'); i++) {
    try {
      path = decodeURIComponent(path);
    } catch {
      break;
    }
  }
  const segments: string[] = [];
  for (const segment of path.toLowerCase().split(/[/\\;]+/)) {
    if (segment === '' || segment === '.') continue;
    if (segment === '..') segments.pop();
    else segments.push(segment.trim());
  }
  return segments;
}

/**
 * /dev/… or /api/dev/… however the client spells it (`/API//dev`, `/api/%64ev`, `/x/../dev`):
 * a stricter reading than any router's, so no spelling slips past the guard to a dev route.
 */
export function isDevPath(url: string): boolean {
  if (!MAYBE_DEV.test(url)) return false;
  const [first, second] = pathSegments(url);
  return first === 'dev' || (first === 'api' && second === 'dev');
}
