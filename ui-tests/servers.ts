/** What the global setup started, for the teardown (and for a person cleaning up by hand). */

import * as fs from 'fs';
import * as path from 'path';

/** The processes and the temporary folder of one run. */
export interface IServerState {
  /** Temporary folder holding notebooks, settings and runtime files. */
  root: string;
  /** Process ids (each the leader of its own process group), in start order. */
  pids: number[];
}

/**
 * Record what this run started, in its own temporary folder; the path goes to the teardown
 * through the environment, so runs never signal each other's processes.
 */
export function saveState(state: IServerState): void {
  const file = path.join(state.root, 'servers.json');
  fs.writeFileSync(file, JSON.stringify(state, null, 2));
  process.env.CHAPYTER_UI_STATE = file;
}

/** What this run started, or null if the setup started nothing. */
export function loadState(): IServerState | null {
  const file = process.env.CHAPYTER_UI_STATE;
  if (!file || !fs.existsSync(file)) {
    return null;
  }
  return JSON.parse(fs.readFileSync(file, 'utf-8')) as IServerState;
}

/** Where one test JupyterLab keeps its files. */
export interface ILabDirs {
  /** Served folder (notebooks). */
  notebooks: string;
  /** User settings folder. */
  settings: string;
  /** Workspaces folder. */
  workspaces: string;
}

/** Arguments of `python` that start a test JupyterLab on loopback. */
export function jupyterLabArgs(
  port: number,
  token: string,
  dirs: ILabDirs
): string[] {
  return [
    '-m',
    'jupyterlab',
    '--no-browser',
    '--ip=127.0.0.1',
    `--port=${port}`,
    '--ServerApp.port_retries=0',
    // The current name of ServerApp.token (deprecated since jupyter_server 2).
    `--IdentityProvider.token=${token}`,
    `--ServerApp.root_dir=${dirs.notebooks}`,
    // Tests read cell models through window.jupyterapp.
    '--LabApp.expose_app_in_browser=True',
    `--LabApp.user_settings_dir=${dirs.settings}`,
    `--LabApp.workspaces_dir=${dirs.workspaces}`,
    // Containers and CI machines often run as root; Jupyter refuses that unless told.
    ...(process.getuid?.() === 0 ? ['--allow-root'] : [])
  ];
}
