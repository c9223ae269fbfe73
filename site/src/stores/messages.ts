import { atom } from 'nanostores';
import type { TChatMessageEvent, TUnreadMsgs } from '@obmen/shared';

export const $unreadMsgs = atom<TUnreadMsgs>({ private: 0, support: 0 });

/**
 * The newest `chat.message` event (realtime): the open chat island appends it when it is its
 * chat, and the chat sidebar counts it on the chat's badge otherwise.
 */
export const $chatMessageEvent = atom<TChatMessageEvent | null>(null);

/** The chat the open chat island has just read to its end: its sidebar badge goes to 0. */
export const $chatRead = atom<{ chat: 'support' | number } | null>(null);
