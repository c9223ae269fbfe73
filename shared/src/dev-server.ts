/**
 * Where the Astro dev server's hot-reload websocket listens (`pnpm dev`): a path of its own, so
 * the BFF in front passes exactly this upgrade to it and keeps every other websocket for itself.
 */
export const HMR_PATH = '/_hmr';
