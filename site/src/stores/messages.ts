import { atom } from 'nanostores';
import type { TUnreadMsgs } from '@obmen/shared';

export const $unreadMsgs = atom<TUnreadMsgs>({ private: 0, support: 0 });
