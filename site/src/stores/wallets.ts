import { atom } from 'nanostores';
import type { TBalance, TWallet } from '@obmen/shared';

export const $wallets = atom<TWallet[]>([]);
export const $totalBalance = atom<TBalance | null>(null);
