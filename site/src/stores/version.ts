import { atom } from 'nanostores';

/** The front-end build this page was served with. */
export const $frontendVersion = atom<string>('');

/** A newer build an /api answer named: the update banner offers to reload (scripts/installable.ts). */
export const $newFrontendVersion = atom<string>('');
