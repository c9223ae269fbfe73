import { atom } from 'nanostores';
import type { TSiteSettings } from '@obmen/shared';

export const $siteSettings = atom<TSiteSettings | null>(null);
