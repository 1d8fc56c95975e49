/**
 * The browser benchmarks' servers: the suite's server fixture (ui-tests/harness/servers.ts)
 * with JupyterLab's default settings (the inline completer as a user has it), and what run.sh
 * passes on: a built labextension to serve, more `jupyter lab` options.
 */

import { startRun } from '../../ui-tests/harness/servers';

export default async function globalSetup(): Promise<void> {
  await startRun({
    // A copy, so a rebuild of the working tree during the run cannot pull it away.
    labextension: process.env.CHAPYTER_BENCH_LABEXTENSION || undefined,
    args: (process.env.CHAPYTER_BENCH_LAB_ARGS ?? '')
      .split(/\s+/)
      .filter(Boolean)
  });
}
