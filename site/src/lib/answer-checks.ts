// What this file reads of Vite's client types, declared as Vite does: the workspace typecheck
// (tsconfig.json) reads site/src/lib without them.
declare global {
  interface ImportMetaEnv {
    MODE: string;
    DEV: boolean;
  }
  interface ImportMeta {
    readonly env: ImportMetaEnv;
  }
}

/**
 * The mark the layout puts on <html> when the BFF serving the page does not run in production:
 * the end-to-end run and `pnpm start` serve the production build, whose Vite flags say
 * production, and the browser's answers are checked there all the same.
 */
export const CHECK_ANSWERS_ATTRIBUTE = 'data-check-answers';

/**
 * Whether the browser's clients hold answers to their schemas: in development, in the unit tests
 * and on a page a non-production BFF served (a drift from the core fails loudly there); never
 * in production, where the check would only cost.
 */
export const VALIDATE_ANSWERS: boolean =
  import.meta.env.DEV || import.meta.env.MODE === 'test' || (typeof document !== 'undefined' && document.documentElement.hasAttribute(CHECK_ANSWERS_ATTRIBUTE));
