import { defineConfig } from 'astro/config';
import node from '@astrojs/node';
import react from '@astrojs/react';
import { CSP_DIRECTIVES } from '../shared/src/csp.ts';
import { HMR_PATH } from '../shared/src/dev-server.ts';

export default defineConfig({
  output: 'server',
  adapter: node({ mode: 'middleware' }),
  integrations: [react()],
  // Astro hashes each page's scripts and styles into its CSP header; the other directives are shared with the BFF.
  security: { csp: { directives: [...CSP_DIRECTIVES] } },
  build: { inlineStylesheets: 'always' },
  compressHTML: true,
  devToolbar: { enabled: false },
  markdown: { syntaxHighlight: false },
  // `pnpm dev`: the browser reaches the dev server through the BFF, hot reload included.
  vite: { server: { ws: { path: HMR_PATH } } },
});
