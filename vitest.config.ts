import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

// As Playwright does (e2e/playwright.config.ts): in CI a failed test runs once more, and one that
// passes then is reported flaky by name (scripts/vitest-flaky.ts → the summary of scripts/test.sh).
const retry = process.env.CI ? 1 : 0;

export default defineConfig({
  test: {
    // Vitest's default is one worker fewer than the CPUs: one on a 2-CPU machine, where most files
    // spend their time waiting on PostgreSQL, a child process or a socket. At most 4, so that the
    // files' pools stay within PostgreSQL's 100 connections.
    maxWorkers: Math.max(2, Math.min(4, availableParallelism())),
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
