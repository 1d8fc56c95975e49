/** Stops JupyterLab and the fake OpenAI server started by the global setup. */

import * as fs from 'fs';

import { loadState } from './servers';

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function stop(pid: number): Promise<void> {
  // SIGTERM first: JupyterLab then shuts its kernels down (they run in their own sessions,
  // out of reach of a signal to its process group).
  try {
    process.kill(pid, 'SIGTERM');
  } catch {
    return;
  }
  const deadline = Date.now() + 20_000;
  while (alive(pid) && Date.now() < deadline) {
    await new Promise(resolve => setTimeout(resolve, 200));
  }
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // Already gone, with its whole group.
  }
}

export default async function globalTeardown(): Promise<void> {
  const state = loadState();
  if (!state) {
    return;
  }
  for (const pid of [...state.pids].reverse()) {
    await stop(pid);
  }
  if (!process.env.CHAPYTER_UI_KEEP) {
    fs.rmSync(state.root, { recursive: true, force: true });
  }
  delete process.env.CHAPYTER_UI_STATE;
}
