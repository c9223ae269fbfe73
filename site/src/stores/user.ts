import { atom } from 'nanostores';
import type { TUser } from '@obmen/shared';

export const $user = atom<TUser | null>(null);
