/**
 * The notebook side of an agent turn over JupyterLab ({@link INotebookDriver}): every step's
 * cell is inserted whole (one shared-model change, never half), run with
 * `NotebookActions.runCells` through the notebook's own session (so its outputs show like any
 * run, and remote kernels work: the server never runs code), and read back as nbformat
 * outputs, PNGs and the figure digests the kernel captured (`chapyter_ext.context.figures`).
 */

import { CodeCell, ICodeCellModel } from '@jupyterlab/cells';
import { NotebookActions, NotebookPanel } from '@jupyterlab/notebook';
import { Kernel } from '@jupyterlab/services';

import { cellNameIn } from '../cellNames';
import { outputImages, outputText, wireOutput } from '../common/cellOutputs';
import { readJSON, silentExecute } from '../common/kernelRead';
import { armGuard, kernelTrial, TrialOutcome } from '../common/kernelTrial';
import { agentCellMetadata, cellCode, METADATA_KEY } from '../contract';
import { INotebookDriver, IRunOutcome, IStepOrigin } from './tokens';

/** Registers the figure capture in the kernel (a post_execute hook placed first). */
const INSTALL_FIGURES =
  "__import__('chapyter_ext.context.figures', fromlist=['install']).install(get_ipython())";

/** Returns (and clears) the digests of the figures the last cell drew (application/json). */
const TAKE_FIGURES =
  "__import__('chapyter_ext.context.figures', fromlist=['take']).take()";

/** Outputs sent back per step (the server takes at most 200). */
const MAX_OUTPUTS = 200;

/** Characters of a read cell's text sent back (the server trims to its budget again). */
const MAX_READ_CHARS = 20_000;

/**
 * Before a step: install the figure capture (idempotent, so a restarted kernel gets it again)
 * and take what an earlier cell left, so the step's digests are its own.
 */
async function prepareFigures(kernel: Kernel.IKernelConnection): Promise<void> {
  try {
    await silentExecute(kernel, INSTALL_FIGURES, { stale: TAKE_FIGURES });
  } catch (error) {
    console.warn('chapyter-ext: could not install the figure capture', error);
  }
}

/** The figure digests the last cell drew; [] when the kernel cannot tell. */
async function takeFigures(
  kernel: Kernel.IKernelConnection
): Promise<{ [key: string]: unknown }[]> {
  const data = await readJSON(kernel, TAKE_FIGURES);
  return Array.isArray(data)
    ? data.filter(d => d && typeof d === 'object')
    : [];
}

/** The agent's view of one open notebook. */
export class NotebookDriver implements INotebookDriver {
  /** Drive `_panel`; `_activate` brings it to the front (for cell links). */
  constructor(
    private _panel: NotebookPanel,
    private _activate: (panel: NotebookPanel) => void = () => undefined
  ) {}

  cannotRun(): string | null {
    const panel = this._panel;
    if (panel.isDisposed || !panel.content.model) {
      return 'The notebook was closed.';
    }
    const kernel = panel.sessionContext.session?.kernel;
    if (!kernel || panel.sessionContext.hasNoKernel) {
      return 'The notebook has no kernel: choose one to let the agent run code.';
    }
    if (kernel.status === 'dead') {
      return "The notebook's kernel is dead: restart it.";
    }
    return null;
  }

  insert(code: string, origin: IStepOrigin, afterId: string | null): string {
    const notebook = this._panel.content;
    const model = notebook.model!;
    const after = afterId ? this._index(afterId) : -1;
    const index =
      after >= 0
        ? after + 1
        : notebook.activeCell
          ? notebook.activeCellIndex + 1
          : model.cells.length;
    const source = cellCode(code);
    model.sharedModel.insertCell(index, {
      cell_type: 'code',
      source,
      metadata: { [METADATA_KEY]: agentCellMetadata(source, origin) } as any
    });
    void notebook.scrollToItem(index, 'smart');
    return model.cells.get(index).id;
  }

