/**
 * The one server fixture of the browser tests and the browser benchmarks: the loopback
 * OpenAI-compatible model and JupyterLab, each started in a fresh folder (notebooks, settings,
 * workspaces, Jupyter config, data and runtime files, IPython profile) with a random token, so
 * no user configuration leaks in and nothing leaks out.
 *
 * Every process started here is recorded in the run (`run.ts`), so the global teardown stops
 * it even when the worker that started it died.
 */

import { ChildProcess } from 'child_process';
import { randomBytes } from 'crypto';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';

import {
  alive,
  descendants,
  isModelServer,
  kill,
  killGroup,
  terminate,
  waitUntil
} from './processes';
import {
  assertPortFree,
  beginRun,
  endRun,
  keep,
  record,
  REPO,
  startProcess,
  waitReady
} from './run';

export { assertPortFree, beginRun, endRun, logsDir, REPO } from './run';

/** The model name and key JupyterLab is given when the loopback model answers. */
export const FAKE_MODEL = 'fake-model';
export const FAKE_KEY = 'sk-test';

/** Where a JupyterLab server listens, and its token. */
export interface ILabServer {
  url: string;
  token: string;
}

/**
 * The port of a spec's own JupyterLab (the bundled model's, the start script's; one spec at
 * a time): CHAPYTER_UI_LOCAL_LAB_PORT, or the run's JupyterLab's port + 2.
 */
export function ownLabPort(): number {
  return Number(
    process.env.CHAPYTER_UI_LOCAL_LAB_PORT ??
      Number(process.env.CHAPYTER_UI_LAB_PORT ?? 18811) + 2
  );
}

/** The Python with chapyter-ext installed: CHAPYTER_UI_PYTHON, ../.venv, or python3. */
export function python(): string {
  if (process.env.CHAPYTER_UI_PYTHON) {
    return process.env.CHAPYTER_UI_PYTHON;
  }
  const venv = path.join(REPO, '.venv', 'bin', 'python');
  return fs.existsSync(venv) ? venv : 'python3';
}

function writeJSON(file: string, data: unknown): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, JSON.stringify(data, null, 2));
}

// -- the loopback model ------------------------------------------------------------------------

/**
 * The loopback OpenAI-compatible server (`chapyter_ext.testing.openai_server`) on `port`, in
 * its own process; its URL once it listens.
 */
export async function startFakeModel(
  port: number,
  folder: string
): Promise<string> {
  const portFile = path.join(folder, 'llm.port');
  const argv = [
    python(),
    '-m',
    'chapyter_ext.testing.openai_server',
    '--port',
    String(port),
    '--port-file',
    portFile
  ];
  const env = { ...process.env, PYTHONUNBUFFERED: '1' };
  const { child, log } = startProcess('fake-openai', argv, env, folder);
  await waitReady(
    'the fake OpenAI server',
    async () => fs.existsSync(portFile),
    child,
    log,
    30
  );
  return `http://127.0.0.1:${port}`;
}

// -- JupyterLab --------------------------------------------------------------------------------

/** How to start one test JupyterLab. */
export interface ILabOptions {
  /** Names its log (`<name>.log`) and its temporary folder. */
  name: string;
  port: number;
  /**
   * Who answers: the loopback model at this URL (`OPENAI_BASE_URL`, a test key and
   * `CHAPYTER_MODEL` set), or `bundled`: no `OPENAI_*`/`CHAPYTER_*` variables at all, so the
   * bundled local model answers.
   */
  model: { url: string } | 'bundled';
  /** Its folder; by default a new temporary one, removed when it stops. */
  root?: string;
  /**
   * User settings by plugin id (`@jupyterlab/completer-extension:inline-completer`).
   * JupyterLab's news and update pop-ups are always off (they would cover the screenshots).
   */
  settings?: { [plugin: string]: object };
  /** Files of its Jupyter config folder by name (`jupyter_server_config.json`, ...). */
  config?: { [file: string]: object };
  /** A built labextension folder served instead of the installed one (copied first). */
  labextension?: string;
  /** More command-line options. */
  args?: string[];
  /**
   * `start.sh`: launch it as a newcomer does, with `scripts/start.sh --no-install` (its own
   * settings overrides and starter notebook; no user settings of ours).
   */
  launch?: 'jupyterlab' | 'start.sh';
}

