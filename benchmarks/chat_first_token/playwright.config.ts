/**
 * The chat first-token benchmark: one long "test" that drives the AI Chat in Debian's
 * Chromium against a JupyterLab and fake model that run.sh has already started. It reuses
 * ui-tests' node_modules (run.sh sets NODE_PATH), so it needs no install of its own.
 */

import { defineConfig } from '@playwright/test';
import * as path from 'path';

export default defineConfig({
  // run.sh serves other browser benchmarks too: BENCH_DIR and BENCH_SPEC name theirs.
  testDir: process.env.BENCH_DIR ?? __dirname,
  testMatch: process.env.BENCH_SPEC ?? 'first_token.bench.ts',
  outputDir: path.join(
    process.env.BENCH_DIR ?? __dirname,
    'results',
    'test-results'
  ),
  workers: 1,
  retries: 0,
  timeout: 30 * 60_000,
  expect: { timeout: 60_000 },
  reporter: [['list']],
  use: {
    headless: true,
    viewport: { width: 1400, height: 900 },
    actionTimeout: 30_000,
    navigationTimeout: 90_000,
    screenshot: 'off',
    trace: 'off',
    launchOptions: {
      executablePath: process.env.CHAPYTER_UI_CHROMIUM ?? '/usr/bin/chromium',
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        // A timing benchmark: no throttling of timers or frames in a page Chromium thinks idle.
        '--disable-background-timer-throttling',
        '--disable-renderer-backgrounding',
        '--disable-backgrounding-occluded-windows'
      ]
    }
  }
});