  async run(cellId: string): Promise<IRunOutcome> {
    const panel = this._panel;
    const index = this._index(cellId);
    const cell = panel.content.widgets[index];
    const kernel = panel.sessionContext.session?.kernel;
    if (index < 0 || !(cell instanceof CodeCell)) {
      return { ran: false, reason: 'The cell was deleted before it ran.' };
    }
    if (!kernel) {
      return { ran: false, reason: 'The notebook has no kernel.' };
    }
    await prepareFigures(kernel);
    await NotebookActions.runCells(panel.content, [cell], panel.sessionContext);
    if (cell.isDisposed || this._index(cellId) < 0) {
      return { ran: false, reason: 'The cell was deleted while it ran.' };
    }
    const model = cell.model as ICodeCellModel;
    const outputs = (model.outputs.toJSON() as { [key: string]: any }[])
      .slice(0, MAX_OUTPUTS)
      .map(wireOutput);
    if (model.executionCount === null && !outputs.length) {
      return { ran: false, reason: 'The kernel did not run the cell.' };
    }
    const images = outputImages(outputs);
    const current = panel.sessionContext.session?.kernel;
    const figures = current ? await takeFigures(current).catch(() => []) : [];
    return {
      ran: true,
      result: {
        cell_id: cellId,
        execution_count: model.executionCount,
        outputs,
        figures,
        images
      }
    };
  }

  async readCell(ref: string): Promise<string> {
    const model = this._panel.content.model;
    const cells = model?.cells;
    if (!cells) {
      throw new Error('The notebook was closed.');
    }
    let index = this._index(ref);
    if (index < 0 && /^\d+$/.test(ref.trim())) {
      index = Number(ref.trim()) - 1;
    }
    if (index < 0 || index >= cells.length) {
      throw new Error(`No cell ${ref} in this notebook.`);
    }
    const cell = cells.get(index);
    const parts = [
      `Cell ${index + 1} (${cell.type}, id ${cell.id}):`,
      cell.sharedModel.getSource()
    ];
    if (cell.type === 'code') {
      const code = cell as ICodeCellModel;
      const outputs = code.outputs.toJSON() as { [key: string]: any }[];
      parts.push(
        outputs.length
          ? `Outputs (execution count ${code.executionCount ?? 'none'}):\n` +
              outputs.map(outputText).join('\n')
          : 'No outputs.'
      );
    }
    return parts.join('\n').slice(0, MAX_READ_CHARS);
  }

  async evaluate(expression: string): Promise<string> {
    const kernel = this._panel.sessionContext.session?.kernel;
    if (!kernel) {
      throw new Error('The notebook has no kernel.');
    }
    const text = ((await readJSON(kernel, expression)) as any)?.text;
    if (typeof text !== 'string') {
      throw new Error(
        'The kernel could not answer (is chapyter-ext installed in its environment?).'
      );
    }
    return text.slice(0, MAX_READ_CHARS);
  }

  async trial(expression: string): Promise<TrialOutcome> {
    const kernel = this._panel.sessionContext.session?.kernel;
    if (!kernel) {
      throw new Error('The notebook has no kernel.');
    }
    return kernelTrial(kernel, expression);
  }

  async arm(expression: string): Promise<boolean> {
    const kernel = this._panel.sessionContext.session?.kernel;
    return kernel ? armGuard(kernel, expression) : false;
  }

  async readJSON(expression: string): Promise<unknown> {
    const kernel = this._panel.sessionContext.session?.kernel;
    return kernel ? readJSON(kernel, expression) : null;
  }

  async interrupt(): Promise<void> {
    await this._panel.sessionContext.session?.kernel?.interrupt();
  }

  remove(cellIds: string[]): number {
    const model = this._panel.content.model;
    if (!model) {
      return 0;
    }
    const indices = cellIds
      .map(id => this._index(id))
      .filter(i => i >= 0)
      .sort((a, b) => b - a);
    // One transaction: one step of the notebook's undo history.
    model.sharedModel.transact(() => {
      for (const index of indices) {
        model.sharedModel.deleteCell(index);
      }
    });
    return indices.length;
  }

  has(cellId: string): boolean {
    return this._index(cellId) >= 0;
  }

  name(cellId: string): string {
    const index = this._index(cellId);
    const cells = this._panel.content.widgets.map(cell => cell.model);
    return index < 0 ? '' : cellNameIn(cells, index);
  }

  reveal(cellId: string): void {
    const notebook = this._panel.content;
    const index = this._index(cellId);
    if (index < 0) {
      return;
    }
    this._activate(this._panel);
    notebook.activeCellIndex = index;
    notebook.deselectAll();
    void notebook.scrollToItem(index, 'center');
  }

  private _index(cellId: string): number {
    const cells = this._panel.content.model?.cells;
    if (!cells || !cellId) {
      return -1;
    }
    for (let i = 0; i < cells.length; i++) {
      if (cells.get(i).id === cellId) {
        return i;
      }
    }
    return -1;
  }
}
