/** Where time-dependent parts of the BFF read the time, so tests move it instead of sleeping. */
export type TClock = { now: () => number };

export const systemClock: TClock = { now: () => Date.now() };
