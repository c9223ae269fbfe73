import { FETCH_DELAY_MS, IDLE_PREFETCH_TIMEOUT_MS, PREFETCH_SKIPPED_CONNECTIONS } from '@obmen/shared/constants';

type TConnection = { saveData?: boolean; effectiveType?: string };

export function prefetchAllowed(connection: TConnection | undefined): boolean {
  if (!connection) return true;
  if (connection.saveData) return false;
  return !(PREFETCH_SKIPPED_CONNECTIONS as readonly string[]).includes(connection.effectiveType ?? '');
}

/**
 * Spec §9: a link the pointer rests on for 200 ms is prefetched; links in view are prefetched
 * when the browser is idle (or after 2000 ms at the latest); nothing on 2g or data saver.
 */
export function initPrefetch(): void {
  if (!prefetchAllowed((navigator as Navigator & { connection?: TConnection }).connection)) return;
  const done = new Set<string>([window.location.pathname + window.location.search]);
  const prefetch = (href: string) => {
    const url = new URL(href, window.location.href);
    const key = url.pathname + url.search;
    if (url.origin !== window.location.origin || done.has(key) || url.pathname.startsWith('/api/')) return;
    done.add(key);
    const link = document.createElement('link');
    link.rel = 'prefetch';
    link.href = key;
    document.head.append(link);
  };
  let hoverTimer: ReturnType<typeof setTimeout> | undefined;
  const onIntent = (event: Event) => {
    const link = (event.target as Element).closest?.<HTMLAnchorElement>('a[href]');
    if (!link || link.hasAttribute('data-no-prefetch')) return;
    clearTimeout(hoverTimer);
    hoverTimer = setTimeout(() => prefetch(link.href), FETCH_DELAY_MS);
  };
  document.addEventListener('mouseover', onIntent, { passive: true });
  document.addEventListener('focusin', onIntent);
  document.addEventListener('mouseout', () => clearTimeout(hoverTimer), { passive: true });
  const idle = window.requestIdleCallback ?? ((callback: () => void) => setTimeout(callback, IDLE_PREFETCH_TIMEOUT_MS));
  idle(
    () => {
      const observer = new IntersectionObserver((entries) => {
        for (const entry of entries) {
          if (!entry.isIntersecting) continue;
          observer.unobserve(entry.target);
          prefetch((entry.target as HTMLAnchorElement).href);
        }
      });
      for (const link of document.querySelectorAll<HTMLAnchorElement>('main a[href^="/"]:not([data-no-prefetch])')) observer.observe(link);
    },
    { timeout: IDLE_PREFETCH_TIMEOUT_MS },
  );
}
