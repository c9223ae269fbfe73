/*
 * The service worker (registered by site/src/scripts/installable.ts as /sw.js?v=<fv>&lang=<ru|en>).
 * It keeps only public, static things: the offline page in the reader's language, the icons and
 * the build's hashed assets (/_astro/). Pages are always asked of the network and never kept (they
 * carry people's data); /api and everything else pass by untouched. A navigation the network
 * cannot answer gets the offline page. A new build or language is a new script URL: it installs,
 * takes over at once and drops the caches of the one before.
 */
const params = new URL(self.location.href).searchParams;
const LANG = params.get('lang') === 'en' ? 'en' : 'ru';
const CACHE = `obmen-${params.get('v') ?? 'none'}-${LANG}`;
const OFFLINE_URL = `/offline?lang=${LANG}`;
const SHELL = [
  OFFLINE_URL,
  '/favicon.svg',
  '/manifest.webmanifest',
  '/icons/icon-192.png',
  '/icons/icon-512.png',
  '/icons/maskable-512.png',
  '/icons/apple-touch-icon.png',
];

self.addEventListener('install', (event) => {
  event.waitUntil(
    caches
      .open(CACHE)
      // Without cookies: the offline page is the same for everyone (no session, no theme choice).
      .then((cache) => cache.addAll(SHELL.map((url) => new Request(url, { credentials: 'omit' }))))
      .then(() => self.skipWaiting()),
  );
});

self.addEventListener('activate', (event) => {
  event.waitUntil(
    caches
      .keys()
      .then((names) => Promise.all(names.filter((name) => name.startsWith('obmen-') && name !== CACHE).map((name) => caches.delete(name))))
      .then(() => self.clients.claim()),
  );
});

/** Hashed build assets never change under their name: the first copy is good for ever. */
async function fromCacheFirst(request) {
  const cache = await caches.open(CACHE);
  const kept = await cache.match(request);
  if (kept) return kept;
  const answer = await fetch(request);
  if (answer.ok) await cache.put(request, answer.clone());
  return answer;
}

self.addEventListener('fetch', (event) => {
  const request = event.request;
  if (request.method !== 'GET') return;
  const url = new URL(request.url);
  if (url.origin !== self.location.origin) return;
  if (request.mode === 'navigate') {
    event.respondWith(fetch(request).catch(() => caches.match(OFFLINE_URL, { cacheName: CACHE }).then((page) => page ?? Response.error())));
    return;
  }
  if (url.pathname.startsWith('/_astro/')) {
    event.respondWith(fromCacheFirst(request));
    return;
  }
  if (SHELL.includes(url.pathname)) event.respondWith(caches.match(request, { cacheName: CACHE }).then((kept) => kept ?? fetch(request)));
});
