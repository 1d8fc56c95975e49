/**
 * The bundled local model, end to end: a JupyterLab of its own, started with no OPENAI_* or
 * CHAPYTER_* variables, so chapyter-ext serves SmolLM2-135M through llama-cpp-python. The
 * checks are about the path (the request reaches the model and the answer comes back to the
 * notebook and the chat), never about the tiny model's words.
 *
 * The server and the model's server are stopped in afterAll (the model's one by JupyterLab's
 * stop_extension on SIGTERM), and the test checks that no llama_cpp server is left.
 */

import { ChildProcess, spawn } from 'child_process';
import { randomBytes } from 'crypto';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';

import {
  expect,
  ILabServer,
  Lab,
  LOAD_EXT,
  notebookJson,
  test
} from './fixtures';
import { jupyterLabArgs } from '../servers';

const REPO = path.resolve(__dirname, '..', '..');
const LOGS = path.join(__dirname, '..', 'artifacts', 'logs');
/** One port past the run's JupyterLab (override with CHAPYTER_UI_LOCAL_LAB_PORT). */
const PORT = Number(
  process.env.CHAPYTER_UI_LOCAL_LAB_PORT ??
    Number(process.env.CHAPYTER_UI_LAB_PORT ?? 18811) + 2
);
const LOCAL_MODEL = 'SmolLM2-135M-Instruct';
const ANSWER_TIMEOUT = 180_000;

function python(): string {
  if (process.env.CHAPYTER_UI_PYTHON) {
    return process.env.CHAPYTER_UI_PYTHON;
  }
  const venv = path.join(REPO, '.venv', 'bin', 'python');
  return fs.existsSync(venv) ? venv : 'python3';
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  // A zombie (exited, not yet reaped) is not alive.
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf-8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0] !== 'Z';
  } catch {
    return false;
  }
}

/** Every live process below `root` (through /proc): pid and command line. */
function descendants(root: number): { pid: number; cmd: string }[] {
  const children = new Map<number, number[]>();
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) {
      continue;
    }
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf-8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(entry)]);
    } catch {
      // Gone meanwhile.
    }
  }
  const found: { pid: number; cmd: string }[] = [];
  const todo = [...(children.get(root) ?? [])];
  while (todo.length) {
    const pid = todo.pop()!;
    let cmd = '';
    try {
      cmd = fs
        .readFileSync(`/proc/${pid}/cmdline`, 'utf-8')
        .replace(/\0/g, ' ');
    } catch {
      continue;
    }
    found.push({ pid, cmd });
    todo.push(...(children.get(pid) ?? []));
  }
  return found;
}

function isModelServer(cmd: string): boolean {
  return cmd.includes('llama_cpp') || cmd.includes('chapyter_ext.local_model');
}

interface ILocalLab extends ILabServer {
  root: string;
  runtime: string;
  notebooks: string;
  child: ChildProcess;
}

let local: ILocalLab | null = null;
/** Model servers seen while the test ran: none may outlive JupyterLab. */
const modelServers = new Set<number>();

