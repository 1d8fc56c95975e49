/**
 * What every test uses: the fake model's control API, notebooks made through the contents
 * API, JupyterLab opened in the page, and cells found by id (never "the last cell").
 *
 * Page-side code reads JupyterLab's own models through `window.jupyterapp`
 * (`--LabApp.expose_app_in_browser`), so the checks are about what the notebook holds, and
 * the screenshots about what a person sees.
 */

import {
  expect,
  Locator,
  Page,
  test as base,
  TestInfo
} from '@playwright/test';
import * as fs from 'fs';
import * as path from 'path';

const LAB_URL = process.env.CHAPYTER_UI_LAB_URL!;
const TOKEN = process.env.CHAPYTER_UI_TOKEN!;
const LLM_URL = process.env.CHAPYTER_UI_LLM_URL!;

/** Screenshots a person should look at, one folder for the whole run. */
export const SCREENSHOTS = path.join(
  __dirname,
  '..',
  'artifacts',
  'screenshots'
);

/** The first cell of every test notebook. */
export const LOAD_EXT = '%load_ext chapyter_ext';

/** A scripted answer of the fake model (fields of `chapyter_ext.testing.openai_server.Reply`). */
export interface IReply {
  content?: string;
  status?: number;
  error?: string;
  chunk_size?: number;
  chunk_delay?: number;
  delay?: number;
  headers?: { [name: string]: string };
  /** `error.type` of an error body (e.g. LiteLLM's `budget_exceeded`). */
  error_type?: string;
  /** `error.code` of an error body. */
  error_code?: string;
  /** The `usage` the reply reports (streams: when the request asks for it). */
  usage?: { prompt_tokens: number; completion_tokens: number };
  /** Function calls the reply makes (served as OpenAI `tool_calls`). */
  tool_calls?: {
    name: string;
    arguments: { [key: string]: unknown } | string;
  }[];
}

/** A request the fake model received, as `GET /_control/requests` reports it. */
export interface IRecordedRequest {
  method: string;
  path: string;
  body: any;
  source: string | null;
}

/** What a test needs to know of one cell. */
export interface ICellInfo {
  id: string;
  index: number;
  type: string;
  source: string;
  chapyter: { [key: string]: any } | null;
  executionCount: number | null;
  executionState: string | null;
  /** One entry per output: its type, MIME types and its text (plain, stream or traceback). */
  outputs: { type: string; mimes: string[]; text: string }[];
  /** The jp-Chapyter-* classes of the cell widget. */
  classes: string[];
  active: boolean;
  selected: boolean;
}

/** The fake OpenAI-compatible model's control endpoints. */
export const model = {
  async reset(): Promise<void> {
    await control('POST', '/_control/reset', {});
  },
  /** Queue answers, served in order to requests no route matches. */
  async script(...replies: (IReply | string)[]): Promise<void> {
    await control('POST', '/_control/script', {
      replies: replies.map(r => (typeof r === 'string' ? { content: r } : r))
    });
  },
  /** Answer `reply` whenever the last user message contains `when` (until reset). */
  async route(when: string, reply: IReply | string): Promise<void> {
    await control('POST', '/_control/route', {
      when,
      reply: typeof reply === 'string' ? { content: reply } : reply
    });
  },
  /** Chat completion requests received so far. */
  async chatRequests(): Promise<IRecordedRequest[]> {
    const data = await control('GET', '/_control/requests');
    return (data.requests as IRecordedRequest[]).filter(
      r => r.path === '/v1/chat/completions'
    );
  }
};

async function control(
  method: string,
  route: string,
  body?: unknown
): Promise<any> {
  const response = await fetch(`${LLM_URL}${route}`, {
    method,
    headers: { 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body)
  });
  if (!response.ok) {
    throw new Error(
      `${method} ${route}: ${response.status} ${await response.text()}`
    );
  }
  return response.json();
}

