import { atom } from 'nanostores';
import { TOAST_DELAY_MS } from '@obmen/shared/constants';

export type TToast = { id: number; message: string; delay: number; variant: 'success' | 'danger' | 'secondary'; active: boolean };

export const $toasts = atom<TToast[]>([]);
let nextId = 1;

export function showToast(message: string, variant: TToast['variant'] = 'success', delay = TOAST_DELAY_MS): TToast {
  const toast: TToast = { id: nextId++, message, delay, variant, active: true };
  $toasts.set([...$toasts.get(), toast]);
  setTimeout(() => $toasts.set($toasts.get().filter((item) => item.id !== toast.id)), delay);
  return toast;
}
