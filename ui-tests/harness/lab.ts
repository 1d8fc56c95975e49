/**
 * JupyterLab in one page: loaded, its notebooks opened with their kernels idle, cells read and
 * run by id (never "the last cell"), screenshots.
 *
 * Page-side code reads JupyterLab's own models through `window.jupyterapp`
 * (`--LabApp.expose_app_in_browser`), so the checks are about what the notebook holds, and
 * the screenshots about what a person sees.
 */

import { expect, Locator, Page, TestInfo } from '@playwright/test';
import * as fs from 'fs';
import * as path from 'path';

import { ICellInfo, IPair, pairOf, ran } from './cells';
import {
  createNotebook,
  ICellSpec,
  jupyterApi,
  LOAD_EXT,
  runLab
} from './jupyter';
import { ILabServer } from './servers';
import { ARTIFACTS } from './run';

/** Screenshots a person should look at, one folder for the whole run. */
export const SCREENSHOTS = path.join(ARTIFACTS, 'screenshots');

/** JupyterLab in one page, with helpers over its notebooks. */
export class Lab {
  constructor(
    readonly page: Page,
    private readonly _testInfo: TestInfo,
    /** The server it shows: the run's JupyterLab, or one a spec started. */
    readonly server: ILabServer = runLab()
  ) {}

  /** A call to this JupyterLab's REST API. */
  api(method: string, route: string, body?: unknown): Promise<any> {
    return jupyterApi(method, route, body, this.server);
  }

  /** Load `route` (with the token) and wait until JupyterLab has started. */
  async goto(route: string): Promise<void> {
    const sep = route.includes('?') ? '&' : '?';
    await this.page.goto(
      `${this.server.url}${route}${sep}token=${this.server.token}`
    );
    await this._started();
  }

  /**
   * Load JupyterLab and wait until it has started and restored its layout. Each test has a
   * workspace of its own, so no notebook (and kernel) of an earlier test is restored.
   */
  async open(): Promise<void> {
    const workspace = `t${this._testInfo.testId}`.replace(
      /[^a-zA-Z0-9-]/g,
      '-'
    );
    await this.goto(`/lab/workspaces/${workspace}`);
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

  /** A new notebook of code cells (see `createNotebook`), opened with its kernel idle. */
  async newNotebook(name: string, cells: ICellSpec[]): Promise<string> {
    const file = await createNotebook(name, cells, this.server);
    await this.openNotebook(file);
    return file;
  }

  /**
   * A new notebook whose first cell (`load`) is `%load_ext chapyter_ext`, then `cells`:
   * opened, and the extension loaded (that cell run and finished).
   */
  async aiNotebook(name: string, cells: ICellSpec[]): Promise<string> {
    const file = await this.newNotebook(name, [
      { id: 'load', source: LOAD_EXT },
      ...cells
    ]);
    await this.runCell(file, 'load');
    await this.waitForCells(
      file,
      cells => ran(cells.find(c => c.id === 'load')),
      'the extension loaded'
    );
    return file;
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

  /** Replace a cell's source, as typing it would (through the shared model). */
  async setSource(file: string, id: string, source: string): Promise<void> {
    await this.page.evaluate(
      ({ file, id, source }) => {
        const app = (window as any).jupyterapp;
        const panel = Array.from(app.shell.widgets('main')).find(
          (w: any) => w.context?.path === file
        ) as any;
        const cell = panel.content.widgets.find((w: any) => w.model.id === id);
        cell.model.sharedModel.setSource(source);
      },
      { file, id, source }
    );
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

  /** Poll the notebook's cells until `check` holds; the cells that passed. */
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

  /**
   * Poll until `check` holds of the prompt cell `promptId` and the cell below it (see
   * `pairOf`); that pair.
   */
  async waitForPair(
    file: string,
    check: (pair: IPair) => boolean,
    message: string,
    { timeout = 120_000, promptId = 'prompt' } = {}
  ): Promise<IPair> {
    const cells = await this.waitForCells(
      file,
      cells => check(pairOf(cells, promptId)),
      message,
      timeout
    );
    return pairOf(cells, promptId);
  }

  /** Stop every kernel session of this JupyterLab, so the next test starts on a quiet machine. */
  async shutdownSessions(): Promise<void> {
    const sessions = (await this.api('GET', '/api/sessions')) as {
      id: string;
    }[];
    await Promise.all(
      sessions.map(s => this.api('DELETE', `/api/sessions/${s.id}`))
    );
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