/** A call to the Jupyter server's REST API with the run's token. */
export async function jupyterApi(
  method: string,
  route: string,
  body?: unknown
): Promise<any> {
  const response = await fetch(`${LAB_URL}${route}`, {
    method,
    headers: {
      Authorization: `token ${TOKEN}`,
      'Content-Type': 'application/json'
    },
    body: body === undefined ? undefined : JSON.stringify(body)
  });
  if (!response.ok) {
    throw new Error(
      `${method} ${route}: ${response.status} ${await response.text()}`
    );
  }
  return response.status === 204 ? null : response.json();
}

/** A fenced Python block, as a model answers. */
export function fenced(code: string): string {
  return '```python\n' + code + '\n```';
}

/** An nbformat 4.5 notebook of code cells with the given ids and sources. */
export function notebookJson(cells: { id: string; source: string }[]): object {
  return {
    nbformat: 4,
    nbformat_minor: 5,
    metadata: {
      kernelspec: {
        name: 'python3',
        display_name: 'Python 3 (ipykernel)',
        language: 'python'
      },
      language_info: { name: 'python' }
    },
    cells: cells.map(cell => ({
      id: cell.id,
      cell_type: 'code',
      source: cell.source,
      metadata: {},
      outputs: [],
      execution_count: null
    }))
  };
}

/**
 * Save a notebook of code cells (id and source each) through the contents API; returns its
 * path. The first cell should be `%load_ext chapyter_ext`.
 */
export async function createNotebook(
  name: string,
  cells: { id: string; source: string }[]
): Promise<string> {
  const notebook = notebookJson(cells);
  const file = `${name}.ipynb`;
  await jupyterApi('PUT', `/api/contents/${encodeURIComponent(file)}`, {
    type: 'notebook',
    format: 'json',
    content: notebook
  });
  return file;
}

/** The notebook as saved on disk (contents API). */
export async function savedNotebook(file: string): Promise<any> {
  const data = await jupyterApi(
    'GET',
    `/api/contents/${encodeURIComponent(file)}?content=1`
  );
  return data.content;
}

/** Where a JupyterLab server listens, and its token. */
export interface ILabServer {
  url: string;
  token: string;
}

/** JupyterLab in one page, with helpers over its notebooks. */
export class Lab {
  constructor(
    readonly page: Page,
    private readonly _testInfo: TestInfo,
    // Another server than the run's (the local-model test starts a JupyterLab of its own).
    private readonly _server: ILabServer = { url: LAB_URL, token: TOKEN }
  ) {}

  /**
   * Load JupyterLab and wait until it has started and restored its layout. Each test has a
   * workspace of its own, so no notebook (and kernel) of an earlier test is restored.
   */
  async open(): Promise<void> {
    const workspace = `t${this._testInfo.testId}`.replace(
      /[^a-zA-Z0-9-]/g,
      '-'
    );
    await this.page.goto(
      `${this._server.url}/lab/workspaces/${workspace}?token=${this._server.token}`
    );
    await this._started();
    // Room for the notebooks: the file browser is not what these tests look at.
    await this.page.evaluate(() =>
      (window as any).jupyterapp.shell.collapseLeft()
    );
  }

  /**
   * Load the page again in the same workspace, as a person pressing F5 does: the notebooks
   * that were open come back.
   */
  async reload(): Promise<void> {
    await this.page.reload();
    await this._started();
  }

  /** Wait until JupyterLab has started, restored its layout and hidden its splash. */
  private async _started(): Promise<void> {
    await this.page.waitForFunction(() => !!(window as any).jupyterapp, null, {
      timeout: 120_000
    });
    await this.page.evaluate(async () => {
      const app = (window as any).jupyterapp;
      await app.started;
      await app.restored;
    });
    await expect(this.page.locator('#jupyterlab-splash')).toHaveCount(0, {
      timeout: 120_000
    });
  }

  /**
   * Open a notebook (in a new tab, or `split-right` of the current one) and wait until its
   * kernel is connected and idle: a cell run while the kernel starts is dropped by JupyterLab.
   */
  async openNotebook(file: string, mode?: 'split-right'): Promise<void> {
    await this.page.evaluate(
      async ({ file, mode }) => {
        const app = (window as any).jupyterapp;
        const options = mode ? { mode } : undefined;
        const panel = await app.commands.execute('docmanager:open', {
          path: file,
          factory: 'Notebook',
          options
        });
        await panel.context.ready;
        await panel.sessionContext.ready;
        await panel.revealed;
      },
      { file, mode }
    );
    await this.waitForKernelIdle(file);
  }

