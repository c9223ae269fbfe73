import { atom } from 'nanostores';
import type { TNotification } from '@obmen/shared';

export const $notifications = atom<TNotification[]>([]);
