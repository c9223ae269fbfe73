import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    projects: [
      { test: { name: 'shared', include: ['shared/test/**/*.test.ts'] } },
      { test: { name: 'site', include: ['site/test/**/*.test.ts'] } },
      { test: { name: 'core', include: ['core/test/**/*.test.ts'], testTimeout: 60_000, hookTimeout: 60_000 } },
      { test: { name: 'bff', include: ['bff/test/**/*.test.ts'], testTimeout: 30_000, hookTimeout: 60_000 } },
    ],
  },
});
