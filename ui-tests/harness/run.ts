/**
 * A run of the browser tests or benchmarks: what it started (each process recorded in the
 * run's state file, so the global teardown stops it even when the worker that started it
 * died; stopped by its id and process group, never by name), starting one process with its
 * log, and waiting until it is ready.
 */

import { ChildProcess, spawn } from 'child_process';
import * as fs from 'fs';
import * as net from 'net';
import * as os from 'os';
import * as path from 'path';

import { killGroup, terminate } from './processes';

/** The repository's root folder. */
export const REPO = path.resolve(__dirname, '..', '..');

/**
 * The run's artifacts folder: ui-tests/artifacts, or CHAPYTER_UI_ARTIFACTS (runs side by side
 * each keep their own, since Playwright empties its output folder when it starts).
 */
export const ARTIFACTS =
  process.env.CHAPYTER_UI_ARTIFACTS ?? path.join(REPO, 'ui-tests', 'artifacts');

/** Where the servers' logs go: artifacts/logs, or CHAPYTER_UI_LOGS. */
export function logsDir(): string {
  return process.env.CHAPYTER_UI_LOGS ?? path.join(ARTIFACTS, 'logs');
}

/** Whether to keep the run's folders afterwards (CHAPYTER_UI_KEEP). */
export function keep(): boolean {
  return !!process.env.CHAPYTER_UI_KEEP;
}

// -- the run's state: what was started, for the teardown --------------------------------------

/** The processes and the temporary folder of one run. */
interface IRunState {
  /** Temporary folder of the run's own servers. */
  root: string;
  /** Process ids (each the leader of its own process group), in start order. */
  pids: number[];
}

function loadState(): IRunState | null {
  const file = process.env.CHAPYTER_UI_STATE;
  if (!file || !fs.existsSync(file)) {
    return null;
  }
  return JSON.parse(fs.readFileSync(file, 'utf-8')) as IRunState;
}

function saveState(state: IRunState): void {
  const file = path.join(state.root, 'servers.json');
  fs.writeFileSync(file, JSON.stringify(state, null, 2));
  // The path goes to the workers and the teardown through the environment, so runs never
  // signal each other's processes.
  process.env.CHAPYTER_UI_STATE = file;
}

/** Note that `pid` was started (recorded for the teardown) or has been stopped. */
export function record(pid: number, started: boolean): void {
  const state = loadState();
  if (state) {
    state.pids = state.pids.filter(p => p !== pid);
    if (started) {
      state.pids.push(pid);
    }
    saveState(state);
  }
}

/** Begin a run: a fresh temporary folder and its state file; returns the folder. */
export function beginRun(): string {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'chapyter-ui-'));
  saveState({ root, pids: [] });
  return root;
}

/** Stop everything the run started and is still running, last started first. */
export async function endRun(): Promise<void> {
  const state = loadState();
  if (!state) {
    return;
  }
  for (const pid of [...state.pids].reverse()) {
    await terminate(pid, 20_000);
    killGroup(pid);
  }
  if (!keep()) {
    fs.rmSync(state.root, { recursive: true, force: true });
  }
  delete process.env.CHAPYTER_UI_STATE;
}

// -- one process ---------------------------------------------------------------------------------

/** Fail early with a clear line when a port of the run is taken. */
export async function assertPortFree(port: number): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    const server = net.createServer();
    server.once('error', () =>
      reject(
        new Error(
          `port ${port} is in use: stop whatever holds it or set another port`
        )
      )
    );
    server.listen(port, '127.0.0.1', () => server.close(() => resolve()));
  });
}

/** Start `argv` leading its own process group, its output in `<logs>/<name>.log`. */
export function startProcess(
  name: string,
  argv: string[],
  env: NodeJS.ProcessEnv,
  cwd: string
): { child: ChildProcess; log: string } {
  fs.mkdirSync(logsDir(), { recursive: true });
  const log = path.join(logsDir(), `${name}.log`);
  const out = fs.openSync(log, 'w');
  const child = spawn(argv[0], argv.slice(1), {
    cwd,
    env,
    detached: true,
    stdio: ['ignore', out, out]
  });
  fs.closeSync(out);
  child.unref();
  record(child.pid!, true);
  return { child, log };
}

/** Poll `check` until it holds; fail at once if `child` exits, with the end of its log. */
export async function waitReady(
  what: string,
  check: () => Promise<boolean>,
  child: ChildProcess,
  log: string,
  seconds: number
): Promise<void> {
  const deadline = Date.now() + seconds * 1000;
  const tail = () =>
    fs.existsSync(log) ? fs.readFileSync(log, 'utf-8').slice(-2000) : '';
  while (Date.now() < deadline) {
    if (child.exitCode !== null) {
      throw new Error(
        `${what} exited with ${child.exitCode} (${log}):\n${tail()}`
      );
    }
    if (await check().catch(() => false)) {
      return;
    }
    await new Promise(resolve => setTimeout(resolve, 250));
  }
  throw new Error(`${what} not ready after ${seconds} s (${log}):\n${tail()}`);
}
