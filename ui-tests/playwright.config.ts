/**
 * Browser tests of chapyter-ext: a real JupyterLab and kernels, the loopback OpenAI-compatible
 * server as the model, Debian's Chromium as the browser (harness/: the servers, the browser,
 * the page; tests/fixtures.ts: the `lab` fixture every spec uses).
 */

import { defineConfig } from '@playwright/test';

import { browserOptions } from './harness/browser';
import { ARTIFACTS } from './harness/run';

const slow = 1000;

export default defineConfig({
  testDir: './tests',
  outputDir: `${ARTIFACTS}/test-results`,
  globalSetup: require.resolve('./global-setup'),
  globalTeardown: require.resolve('./global-teardown'),
  // One JupyterLab, one fake model, two shared cores: tests run one at a time.
  workers: 1,
  fullyParallel: false,
  retries: 0,
  forbidOnly: !!process.env.CI,
  timeout: 240 * slow,
  expect: { timeout: 60 * slow },
  reporter: [
    ['list'],
    ['html', { outputFolder: `${ARTIFACTS}/report`, open: 'never' }]
  ],
  use: {
    ...browserOptions(),
    screenshot: 'only-on-failure',
    trace: 'retain-on-failure'
  }
});
