/**
 * Status events from the realtime socket (payment, withdrawal, card): into $statusEvent for
 * islands (watchStatus), and every server-rendered region marked `data-live-refresh="<kind> …"`
 * with an id gets the page's fresh HTML for that id, so a history table or a status page
 * changes without a reload. One refresh at a time; events meanwhile make one more.
 */
import type { TRealtimeEvent, TStatusEvent } from '@obmen/shared/realtime';
import { REALTIME_EVENT } from '../lib/realtime.ts';
import { $statusEvent, isStatusKind, type TStatusKind } from '../stores/status.ts';

function liveRegions(kind: TStatusKind): HTMLElement[] {
  return [...document.querySelectorAll<HTMLElement>('[data-live-refresh][id]')].filter((region) =>
    (region.dataset.liveRefresh ?? '').split(' ').includes(kind),
  );
}

/** Replaces each region by its namesake in `html` (the same page rendered again). */
export function swapRegions(regions: HTMLElement[], html: string): void {
  const fresh = new DOMParser().parseFromString(html, 'text/html');
  for (const region of regions) {
    const next = fresh.getElementById(region.id);
    if (next) region.replaceWith(document.importNode(next, true));
  }
}

export function initStatusEvents(
  fetchPage: () => Promise<string> = () => fetch(window.location.href, { headers: { accept: 'text/html' } }).then((r) => r.text()),
): void {
  window.addEventListener(REALTIME_EVENT, (event) => {
    const detail = (event as CustomEvent<TRealtimeEvent>).detail;
    if (!detail || !isStatusKind(detail.type) || !detail.payload || typeof detail.payload !== 'object') return;
    $statusEvent.set({ ...(detail.payload as TStatusEvent), kind: detail.type });
  });
  const pending = new Set<TStatusKind>();
  let running = false;
  const refresh = async () => {
    running = true;
    try {
      while (pending.size) {
        const kinds = [...pending];
        pending.clear();
        const html = await fetchPage();
        swapRegions([...new Set(kinds.flatMap(liveRegions))], html);
      }
    } catch {
      // Offline or the page failed: the next event (or a reload) brings it up to date.
      pending.clear();
    } finally {
      running = false;
    }
  };
  $statusEvent.listen((change) => {
    if (!change || !liveRegions(change.kind).length) return;
    pending.add(change.kind);
    if (!running) void refresh();
  });
}
