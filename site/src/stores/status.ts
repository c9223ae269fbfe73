import { atom } from 'nanostores';
import type { TStatusEvent } from '@obmen/shared/realtime';

/** The realtime events that say "this payment / withdrawal / card moved" (core: recordEvent). */
export const STATUS_EVENT_KINDS = ['payment', 'withdrawal', 'card'] as const;
export type TStatusKind = (typeof STATUS_EVENT_KINDS)[number];
export type TStatusChange = TStatusEvent & { kind: TStatusKind };

export function isStatusKind(type: string): type is TStatusKind {
  return (STATUS_EVENT_KINDS as readonly string[]).includes(type);
}

/** The newest status event, set by boot.ts from the realtime socket. */
export const $statusEvent = atom<TStatusChange | null>(null);

/**
 * For a page or island showing one payment, withdrawal or card: `onChange` runs each time it
 * moves (`id` null: any of that kind), typically to refetch it. Returns the unsubscribe.
 * Server-rendered regions need no code: mark them `data-live-refresh="payment"` (and an id);
 * boot.ts swaps in the page's fresh HTML for them on such an event.
 */
export function watchStatus(kind: TStatusKind, id: string | null, onChange: (change: TStatusChange) => void): () => void {
  return $statusEvent.listen((change) => {
    if (change && change.kind === kind && (id === null || change.id === id)) onChange(change);
  });
}