  /** Wait until the notebook's kernel is connected and idle. */
  async waitForKernelIdle(file: string, timeout = 120_000): Promise<void> {
    await expect
      .poll(
        () =>
          this.page.evaluate(file => {
            const app = (window as any).jupyterapp;
            const panel = Array.from(app.shell.widgets('main')).find(
              (w: any) => w.context?.path === file
            ) as any;
            const kernel = panel?.sessionContext?.session?.kernel;
            if (!kernel) {
              return 'no kernel';
            }
            return `${kernel.connectionStatus} ${panel.sessionContext.kernelDisplayStatus}`;
          }, file),
        { timeout, message: `kernel of ${file} connected and idle` }
      )
      .toBe('connected idle');
  }

  /** Every cell of an open notebook, in order. */
  async cells(file: string): Promise<ICellInfo[]> {
    return this.page.evaluate(file => {
      const app = (window as any).jupyterapp;
      const panel = Array.from(app.shell.widgets('main')).find(
        (w: any) => w.context?.path === file
      ) as any;
      if (!panel) {
        throw new Error(`${file} is not open`);
      }
      const notebook = panel.content;
      const text = (value: unknown) =>
        Array.isArray(value)
          ? value.join('')
          : typeof value === 'string'
            ? value
            : '';
      const cells = [];
      for (let index = 0; index < notebook.model.cells.length; index++) {
        const model = notebook.model.cells.get(index);
        const widget = notebook.widgets[index];
        const outputs = [];
        if (model.type === 'code') {
          for (let i = 0; i < model.outputs.length; i++) {
            const output = model.outputs.get(i).toJSON();
            const data = output.data ?? {};
            outputs.push({
              type: output.output_type,
              mimes: Object.keys(data),
              text:
                output.output_type === 'stream'
                  ? text(output.text)
                  : output.output_type === 'error'
                    ? text(output.traceback.join('\n'))
                    : text(data['text/plain'])
            });
          }
        }
        cells.push({
          id: model.id,
          index,
          type: model.type,
          source: model.sharedModel.getSource(),
          chapyter: model.getMetadata('chapyter') ?? null,
          executionCount: model.type === 'code' ? model.executionCount : null,
          executionState: model.type === 'code' ? model.executionState : null,
          outputs,
          classes: Array.from(widget.node.classList as DOMTokenList).filter(c =>
            c.startsWith('jp-Chapyter-')
          ),
          active: notebook.activeCellIndex === index,
          selected: notebook.isSelectedOrActive(widget)
        });
      }
      return cells;
    }, file);
  }

  /** One cell by id. */
  async cell(file: string, id: string): Promise<ICellInfo> {
    const found = (await this.cells(file)).find(c => c.id === id);
    if (!found) {
      throw new Error(`no cell ${id} in ${file}`);
    }
    return found;
  }

  /** The DOM of a cell, by id. */
  async cellLocator(file: string, id: string): Promise<Locator> {
    const where = await this.page.evaluate(
      ({ file, id }) => {
        const app = (window as any).jupyterapp;
        const panel = Array.from(app.shell.widgets('main')).find(
          (w: any) => w.context?.path === file
        ) as any;
        const index = panel.content.widgets.findIndex(
          (w: any) => w.model.id === id
        );
        return { panel: panel.id as string, index: index as number };
      },
      { file, id }
    );
    if (where.index < 0) {
      throw new Error(`no cell ${id} in ${file}`);
    }
    return this.page
      .locator(`[id="${where.panel}"] .jp-Notebook .jp-Cell`)
      .nth(where.index);
  }

  /** Click into a cell's editor, as a person does before typing or pressing Shift+Enter. */
  async focusEditor(file: string, id: string): Promise<void> {
    const cell = await this.cellLocator(file, id);
    await cell.scrollIntoViewIfNeeded();
    await cell.locator('.jp-InputArea-editor .cm-content').click();
  }

