/**
 * The browser of the suite and the browser benchmarks: Debian's Chromium (Playwright's own
 * browser download is not available here, so `playwright install` is never needed), headless,
 * fetching nothing of its own.
 */

import { execFileSync } from 'child_process';

/** Chromium's executable: CHAPYTER_UI_CHROMIUM, or Debian's. */
export const CHROMIUM = process.env.CHAPYTER_UI_CHROMIUM ?? '/usr/bin/chromium';

/** Playwright's `use` for a test JupyterLab in Chromium, with these extra flags. */
export function browserOptions(extraArgs: string[] = []) {
  return {
    headless: true,
    viewport: { width: 1400, height: 900 },
    actionTimeout: 30_000,
    navigationTimeout: 90_000,
    launchOptions: {
      executablePath: CHROMIUM,
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        ...extraArgs
      ]
    }
  };
}

/** `chromium --version`, or `unknown`. */
export function chromiumVersion(): string {
  try {
    return execFileSync(CHROMIUM, ['--version'], {
      encoding: 'utf-8',
      stdio: ['ignore', 'pipe', 'ignore']
    }).trim();
  } catch {
    return 'unknown';
  }
}
