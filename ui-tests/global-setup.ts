/**
 * Starts the loopback OpenAI-compatible server and JupyterLab for the whole run.
 *
 * Everything lives in a fresh temporary folder (notebooks, settings, workspaces, runtime
 * files, IPython profile), so no user configuration leaks in and nothing leaks out. The
 * tests learn the URLs and the token from environment variables set here (Playwright passes
 * them on to its workers).
 */

import { ChildProcess, spawn } from 'child_process';
import { randomBytes } from 'crypto';
import * as fs from 'fs';
import * as net from 'net';
import * as os from 'os';
import * as path from 'path';

import globalTeardown from './global-teardown';
import { IServerState, jupyterLabArgs, saveState } from './servers';

const REPO = path.resolve(__dirname, '..');
const LOGS = path.join(__dirname, 'artifacts', 'logs');

/** Ports in the range reserved for these tests (override with the env variables). */
const LAB_PORT = Number(process.env.CHAPYTER_UI_LAB_PORT ?? 18811);
const LLM_PORT = Number(process.env.CHAPYTER_UI_LLM_PORT ?? 18812);

function python(): string {
  if (process.env.CHAPYTER_UI_PYTHON) {
    return process.env.CHAPYTER_UI_PYTHON;
  }
  const venv = path.join(REPO, '.venv', 'bin', 'python');
  return fs.existsSync(venv) ? venv : 'python3';
}

async function assertPortFree(port: number): Promise<void> {
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

function start(
  name: string,
  argv: string[],
  env: NodeJS.ProcessEnv,
  cwd: string
): ChildProcess {
  const log = fs.openSync(path.join(LOGS, `${name}.log`), 'w');
  // Its own process group, so the teardown can stop it and its helpers in one signal.
  const child = spawn(argv[0], argv.slice(1), {
    cwd,
    env,
    detached: true,
    stdio: ['ignore', log, log]
  });
  child.unref();
  return child;
}

async function waitFor(
  what: string,
  check: () => Promise<boolean>,
  child: ChildProcess,
  seconds: number
): Promise<void> {
  const deadline = Date.now() + seconds * 1000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) {
      throw new Error(
        `${what} exited with ${child.exitCode}: see ui-tests/artifacts/logs/`
      );
    }
    if (await check().catch(() => false)) {
      return;
    }
    await new Promise(resolve => setTimeout(resolve, 250));
  }
  throw new Error(
    `${what} not ready after ${seconds} s: see ui-tests/artifacts/logs/`
  );
}

function writeJSON(file: string, data: unknown): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, JSON.stringify(data, null, 2));
}

export default async function globalSetup(): Promise<void> {
  try {
    await startServers();
  } catch (error) {
    // Playwright skips the teardown when the setup fails: stop what did start.
    await globalTeardown();
    throw error;
  }
}

async function startServers(): Promise<void> {
  fs.mkdirSync(LOGS, { recursive: true });
  await assertPortFree(LAB_PORT);
  await assertPortFree(LLM_PORT);

  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'chapyter-ui-'));
  const state: IServerState = { root, pids: [] };
  saveState(state);
  const notebooks = path.join(root, 'notebooks');
  const settings = path.join(root, 'settings');
  fs.mkdirSync(notebooks, { recursive: true });
  // No news or update pop-ups over the notebooks in screenshots.
  writeJSON(
    path.join(
      settings,
      '@jupyterlab',
      'apputils-extension',
      'notification.jupyterlab-settings'
    ),
    { fetchNews: 'false', checkForUpdates: false }
  );
  // Inline completion asks the model while a test types: only on demand here, so that the
  // other specs' model requests stay theirs. inline-completion.spec.ts turns it to automatic.
  writeJSON(
    path.join(
      settings,
      '@jupyterlab',
      'completer-extension',
      'inline-completer.jupyterlab-settings'
    ),
    {
      providers: { '@chapyter-ext/inline-completion': { trigger: 'onDemand' } }
    }
  );

  // The agent's MCP servers, as a user configures them (Jupyter's config path): a real one
  // from PyPI, started by the server on the first agent turn (agent-tools.spec.ts).
  writeJSON(path.join(root, 'config', 'chapyter_ext_mcp.json'), {
    mcpServers: {
      time: {
        command: python(),
        args: ['-m', 'mcp_server_time', '--local-timezone', 'UTC']
      }
    }
  });

  const token = randomBytes(24).toString('hex');
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    OPENAI_BASE_URL: `http://127.0.0.1:${LLM_PORT}/v1`,
    OPENAI_API_KEY: 'sk-test',
    CHAPYTER_MODEL: 'fake-model',
    JUPYTER_CONFIG_DIR: path.join(root, 'config'),
    JUPYTER_DATA_DIR: path.join(root, 'data'),
    JUPYTER_RUNTIME_DIR: path.join(root, 'runtime'),
    IPYTHONDIR: path.join(root, 'ipython'),
    PYTHONUNBUFFERED: '1'
  };
  // ipykernel picks the inline backend only when nothing else is forced.
  delete env.MPLBACKEND;
  const venvBin = path.dirname(python());
  if (path.isAbsolute(venvBin)) {
    env.PATH = `${venvBin}${path.delimiter}${env.PATH ?? ''}`;
  }

  const portFile = path.join(root, 'llm.port');
  const llm = start(
    'fake-openai',
    [
      python(),
      '-m',
      'chapyter_ext.testing.openai_server',
      '--port',
      String(LLM_PORT),
      '--port-file',
      portFile
    ],
    env,
    root
  );
  state.pids.push(llm.pid!);
  saveState(state);
  await waitFor(
    'the fake OpenAI server',
    async () => fs.existsSync(portFile),
    llm,
    30
  );

  const lab = start(
    'jupyterlab',
    [
      python(),
      ...jupyterLabArgs(LAB_PORT, token, {
        notebooks,
        settings,
        workspaces: path.join(root, 'workspaces')
      })
    ],
    env,
    notebooks
  );
  state.pids.push(lab.pid!);
  saveState(state);

  const labUrl = `http://127.0.0.1:${LAB_PORT}`;
  await waitFor(
    'JupyterLab',
    async () => {
      const response = await fetch(`${labUrl}/api/status`, {
        headers: { Authorization: `token ${token}` }
      });
      return response.ok;
    },
    lab,
    180
  );

  process.env.CHAPYTER_UI_LAB_URL = labUrl;
  process.env.CHAPYTER_UI_TOKEN = token;
  process.env.CHAPYTER_UI_LLM_URL = `http://127.0.0.1:${LLM_PORT}`;
  process.env.CHAPYTER_UI_ROOT = notebooks;
}
