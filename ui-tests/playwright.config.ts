/**
 * Browser tests of chapyter-ext: a real JupyterLab and kernels, the loopback OpenAI-compatible
 * server as the model, Debian's Chromium as the browser (Playwright's own browser download is
 * not available here, so `playwright install` is never needed).
 */

import { defineConfig } from '@playwright/test';

const slow = 1000;

export default defineConfig({
  testDir: './tests',
  outputDir: './artifacts/test-results',
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
    ['html', { outputFolder: './artifacts/report', open: 'never' }]
  ],
  use: {
    headless: true,
    viewport: { width: 1400, height: 900 },
    actionTimeout: 30 * slow,
    navigationTimeout: 90 * slow,
    screenshot: 'only-on-failure',
    trace: 'retain-on-failure',
    launchOptions: {
      executablePath: process.env.CHAPYTER_UI_CHROMIUM ?? '/usr/bin/chromium',
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync'
      ]
    }
  }
});
