/**
 * The browser benchmarks (run.sh): one long "test" per benchmark folder (BENCH_DIR), with the
 * suite's server fixture (global-setup.ts) and page fixture (ui-tests/tests/fixtures.ts). It
 * reuses ui-tests' node_modules (run.sh sets NODE_PATH), so it needs no install of its own.
 */

import { defineConfig } from '@playwright/test';
import * as path from 'path';

import { browserOptions } from '../../ui-tests/harness/browser';

const dir = process.env.BENCH_DIR ?? __dirname;

export default defineConfig({
  testDir: dir,
  testMatch: '*.bench.ts',
  outputDir: path.join(dir, 'results', 'test-results'),
  globalSetup: require.resolve('./global-setup'),
  globalTeardown: require.resolve('../../ui-tests/global-teardown'),
  workers: 1,
  retries: 0,
  timeout: 30 * 60_000,
  expect: { timeout: 60_000 },
  reporter: [['list']],
  use: {
    ...browserOptions([
      // A timing benchmark: no throttling of timers or frames in a page Chromium thinks idle.
      '--disable-background-timer-throttling',
      '--disable-renderer-backgrounding',
      '--disable-backgrounding-occluded-windows'
    ]),
    screenshot: 'off',
    trace: 'off'
  }
});
