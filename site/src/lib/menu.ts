/**
 * Is the menu item with this url ("exchanges", "history") the section the visitor is in? Its own
 * page and the pages below it; the pair pages (/exchange/…) belong to "exchanges".
 */
export function isCurrentSection(url: string, path: string): boolean {
  const own = `/${url}`;
  if (path === own || path.startsWith(`${own}/`)) return true;
  return url === 'exchanges' && (path === '/exchange' || path.startsWith('/exchange/'));
}
