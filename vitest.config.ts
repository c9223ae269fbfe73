import { defineConfig } from 'vitest/config';

// As Playwright does (e2e/playwright.config.ts): in CI a failed test runs once more, and one that
// passes then is reported flaky by name (scripts/vitest-flaky.ts → the summary of scripts/test.sh).
const retry = process.env.CI ? 1 : 0;

export default defineConfig({
  test: {
    projects: [
      { test: { name: 'shared', include: ['shared/test/**/*.test.ts'], retry } },
      { test: { name: 'site', include: ['site/test/**/*.test.{ts,tsx}'], retry } },
      {
        test: {
          name: 'core',
          include: ['core/test/**/*.test.ts'],
          globalSetup: ['core/test/global-setup.ts'],
          testTimeout: 60_000,
          hookTimeout: 60_000,
          retry,
        },
      },
      {
        test: { name: 'bff', include: ['bff/test/**/*.test.ts'], globalSetup: ['core/test/global-setup.ts'], testTimeout: 30_000, hookTimeout: 60_000, retry },
      },
    ],
  },
});