/** What stopping a JupyterLab found. */
export interface IStopped {
  /** It exited on SIGTERM, within 30 s. */
  clean: boolean;
  /** Bundled-model servers seen below it that outlived it by 10 s (then killed). */
  leftover: number[];
}

/** A JupyterLab this run started. */
export class LabServer implements ILabServer {
  private constructor(
    readonly url: string,
    readonly token: string,
    /** Its folder: `notebooks/` (served), `settings/`, `config/`, `data/`, ... */
    readonly root: string,
    /** The served folder. */
    readonly notebooks: string,
    private readonly _child: ChildProcess,
    private readonly _log: string,
    private readonly _ownRoot: boolean
  ) {}

  /** Start a JupyterLab and wait until its REST API answers. */
  static async start(options: ILabOptions): Promise<LabServer> {
    const ownRoot = !options.root;
    const root =
      options.root ??
      fs.mkdtempSync(path.join(os.tmpdir(), `chapyter-ui-${options.name}-`));
    const notebooks = path.join(root, 'notebooks');
    fs.mkdirSync(notebooks, { recursive: true });
    const startScript = options.launch === 'start.sh';
    if (!startScript) {
      const settings = {
        '@jupyterlab/apputils-extension:notification': {
          fetchNews: 'false',
          checkForUpdates: false
        },
        ...options.settings
      };
      for (const [plugin, values] of Object.entries(settings)) {
        const [pkg, name] = plugin.split(':');
        writeJSON(
          path.join(root, 'settings', pkg, `${name}.jupyterlab-settings`),
          values
        );
      }
    }
    for (const [file, data] of Object.entries(options.config ?? {})) {
      writeJSON(path.join(root, 'config', file), data);
    }
    if (options.labextension) {
      const target = path.join(root, 'data', 'labextensions', 'chapyter-ext');
      fs.mkdirSync(path.dirname(target), { recursive: true });
      fs.cpSync(options.labextension, target, { recursive: true });
    }

    const env = labEnv(root, options.model);
    if (options.labextension) {
      // In a virtualenv Jupyter prefers the environment's folders, where the working tree's
      // build is linked: make the copy in the user data folder the one served.
      env.JUPYTER_PREFER_ENV_PATH = '0';
    }
    const token = randomBytes(24).toString('hex');
    const common = [
      '--no-browser',
      '--ip=127.0.0.1',
      `--port=${options.port}`,
      '--ServerApp.port_retries=0',
      // The current name of ServerApp.token (deprecated since jupyter_server 2).
      `--IdentityProvider.token=${token}`,
      // Tests read cell models through window.jupyterapp.
      '--LabApp.expose_app_in_browser=True',
      `--LabApp.user_settings_dir=${path.join(root, 'settings')}`,
      `--LabApp.workspaces_dir=${path.join(root, 'workspaces')}`
    ];
    let argv: string[];
    let cwd = notebooks;
    if (startScript) {
      // Where start.sh puts its notebooks and lab settings (by default notebooks/ and .venv).
      env.CHAPYTER_NOTEBOOK_DIR = notebooks;
      env.CHAPYTER_LAB_SETTINGS_DIR = path.join(root, 'lab-settings');
      argv = [
        'bash',
        path.join(REPO, 'scripts', 'start.sh'),
        '--no-install',
        ...common
      ];
      cwd = root;
    } else {
      argv = [
        python(),
        '-m',
        'jupyterlab',
        ...common,
        `--ServerApp.root_dir=${notebooks}`,
        // Containers and CI machines often run as root; Jupyter refuses that unless told.
        ...(process.getuid?.() === 0 ? ['--allow-root'] : [])
      ];
    }
    argv.push(...(options.args ?? []));
    const { child, log } = startProcess(options.name, argv, env, cwd);
    const lab = new LabServer(
      `http://127.0.0.1:${options.port}`,
      token,
      root,
      notebooks,
      child,
      log,
      ownRoot
    );
    try {
      await waitReady(
        `JupyterLab (${options.name})`,
        async () => {
          const response = await fetch(`${lab.url}/api/status`, {
            headers: { Authorization: `token ${token}` }
          });
          return response.ok;
        },
        child,
        log,
        180
      );
    } catch (error) {
      await lab.stop();
      throw error;
    }
    return lab;
  }

