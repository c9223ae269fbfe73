import { atom } from 'nanostores';

/** The front-end build this page was served with; an answer naming another one means reload. */
export const $frontendVersion = atom<string>('');
