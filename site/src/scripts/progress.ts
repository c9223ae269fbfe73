import { PROGRESS_BAR_DURATION_MS, PROGRESS_BAR_THROTTLE_MS } from '@obmen/shared/constants';

/**
 * Spec §2, §9: a bar shows on route changes, 5 s to run its course, and only when the
 * navigation takes longer than the 200 ms throttle (fast pages never flash it).
 */
export function initProgressBar(): void {
  const bar = document.getElementById('route-progress');
  if (!bar) return;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const reset = () => {
    clearTimeout(timer);
    bar.style.transition = 'none';
    bar.style.width = '0';
    bar.style.opacity = '0';
    bar.dataset.active = 'false';
  };
  document.addEventListener('click', (event) => {
    const link = (event.target as Element).closest<HTMLAnchorElement>('a[href]');
    if (!link || event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    // A download (the history CSV) is no navigation: the page stays, so no bar would ever finish.
    if ((link.target && link.target !== '_self') || link.hasAttribute('download')) return;
    const url = new URL(link.href, window.location.href);
    if (url.origin !== window.location.origin || (url.pathname === window.location.pathname && url.search === window.location.search)) return;
    clearTimeout(timer);
    timer = setTimeout(() => {
      bar.dataset.active = 'true';
      bar.style.opacity = '1';
      bar.style.transition = `width ${PROGRESS_BAR_DURATION_MS}ms cubic-bezier(.1,.7,.3,1)`;
      bar.style.width = '90%';
    }, PROGRESS_BAR_THROTTLE_MS);
  });
  window.addEventListener('pageshow', reset);
}