  /** Its process id (the leader of its process group). */
  get pid(): number {
    return this._child.pid!;
  }

  /** What it printed so far (stdout and stderr). */
  output(): string {
    return fs.existsSync(this._log) ? fs.readFileSync(this._log, 'utf-8') : '';
  }

  /** The bundled model's servers running below it now (remembered for `stop`). */
  modelServers(): number[] {
    const found = descendants(this.pid)
      .filter(p => isModelServer(p.cmd))
      .map(p => p.pid);
    found.forEach(pid => this._seen.add(pid));
    return found;
  }

  /**
   * SIGTERM (a clean shutdown: kernels, and the extension's `stop_extension`), then its
   * process group; bundled-model servers seen below it must exit with it.
   */
  async stop(): Promise<IStopped> {
    this.modelServers();
    const clean = await terminate(this.pid, 30_000);
    const left = () => [...this._seen].filter(alive);
    await waitUntil(() => left().length === 0, 10_000);
    const leftover = left();
    killGroup(this.pid);
    leftover.forEach(kill);
    record(this.pid, false);
    if (this._ownRoot && !keep()) {
      fs.rmSync(this.root, { recursive: true, force: true });
    }
    return { clean, leftover };
  }

  private readonly _seen = new Set<number>();
}

/** The environment of a test JupyterLab: its own Jupyter folders, the model it talks to. */
function labEnv(root: string, model: ILabOptions['model']): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    // The bundled model: no endpoint, no model name, so chapyter-ext falls back to it.
    if (model === 'bundled' && /^(OPENAI_|CHAPYTER_)/.test(key)) {
      continue;
    }
    env[key] = value;
  }
  if (model !== 'bundled') {
    Object.assign(env, {
      OPENAI_BASE_URL: `${model.url}/v1`,
      OPENAI_API_KEY: FAKE_KEY,
      CHAPYTER_MODEL: FAKE_MODEL
    });
  }
  Object.assign(env, {
    JUPYTER_CONFIG_DIR: path.join(root, 'config'),
    JUPYTER_DATA_DIR: path.join(root, 'data'),
    JUPYTER_RUNTIME_DIR: path.join(root, 'runtime'),
    IPYTHONDIR: path.join(root, 'ipython'),
    PYTHONUNBUFFERED: '1'
  });
  // ipykernel picks the inline backend only when nothing else is forced.
  delete env.MPLBACKEND;
  const bin = path.dirname(python());
  if (path.isAbsolute(bin)) {
    env.PATH = `${bin}${path.delimiter}${env.PATH ?? ''}`;
  }
  return env;
}

/** How a run's own JupyterLab differs from the default one (see `ILabOptions`). */
export type IRunLabOptions = Omit<
  ILabOptions,
  'name' | 'port' | 'model' | 'root'
>;

/**
 * The run's own servers, for the global setup: the loopback model and a JupyterLab talking
 * to it, on `CHAPYTER_UI_LLM_PORT` (18812) and `CHAPYTER_UI_LAB_PORT` (18811). The workers
 * learn where they are from the environment (`CHAPYTER_UI_LAB_URL`, `CHAPYTER_UI_TOKEN`,
 * `CHAPYTER_UI_LLM_URL`, `CHAPYTER_UI_ROOT`: the served folder).
 */
export async function startRun(lab: IRunLabOptions = {}): Promise<void> {
  const labPort = Number(process.env.CHAPYTER_UI_LAB_PORT ?? 18811);
  const llmPort = Number(process.env.CHAPYTER_UI_LLM_PORT ?? 18812);
  await assertPortFree(labPort);
  await assertPortFree(llmPort);
  const root = beginRun();
  try {
    const url = await startFakeModel(llmPort, root);
    const server = await LabServer.start({
      ...lab,
      name: 'jupyterlab',
      port: labPort,
      model: { url },
      root
    });
    process.env.CHAPYTER_UI_LAB_URL = server.url;
    process.env.CHAPYTER_UI_TOKEN = server.token;
    process.env.CHAPYTER_UI_LLM_URL = url;
    process.env.CHAPYTER_UI_ROOT = server.notebooks;
  } catch (error) {
    // Playwright skips the teardown when the setup fails: stop what did start.
    await endRun();
    throw error;
  }
}