async function startLocalLab(): Promise<ILocalLab> {
  fs.mkdirSync(LOGS, { recursive: true });
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'chapyter-ui-local-'));
  const notebooks = path.join(root, 'notebooks');
  const runtime = path.join(root, 'runtime');
  const settings = path.join(root, 'settings');
  fs.mkdirSync(notebooks, { recursive: true });
  const notification = path.join(
    settings,
    '@jupyterlab',
    'apputils-extension',
    'notification.jupyterlab-settings'
  );
  fs.mkdirSync(path.dirname(notification), { recursive: true });
  fs.writeFileSync(
    notification,
    JSON.stringify({ fetchNews: 'false', checkForUpdates: false })
  );

  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    // No endpoint, no model name: chapyter-ext falls back to the bundled local model.
    if (!/^(OPENAI_|CHAPYTER_)/.test(key)) {
      env[key] = value;
    }
  }
  Object.assign(env, {
    JUPYTER_CONFIG_DIR: path.join(root, 'config'),
    JUPYTER_DATA_DIR: path.join(root, 'data'),
    JUPYTER_RUNTIME_DIR: runtime,
    IPYTHONDIR: path.join(root, 'ipython'),
    PYTHONUNBUFFERED: '1'
  });
  delete env.MPLBACKEND;
  const venvBin = path.dirname(python());
  if (path.isAbsolute(venvBin)) {
    env.PATH = `${venvBin}${path.delimiter}${env.PATH ?? ''}`;
  }

  // Agent turns with the tiny model: short answers, few steps, no approval (the browser test
  // checks the path, not the model's skill).
  fs.mkdirSync(path.join(root, 'config'), { recursive: true });
  fs.writeFileSync(
    path.join(root, 'config', 'jupyter_server_config.json'),
    JSON.stringify({
      Chapyter: {
        agent_max_steps: 2,
        agent_time_limit: 200,
        agent_policy: 'never',
        max_tokens: 256
      }
    })
  );

  const token = randomBytes(24).toString('hex');
  const log = fs.openSync(path.join(LOGS, 'jupyterlab-local.log'), 'w');
  const child = spawn(
    python(),
    jupyterLabArgs(PORT, token, {
      notebooks,
      settings,
      workspaces: path.join(root, 'workspaces')
    }),
    { cwd: notebooks, env, detached: true, stdio: ['ignore', log, log] }
  );
  fs.closeSync(log);
  const lab: ILocalLab = {
    url: `http://127.0.0.1:${PORT}`,
    token,
    root,
    runtime,
    notebooks,
    child
  };
  // The global teardown stops it too, should this worker die before afterAll.
  const stateFile = process.env.CHAPYTER_UI_STATE;
  if (stateFile && fs.existsSync(stateFile)) {
    const state = JSON.parse(fs.readFileSync(stateFile, 'utf-8'));
    state.pids.push(child.pid);
    fs.writeFileSync(stateFile, JSON.stringify(state, null, 2));
  }

  const deadline = Date.now() + 180_000;
  for (;;) {
    if (child.exitCode !== null) {
      throw new Error(
        `JupyterLab (local model) exited with ${child.exitCode}: see artifacts/logs/jupyterlab-local.log`
      );
    }
    const ok = await fetch(`${lab.url}/api/status`, {
      headers: { Authorization: `token ${token}` }
    })
      .then(r => r.ok)
      .catch(() => false);
    if (ok) {
      return lab;
    }
    if (Date.now() > deadline) {
      throw new Error('JupyterLab (local model) not ready after 180 s');
    }
    await new Promise(resolve => setTimeout(resolve, 250));
  }
}

/** Remember the model servers running below JupyterLab right now. */
function noteModelServers(): void {
  if (local?.child.pid) {
    for (const p of descendants(local.child.pid)) {
      if (isModelServer(p.cmd)) {
        modelServers.add(p.pid);
      }
    }
  }
}

async function stopLocalLab(lab: ILocalLab): Promise<void> {
  const pid = lab.child.pid!;
  noteModelServers();
  // SIGTERM: a clean shutdown, kernels and the extension's stop_extension included.
  try {
    process.kill(pid, 'SIGTERM');
  } catch {
    // Already gone.
  }
  const deadline = Date.now() + 30_000;
  while (lab.child.exitCode === null && lab.child.signalCode === null) {
    if (Date.now() > deadline) {
      break;
    }
    await new Promise(resolve => setTimeout(resolve, 200));
  }
  const clean = lab.child.exitCode !== null || lab.child.signalCode !== null;
  // Give the model servers a moment to exit after their owners.
  const left = () => [...modelServers].filter(alive);
  const until = Date.now() + 10_000;
  while (left().length && Date.now() < until) {
    await new Promise(resolve => setTimeout(resolve, 200));
  }
  const leftover = left();
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // Its group is gone.
  }
  for (const p of leftover) {
    try {
      process.kill(p, 'SIGKILL');
    } catch {
      // Gone.
    }
  }
  if (!process.env.CHAPYTER_UI_KEEP) {
    fs.rmSync(lab.root, { recursive: true, force: true });
  }
  expect(clean, 'JupyterLab (local model) stopped on SIGTERM').toBe(true);
  expect(leftover, 'llama_cpp servers left after JupyterLab stopped').toEqual(
    []
  );
}

