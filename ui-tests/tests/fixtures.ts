/**
 * The page fixture every spec and browser benchmark uses (after galata's `page` fixture):
 * `lab` is JupyterLab loaded in the page, in a workspace of the test's own, with a fresh fake
 * model; its kernels are shut down after the test. The machinery is in `../harness/`:
 * `servers.ts` (the one server fixture), `lab.ts` (the page), `cells.ts`, `chat.ts`,
 * `jupyter.ts` (REST API, notebooks), `model.ts` (the fake model's control API).
 *
 * Options (`test.use`): `autoOpen: false` leaves loading the page to the test (a benchmark
 * instruments the page first); `labServer` points the fixture at another JupyterLab, see
 * `ownLab`.
 */

import { expect, test as base } from '@playwright/test';

import {
  ILabServer,
  ILabOptions,
  IStopped,
  LabServer
} from '../harness/servers';
import { Lab } from '../harness/lab';
import { runLab } from '../harness/jupyter';
import { model } from '../harness/model';

export * from '../harness/cells';
export * from '../harness/chat';
export * from '../harness/jupyter';
export * from '../harness/lab';
export * from '../harness/model';
export { FAKE_KEY, FAKE_MODEL, ownLabPort } from '../harness/servers';

/** The `lab` fixture and its options. */
export const test = base.extend<{
  lab: Lab;
  autoOpen: boolean;
  labServer: ILabServer;
}>({
  autoOpen: [true, { option: true }],
  labServer: async ({}, use) => {
    await use(runLab());
  },
  lab: async ({ page, labServer, autoOpen }, use, testInfo) => {
    await model.reset();
    const lab = new Lab(page, testInfo, labServer);
    if (autoOpen) {
      await lab.open();
    }
    await use(lab);
    await lab.shutdownSessions();
  }
});

/**
 * A JupyterLab of its own for the tests of the enclosing `test.describe` (the bundled local
 * model, the start script): started before them, stopped after, and what their `lab` fixture
 * shows. `stopped` gets what stopping it found (checked there). Returns the running server.
 */
export function ownLab(
  options: ILabOptions,
  stopped?: (result: IStopped) => void
): () => LabServer {
  let server: LabServer | null = null;
  test.beforeAll(async () => {
    test.setTimeout(200_000);
    server = await LabServer.start(options);
  });
  test.afterAll(async () => {
    test.setTimeout(60_000);
    if (server) {
      const running = server;
      server = null;
      stopped?.(await running.stop());
    }
  });
  test.use({
    labServer: async ({}, use) => {
      await use(server!);
    }
  });
  return () => server!;
}

export { expect };