  /** Run one cell from the keyboard: click into it, then Ctrl+Enter (or Shift+Enter). */
  async runCell(
    file: string,
    id: string,
    keys = 'Control+Enter'
  ): Promise<void> {
    await this.focusEditor(file, id);
    await this.page.keyboard.press(keys);
  }

  /** Make a notebook the current widget (as clicking its tab does). */
  async activate(file: string): Promise<void> {
    await this.page.evaluate(file => {
      const app = (window as any).jupyterapp;
      const panel = Array.from(app.shell.widgets('main')).find(
        (w: any) => w.context?.path === file
      ) as any;
      app.shell.activateById(panel.id);
    }, file);
  }

  /** The path of the current notebook, or null. */
  async currentPath(): Promise<string | null> {
    return this.page.evaluate(() => {
      const app = (window as any).jupyterapp;
      return (app.shell.currentWidget as any)?.context?.path ?? null;
    });
  }

  /**
   * Run a JupyterLab command (on the current widget). With `wait: false` it only starts it:
   * for commands that open a dialog and settle once it is answered.
   */
  async command(id: string, args: object = {}, wait = true): Promise<void> {
    await this.page.evaluate(
      async ({ id, args, wait }) => {
        const done = (window as any).jupyterapp.commands.execute(id, args);
        if (wait) {
          await done;
        }
      },
      { id, args, wait }
    );
  }

  /** Save the current notebook and wait until the file on disk is current. */
  async save(file: string): Promise<void> {
    await this.activate(file);
    await this.page.evaluate(async file => {
      const app = (window as any).jupyterapp;
      const panel = Array.from(app.shell.widgets('main')).find(
        (w: any) => w.context?.path === file
      ) as any;
      await panel.context.save();
    }, file);
  }

  /** Wait until every cell satisfies the checks of `expectFn` (polled). */
  async waitForCells(
    file: string,
    check: (cells: ICellInfo[]) => boolean,
    message: string,
    timeout = 120_000
  ): Promise<ICellInfo[]> {
    let last: ICellInfo[] = [];
    await expect
      .poll(
        async () => {
          last = await this.cells(file);
          return check(last);
        },
        { timeout, message }
      )
      .toBe(true);
    return last;
  }

  /** Save a screenshot under artifacts/screenshots and attach it to the test report. */
  async screenshot(name: string, target?: Locator): Promise<string> {
    fs.mkdirSync(SCREENSHOTS, { recursive: true });
    const file = path.join(SCREENSHOTS, `${name}.png`);
    // The pairing styles are applied on the next animation frame after a change.
    await this.page.evaluate(
      () =>
        new Promise(resolve =>
          requestAnimationFrame(() => requestAnimationFrame(resolve))
        )
    );
    if (target) {
      await target.screenshot({ path: file });
    } else {
      await this.page.screenshot({ path: file });
    }
    await this._testInfo.attach(name, { path: file, contentType: 'image/png' });
    return file;
  }
}

/** The AI Chat panel, opened through its command (as the palette does). */
export async function openChat(lab: Lab): Promise<Locator> {
  await lab.command('chapyter-ext:open-chat');
  const panel = lab.page.getByRole('region', { name: 'AI Chat' });
  await expect(panel).toBeVisible();
  return panel;
}

/** The answers (assistant messages) in the chat panel. */
export function chatAnswers(panel: Locator): Locator {
  return panel.locator('.jp-Chapyter-chatMessage.jp-mod-assistant');
}

/** Stop every kernel session, so the next test starts on a quiet machine. */
async function shutdownSessions(): Promise<void> {
  const sessions = (await jupyterApi('GET', '/api/sessions')) as {
    id: string;
  }[];
  await Promise.all(
    sessions.map(s => jupyterApi('DELETE', `/api/sessions/${s.id}`))
  );
}

/** Tests with a fresh fake model and JupyterLab already loaded in the page. */
export const test = base.extend<{ lab: Lab }>({
  lab: async ({ page }, use, testInfo) => {
    await model.reset();
    const lab = new Lab(page, testInfo);
    await lab.open();
    await use(lab);
    await shutdownSessions();
  }
});

export { expect };
