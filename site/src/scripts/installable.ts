import type { TLocale } from '@obmen/shared/constants';
import { reportFrontError } from '../lib/logger.ts';
import { $newFrontendVersion } from '../stores/version.ts';

/**
 * The installable app: the service worker (site/public/sw.js) and the update banner.
 *
 * The worker's URL names the build (`fv`) and the reader's language: a new build or another
 * language is a new script, which the browser installs in place of the old one (the worker takes
 * over at once and drops the old caches). It keeps the offline page in that language and the
 * build's hashed assets, nothing else.
 */
export function serviceWorkerUrl(fv: string, locale: TLocale): string {
  return `/sw.js?${new URLSearchParams({ v: fv, lang: locale })}`;
}

/** The development server's pages (`fv` "dev") change under the worker's feet: no worker there. */
export function wantsServiceWorker(fv: string, hasServiceWorker: boolean): boolean {
  return hasServiceWorker && fv !== '' && fv !== 'dev';
}

function initUpdateBanner() {
  const banner = document.getElementById('update-banner');
  if (!banner) return;
  let dismissed = '';
  $newFrontendVersion.subscribe((version) => {
    if (version && version !== dismissed) banner.hidden = false;
  });
  banner.querySelector('[data-update-reload]')?.addEventListener('click', () => window.location.reload());
  banner.querySelector('[data-update-later]')?.addEventListener('click', () => {
    dismissed = $newFrontendVersion.get();
    banner.hidden = true;
  });
}

export function initInstallable(fv: string, locale: TLocale): void {
  initUpdateBanner();
  if (!wantsServiceWorker(fv, 'serviceWorker' in navigator)) return;
  navigator.serviceWorker.register(serviceWorkerUrl(fv, locale), { scope: '/' }).catch((err: unknown) => {
    reportFrontError({ type: 'other', message: `service worker: ${String((err as Error | undefined)?.message ?? err)}`, stack: '' });
  });
}
