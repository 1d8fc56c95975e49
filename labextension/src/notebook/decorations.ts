/**
 * Makes prompt cells and their generated cells visibly paired: CSS classes on the cell
 * widgets, kept in step with the notebook's cells, metadata and runs (the rules are in
 * `pairClasses.ts`).
 */

import { Cell, ICellModel, ICodeCellModel } from '@jupyterlab/cells';
import { NotebookPanel } from '@jupyterlab/notebook';

import { cellViews } from './cells';
import { isAnswering, IRunView, PairClasses, pairClasses } from './pairClasses';

export { PairClasses } from './pairClasses';

const ALL = Object.values(PairClasses);

/** What {@link isAnswering} reads of a cell model (null for non-code cells). */
function runView(model: ICellModel): IRunView | null {
  if (model.type !== 'code') {
    return null;
  }
  const code = model as ICodeCellModel;
  const outputs: { [mime: string]: unknown }[] = [];
  for (let i = 0; i < code.outputs.length; i++) {
    outputs.push(code.outputs.get(i).data as { [mime: string]: unknown });
  }
  return { executionState: code.executionState, outputs };
}

/** Keeps the pairing classes of one notebook panel up to date. */
export class PairDecorator {
  constructor(private _panel: NotebookPanel) {
    const model = _panel.content.model;
    model?.cells.changed.connect(this._schedule, this);
    model?.contentChanged.connect(this._schedule, this);
    _panel.content.modelContentChanged.connect(this._schedule, this);
    _panel.disposed.connect(() => cancelAnimationFrame(this._frame));
    this._schedule();
  }

  private _schedule(): void {
    cancelAnimationFrame(this._frame);
    this._frame = requestAnimationFrame(() => this.update());
  }

  /** Recompute every cell's classes now. */
  update(): void {
    const notebook = this._panel.content;
    const model = notebook.model;
    if (!model || notebook.isDisposed) {
      return;
    }
    const classes = pairClasses(cellViews(model), index =>
      isAnswering(runView(model.cells.get(index)))
    );
    notebook.widgets.forEach((cell: Cell, index: number) => {
      const wanted = new Set(classes[index] ?? []);
      for (const name of ALL) {
        cell.toggleClass(name, wanted.has(name));
      }
    });
  }

  private _frame = 0;
}
