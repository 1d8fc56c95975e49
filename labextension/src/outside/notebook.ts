/**
 * The open notebooks as an outside agent's calls use them ({@link IOutsideNotebooks}): cells
 * read from the document's model, a new cell inserted whole through the shared model with
 * the provenance naming the client, run with `NotebookActions.runCells` through the
 * notebook's own session (remote kernels work: the server never runs code), variables read
 * silently as the chat reads them, trials, guards and Undo's snapshots through the kernel.
 */

import { CodeCell, ICodeCellModel } from '@jupyterlab/cells';
import {
  INotebookTracker,
  NotebookActions,
  NotebookPanel
} from '@jupyterlab/notebook';

import { cellNameIn } from '../cellNames';
import { wireOutput } from '../common/cellOutputs';
import { readJSON } from '../common/kernelRead';
import { armGuard, kernelTrial, TrialOutcome } from '../common/kernelTrial';
import {
  IRestoreAnswer,
  ITakeAnswer,
  KernelUndo,
  NO_UNDO_IN_KERNEL
} from '../common/kernelUndo';
import { cellCode, METADATA_KEY } from '../contract';
import type { IOutsideNotebook, IOutsideNotebooks, RunOutcome } from './calls';
import {
  cellRange,
  cellResult,
  IReadCell,
  outsideCellMetadata,
  readCell,
  variablesOf
} from './wire';

/** Outputs read back per cell. */
const MAX_OUTPUTS = 200;

/** One open notebook panel. */
export class PanelNotebook implements IOutsideNotebook {
  /** Over `_panel`. */
  constructor(private _panel: NotebookPanel) {}

  get path(): string {
    return this._panel.context.path;
  }

  cannotRun(): string | null {
    const panel = this._panel;
    if (panel.isDisposed || !panel.content.model) {
      return 'The notebook was closed.';
    }
    const kernel = panel.sessionContext.session?.kernel;
    if (!kernel || panel.sessionContext.hasNoKernel) {
      return 'The notebook has no kernel: choose one in JupyterLab.';
    }
    return kernel.status === 'dead'
      ? "The notebook's kernel is dead: restart it."
      : null;
  }

  describe(): { path: string; kernel: string; cells: number } {
    return {
      path: this.path,
      kernel: this._panel.sessionContext.kernelDisplayName ?? '',
      cells: this._panel.content.model?.cells.length ?? 0
    };
  }

  cells(start: unknown, end: unknown): IReadCell[] {
    const cells = this._panel.content.model?.cells;
    if (!cells) {
      return [];
    }
    const [from, to] = cellRange(cells.length, start, end);
    const read: IReadCell[] = [];
    for (let i = from; i < to; i++) {
      const cell = cells.get(i);
      const code = cell.type === 'code' ? (cell as ICodeCellModel) : null;
      read.push(
        readCell(
          cell.id,
          i,
          cell.type,
          cell.sharedModel.getSource(),
          code?.executionCount ?? null,
          code
            ? (code.outputs.toJSON() as { [key: string]: any }[]).slice(
                0,
                MAX_OUTPUTS
              )
            : []
        )
      );
    }
    return read;
  }

  async variables(
    names?: string[]
  ): Promise<{ [key: string]: unknown }[] | null> {
    const kernel = this._panel.sessionContext.session?.kernel;
    const data = kernel ? await readJSON(kernel, variablesOf(names)) : null;
    return Array.isArray(data)
      ? data.filter(v => v && typeof v.name === 'string')
      : null;
  }

  source(cellId: string): { source: string; name: string } | null {
    const index = this._index(cellId);
    if (index < 0) {
      return null;
    }
    const models = this._panel.content.widgets.map(cell => cell.model);
    return {
      source: models[index].sharedModel.getSource(),
      name: cellNameIn(models, index)
    };
  }

  insert(
    code: string,
    client: string,
    callId: string,
    belowId: string
  ): string {
    const model = this._panel.content.model!;
    const below = belowId ? this._index(belowId) : -1;
    const index = below >= 0 ? below + 1 : model.cells.length;
    const source = cellCode(code);
    model.sharedModel.insertCell(index, {
      cell_type: 'code',
      source,
      metadata: {
        [METADATA_KEY]: outsideCellMetadata(source, client, callId)
      } as any
    });
    void this._panel.content.scrollToItem(index, 'smart');
    return model.cells.get(index).id;
  }

  setSource(cellId: string, source: string): void {
    const index = this._index(cellId);
    if (index < 0) {
      throw new Error(`No cell ${cellId} in ${this.path}.`);
    }
    // One change of the shared model: one step of the notebook's undo history.
    this._panel.content.model!.cells.get(index).sharedModel.setSource(source);
  }

  async run(cellId: string): Promise<RunOutcome> {
    const panel = this._panel;
    const index = this._index(cellId);
    const cell = panel.content.widgets[index];
    if (index < 0 || !(cell instanceof CodeCell)) {
      return { ran: false, reason: 'The cell is gone or is not a code cell.' };
    }
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
    return {
      ran: true,
      result: cellResult(cellId, model.executionCount, outputs)
    };
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
    model.sharedModel.transact(() => {
      for (const index of indices) {
        model.sharedModel.deleteCell(index);
      }
    });
    return indices.length;
  }

  async trial(expression: string): Promise<TrialOutcome> {
    const kernel = this._panel.sessionContext.session?.kernel;
    if (!kernel) {
      throw new Error('The notebook has no kernel.');
    }
    return kernelTrial(kernel, expression);
  }

  async arm(guard: string): Promise<boolean> {
    const kernel = this._panel.sessionContext.session?.kernel;
    return kernel ? armGuard(kernel, guard) : false;
  }

  async interrupt(): Promise<void> {
    await this._panel.sessionContext.session?.kernel?.interrupt();
  }

  take(turn: string): Promise<ITakeAnswer> {
    return this._undo()?.take(turn, 0) ?? noUndo();
  }

  async restore(turn: string): Promise<IRestoreAnswer> {
    const undo = this._undo();
    if (!undo) {
      return {
        ok: false,
        restored: [],
        removed: [],
        cannot: [],
        line: 'The variables stay as they are: the notebook has no kernel.'
      };
    }
    const answer = await undo.restore(turn, 0);
    await undo.release(turn);
    return answer;
  }

  private _undo(): KernelUndo | null {
    const kernel = this._panel.sessionContext.session?.kernel;
    return kernel ? new KernelUndo(expr => readJSON(kernel, expr)) : null;
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

function noUndo(): Promise<ITakeAnswer> {
  return Promise.resolve({ ok: false, why: NO_UNDO_IN_KERNEL });
}

/** The notebooks the tracker has open, found by contents path. */
export class TrackedNotebooks implements IOutsideNotebooks {
  /** Over `_tracker`. */
  constructor(private _tracker: INotebookTracker) {}

  find(path: string): IOutsideNotebook | null {
    const want = path.replace(/^\/+/, '');
    const panel = this._tracker.find(
      p => !p.isDisposed && p.context.path === want
    );
    return panel ? new PanelNotebook(panel) : null;
  }

  all(): IOutsideNotebook[] {
    const found: IOutsideNotebook[] = [];
    this._tracker.forEach(panel => {
      if (!panel.isDisposed) {
        found.push(new PanelNotebook(panel));
      }
    });
    return found;
  }
}
