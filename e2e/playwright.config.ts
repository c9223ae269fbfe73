import { defineConfig, devices } from '@playwright/test';
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Playwright against the real stack (scripts/start.ts: core on PGlite, or on PostgreSQL when
 * E2E_DATABASE_URL names a database, + BFF) in Debian's
 * Chromium (/usr/bin/chromium; scripts/test.sh installs it). The site must be built first
 * (`pnpm build`; scripts/test.sh does it): start.ts does not build.
 */
const root = fileURLToPath(new URL('..', import.meta.url));
const node = join(root, 'node_modules', '.bin', 'node');
// E2E_PORT / E2E_CORE_PORT let parallel checkouts on one machine run their suites side by side.
const PORT = Number(process.env.E2E_PORT ?? 3100);
const CORE_PORT = Number(process.env.E2E_CORE_PORT ?? 4100);
const baseURL = `http://127.0.0.1:${PORT}`;
const CI = !!process.env.CI;

// A fresh PGlite directory per run, removed when the run ends. Worker processes load this file
// too and compute their own (unused, never created) names; only the runner's reaches the server.
const ownDataDir = !process.env.E2E_DATA_DIR;
const dataDir = process.env.E2E_DATA_DIR ?? join(tmpdir(), `obmen-e2e-${process.pid}-${randomBytes(4).toString('hex')}`);
if (ownDataDir) process.once('exit', () => rmSync(dataDir, { recursive: true, force: true }));

/**
 * The passwordless specs switch the site-wide auth_type (POST /api/dev/auth_type), which every
 * other spec depends on: they live in their own project, run one at a time, only after every
 * other project has finished (`teardown` runs even when earlier tests failed, unlike
 * `dependencies`, which would skip them).
 */
const GLOBAL_SETTINGS_SPECS = /accounts-email\.spec\.ts$/;

export const CHROMIUM_FLAGS = ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

const chromium = {
  ...devices['Desktop Chrome'],
  viewport: { width: 1280, height: 800 },
  launchOptions: { executablePath: '/usr/bin/chromium', args: CHROMIUM_FLAGS },
  // The account id click copies it: the clipboard needs these in headless Chromium.
  permissions: ['clipboard-read', 'clipboard-write'],
};

export default defineConfig({
  testDir: '.',
  testMatch: '*.spec.ts',
  // Per port: checkouts running their suites side by side must not empty each other's folder.
  outputDir: join(tmpdir(), `obmen-e2e-results-${PORT}`),
  fullyParallel: true,
  forbidOnly: CI,
  retries: CI ? 1 : 0,
  workers: 2,
  timeout: 30_000,
  expect: { timeout: 10_000 },
  // A bound for a stuck run, not the time we aim at: the whole suite took 24 minutes on a 2-CPU
  // machine, the axe-core walks over every page state (a11y.spec.ts) most of it.
  globalTimeout: 45 * 60_000,
  reporter: 'list',
  use: {
    baseURL,
    // A click on something that is not there fails in 15 s, not at the end of a long test's budget.
    actionTimeout: 15_000,
    headless: true,
    locale: 'ru-RU',
    trace: 'off',
    screenshot: 'off',
    video: 'off',
    // The site's service worker answers navigations itself, out of reach of page.route(): the
    // specs that hold or rewrite a request would see it pass by. pwa.spec.ts allows it.
    serviceWorkers: 'block',
  },
  projects: [
    {
      name: 'chromium',
      testIgnore: GLOBAL_SETTINGS_SPECS,
      teardown: 'chromium-auth-type',
      use: chromium,
    },
    {
      name: 'chromium-auth-type',
      testMatch: GLOBAL_SETTINGS_SPECS,
      fullyParallel: false,
      use: chromium,
    },
  ],
  webServer: {
    command: `"${node}" ../scripts/start.ts`,
    cwd: fileURLToPath(new URL('.', import.meta.url)),
    url: `${baseURL}/local/healthcheck`,
    reuseExistingServer: false,
    timeout: 120_000,
    stdout: 'pipe',
    stderr: 'pipe',
    gracefulShutdown: { signal: 'SIGTERM', timeout: 10_000 },
    env: {
      PORT: String(PORT),
      CORE_PORT: String(CORE_PORT),
      DATA_DIR: dataDir,
      // The test command gives the suite a fresh PostgreSQL database of its own (scripts/test.sh).
      ...(process.env.E2E_DATABASE_URL ? { DATABASE_URL: process.env.E2E_DATABASE_URL } : {}),
      NODE_ENV: 'development',
      LOG_LEVEL: 'warn',
      // Every browser comes from 127.0.0.1: the specs' sign-ups together exceed one address's hourly limit.
      RATE_LIMIT_FACTOR: '10',
      // Mailed links (core PUBLIC_URL) point at this test server; the BFF accepts it as an origin.
      PUBLIC_URL: baseURL,
    },
  },
});
