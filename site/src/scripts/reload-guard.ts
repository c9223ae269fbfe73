import { RELOAD_GUARD_MS } from '@obmen/shared/constants';

const KEY = 'obmen.chunk_reload_at';
const CHUNK_FAILURE = /Failed to fetch dynamically imported module|Importing a module script failed|error loading dynamically imported module|ChunkLoadError/i;

/**
 * Spec §4: when a code chunk fails to load (a deploy replaced it), reload the page, at most
 * once per 60 s so a broken build cannot loop.
 */
export function reloadOnceForChunkFailure(storage: Pick<Storage, 'getItem' | 'setItem'>, now: number, reload: () => void): boolean {
  const last = Number(storage.getItem(KEY) ?? 0);
  if (now - last < RELOAD_GUARD_MS) return false;
  storage.setItem(KEY, String(now));
  reload();
  return true;
}

export function initChunkReload(): void {
  const onFailure = () => reloadOnceForChunkFailure(window.sessionStorage, Date.now(), () => window.location.reload());
  window.addEventListener('vite:preloadError', (event) => {
    event.preventDefault();
    onFailure();
  });
  window.addEventListener('unhandledrejection', (event) => {
    if (CHUNK_FAILURE.test(String((event.reason as Error | undefined)?.message ?? event.reason))) onFailure();
  });
  // A module <script> that 404s fires "error" on the element, which does not bubble: capture it.
  window.addEventListener(
    'error',
    (event) => {
      const target = event.target as HTMLElement | null;
      if (target instanceof HTMLScriptElement && target.type === 'module' && target.src.includes('/_astro/')) onFailure();
    },
    true,
  );
}
