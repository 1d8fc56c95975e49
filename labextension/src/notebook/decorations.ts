/**
 * Makes prompt cells and their generated cells visibly paired: CSS classes on the cell
 * widgets, kept in step with the notebook's cells and metadata.
 */

import { Cell } from '@jupyterlab/cells';
import { NotebookPanel } from '@jupyterlab/notebook';

import {
  findGeneratedIndex,
  isEdited,
  isGeneratedCell,
  isPromptCell,
  isUpToDate
} from '../contract';
import { cellViews } from './cells';

/** CSS classes of paired cells. */
export namespace PairClasses {
  /** A `%%ai` prompt cell. */
  export const prompt = 'jp-Chapyter-prompt';
  /** A cell generated from a prompt or inserted from the chat. */
  export const generated = 'jp-Chapyter-generated';
  /** A generated cell whose prompt changed since it was generated. */
  export const stale = 'jp-Chapyter-stale';
  /** A generated cell edited by hand. */
  export const edited = 'jp-Chapyter-edited';
}

const ALL = Object.values(PairClasses);

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
    if (!notebook.model || notebook.isDisposed) {
      return;
    }
    const views = cellViews(notebook.model);
    const classes: string[][] = views.map(() => []);
    views.forEach((view, index) => {
      if (isPromptCell(view)) {
        classes[index].push(PairClasses.prompt);
        const generated = findGeneratedIndex(views, index);
        if (generated >= 0 && !isUpToDate(view, views[generated])) {
          classes[generated].push(PairClasses.stale);
        }
      } else if (isGeneratedCell(view)) {
        classes[index].push(PairClasses.generated);
        if (isEdited(view)) {
          classes[index].push(PairClasses.edited);
        }
      }
    });
    notebook.widgets.forEach((cell: Cell, index: number) => {
      const wanted = new Set(classes[index] ?? []);
      for (const name of ALL) {
        cell.toggleClass(name, wanted.has(name));
      }
    });
  }

  private _frame = 0;
}