/** A notebook written straight into the local server's root. */
function writeNotebook(
  name: string,
  cells: { id: string; source: string }[]
): string {
  const file = `${name}.ipynb`;
  const notebook = notebookJson(cells);
  fs.writeFileSync(
    path.join(local!.notebooks, file),
    JSON.stringify(notebook, null, 1)
  );
  return file;
}

// eslint-disable-next-line no-control-regex
const ANSI = /\x1b\[[0-9;]*m/g;

test.describe('local model', () => {
  test.beforeAll(async () => {
    test.setTimeout(200_000);
    local = await startLocalLab();
  });

  test.afterAll(async () => {
    test.setTimeout(60_000);
    if (local) {
      const lab = local;
      local = null;
      await stopLocalLab(lab);
    }
  });

  test('with no endpoint configured, the bundled model answers the chat and %%ai', async ({
    page
  }, testInfo) => {
    test.setTimeout(330_000);
    const lab = new Lab(page, testInfo, local!);
    await lab.open();
    const file = writeNotebook('local-model', [
      { id: 'load', source: LOAD_EXT },
      {
        id: 'prompt',
        source:
          '%%ai --no-context\nwrite a python function add(a, b) that returns a + b'
      },
      { id: 'after', source: 'print(6*7)' }
    ]);
    await lab.openNotebook(file);

    // The chat first, so JupyterLab itself starts the model's server (and must stop it).
    await lab.command('chapyter-ext:open-chat');
    const panel = page.getByRole('region', { name: 'AI Chat' });
    await expect(panel).toBeVisible();
    await expect(panel.getByRole('combobox', { name: 'Model' })).toHaveValue(
      LOCAL_MODEL
    );
    const notice = panel.locator('.jp-Chapyter-chatNotice');
    await expect(notice).toBeVisible();
    await expect(notice).toContainText(
      `Using ${LOCAL_MODEL}, a tiny bundled local model`
    );
    await lab.screenshot('local-01-chat-notice', panel);

    const input = panel.getByRole('textbox', { name: 'Ask AI' });
    await input.fill('Say hello.');
    await input.press('Enter');
    const stop = panel.getByRole('button', { name: 'Stop' });
    await expect(stop).toBeVisible();
    const reply = panel
      .locator('.jp-Chapyter-chatMessage.jp-mod-assistant')
      .first();
    // The first words arrive (the model's server starts on this first request).
    await expect(reply.locator('.jp-Chapyter-chatMarkdown')).not.toBeEmpty({
      timeout: ANSWER_TIMEOUT
    });
    noteModelServers();
    await expect(stop).toBeHidden({ timeout: ANSWER_TIMEOUT });
    await expect(panel.getByRole('button', { name: 'Send' })).toBeVisible();
    await expect(reply).not.toHaveClass(/jp-mod-error/);
    await expect(reply).not.toHaveClass(/jp-mod-streaming/);
    await expect(reply.locator('.jp-Chapyter-chatStatus')).toHaveCount(0);
    await expect(panel.getByRole('alert')).toBeHidden();
    expect(
      (await reply.locator('.jp-Chapyter-chatMarkdown').innerText()).trim()
    ).not.toBe('');
    await expect(reply.locator('.jp-Chapyter-chatAuthor')).toHaveText(
      LOCAL_MODEL
    );
    await lab.screenshot('local-02-chat-answer', panel);
    // JupyterLab started the model's server: it is JupyterLab's child.
    const owned = descendants(local!.child.pid!).filter(p =>
      isModelServer(p.cmd)
    );
    expect(owned.length, 'a model server below JupyterLab').toBeGreaterThan(0);

    // %%ai in the kernel, through the same (reused) server.
    await lab.runCell(file, 'load', 'Shift+Enter');
    await lab.waitForCells(
      file,
      cells => cells.find(c => c.id === 'load')!.executionCount !== null,
      'the extension loaded'
    );
    await lab.waitForKernelIdle(file);
    await lab.runCell(file, 'prompt', 'Shift+Enter');
    const cells = await lab.waitForCells(
      file,
      cells => {
        const index = cells.findIndex(c => c.id === 'prompt');
        const prompt = cells[index];
        const below = cells[index + 1];
        // Review first (Chapyter.local_review): inserted below, not run.
        const generated =
          below?.chapyter?.role === 'generated' &&
          prompt.executionState === 'idle' &&
          prompt.outputs.some(o =>
            o.text.includes('it waits for your review (setting: Local review)')
          );
        const failed =
          prompt.executionState === 'idle' &&
          prompt.outputs.some(o => o.type === 'error');
        return generated || failed;
      },
      'a generated cell below the prompt, or one error line on the prompt',
      ANSWER_TIMEOUT
    );
    noteModelServers();
    const index = cells.findIndex(c => c.id === 'prompt');
    const prompt = cells[index];
    const below = cells[index + 1];
    if (below?.chapyter) {
      expect(below.type).toBe('code');
      expect(below.chapyter).toMatchObject({
        role: 'generated',
        source: 'magic',
        generated_from: 'prompt',
        model: LOCAL_MODEL
      });
      expect(prompt.chapyter).toMatchObject({
        role: 'prompt',
        generated_cell: below.id
      });
      expect(below.executionCount).toBeNull();
      await lab.screenshot('local-03-generated');
    } else {
      // No usable code from the tiny model: one chapyter-ext line, and no cell inserted.
      const errors = prompt.outputs.filter(o => o.type === 'error');
      expect(errors).toHaveLength(1);
      const text = errors[0].text.replace(ANSI, '').trim();
      expect(text).toMatch(/^chapyter-ext: [^\n]+$/);
      expect(cells.map(c => c.id).slice(0, 3)).toEqual([
        'load',
        'prompt',
        'after'
      ]);
      expect(cells.filter(c => c.chapyter?.role === 'generated')).toHaveLength(
        0
      );
      await lab.screenshot('local-03-error');
    }
    testInfo.annotations.push({
      type: '%%ai outcome',
      description: below?.chapyter ? 'generated cell' : 'error line'
    });

    // The kernel is still usable.
    await lab.waitForKernelIdle(file, ANSWER_TIMEOUT);
    await lab.runCell(file, 'after');
    await lab.waitForCells(
      file,
      cells =>
        cells
          .find(c => c.id === 'after')!
          .outputs.some(o => o.text.trim() === '42'),
      'print(6*7) prints 42'
    );
    await lab.screenshot('local-04-kernel-usable');
  });

  test('agent mode with the bundled model: a turn completes through the fenced-code protocol', async ({
    page
  }, testInfo) => {
    test.setTimeout(300_000);
    const lab = new Lab(page, testInfo, local!);
    await lab.open();
    const file = writeNotebook('local-agent', [
      { id: 'data', source: 'x = 6' }
    ]);
    await lab.openNotebook(file);
    await lab.runCell(file, 'data');
    await lab.waitForKernelIdle(file);

    await lab.command('chapyter-ext:open-chat');
    const panel = page.getByRole('region', { name: 'AI Chat' });
    await expect(panel).toBeVisible();
    await panel.getByRole('checkbox', { name: 'Agent mode' }).check();
    const input = panel.getByRole('textbox', { name: 'Ask AI' });
    await input.fill('Compute x * 7 with Python and tell me the result.');
    await input.press('Enter');
    const stop = panel.getByRole('button', { name: 'Stop' });
    await expect(stop).toBeVisible();
    // The turn ends: an answer, or one line saying a cap was hit; never stuck, never broken.
    await expect(stop).toBeHidden({ timeout: 240_000 });
    noteModelServers();
    const reply = panel
      .locator('.jp-Chapyter-chatMessage.jp-mod-assistant')
      .last();
    await expect(reply).not.toHaveClass(/jp-mod-streaming/);
    await expect(reply).not.toHaveClass(/jp-mod-error/);
    await expect(reply.locator('.jp-Chapyter-chatAuthor')).toHaveText(
      LOCAL_MODEL
    );
    expect((await reply.innerText()).trim()).not.toBe('');
    // Whatever ran is a real cell of the notebook, with the agent's provenance.
    const cells = await lab.cells(file);
    const agentCells = cells.filter(c => c.chapyter?.source === 'agent');
    for (const cell of agentCells) {
      expect(cell.chapyter).toMatchObject({
        role: 'generated',
        model: LOCAL_MODEL
      });
    }
    testInfo.annotations.push({
      type: 'agent outcome',
      description: `${agentCells.length} step cell(s)`
    });
    await lab.screenshot('local-05-agent-turn', panel);
  });
});
