/**
 * Fix and Explain by every error output: a small bar inserted after the outputs of each code
 * cell whose outputs hold an error, kept in step as outputs change. chapyter-ext's own
 * failure line (a `%%ai` whose model call failed) gets "Ask again" instead.
 */

import { Cell, CodeCell } from '@jupyterlab/cells';
import { NotebookPanel } from '@jupyterlab/notebook';
import { LabIcon } from '@jupyterlab/ui-components';
import { PanelLayout } from '@lumino/widgets';

import { ErrorBar, errorBarKind } from './errorBarView';
import { IErrorInfo } from './logic';

export { ErrorBar, errorBarKind } from './errorBarView';

/** What the bar's buttons do, for the cell they sit in. */
export interface IErrorBarHandlers {
  /** Ask for a fix of `cell`. */
  fix(panel: NotebookPanel, cell: CodeCell): void;
  /** Explain `cell`'s error in the chat. */
  explain(panel: NotebookPanel, cell: CodeCell): void;
  /** Run `cell` (a `%%ai` cell whose model call failed) again. */
  askAgain(panel: NotebookPanel, cell: CodeCell): void;
}

/** The last error output of a cell, if any. */
export function cellError(cell: Cell): IErrorInfo | null {
  if (!(cell instanceof CodeCell)) {
    return null;
  }
  const outputs = cell.model.outputs;
  for (let i = outputs.length - 1; i >= 0; i--) {
    const output = outputs.get(i).toJSON();
    if (output.output_type === 'error') {
      return {
        ename: String(output.ename ?? ''),
        evalue: String(output.evalue ?? ''),
        traceback: Array.isArray(output.traceback)
          ? output.traceback.map(String)
          : []
      };
    }
  }
  return null;
}

const bars = new WeakMap<Cell, ErrorBar>();

/** The bar of a cell, if it shows one. */
export function errorBarOf(cell: Cell): ErrorBar | null {
  return bars.get(cell) ?? null;
}

/** Keep an error bar under every failing code cell of `panel`. */
export function followErrors(
  panel: NotebookPanel,
  handlers: IErrorBarHandlers,
  icons: LabIcon[]
): void {
  const followed = new WeakSet<Cell>();
  const update = (cell: CodeCell) => {
    if (cell.isDisposed) {
      return;
    }
    const error = cellError(cell);
    const kind = error ? errorBarKind(error) : null;
    let bar = bars.get(cell);
    if (bar && bar.kind !== kind) {
      bar.dispose();
      bars.delete(cell);
      bar = undefined;
    }
    if (kind && !bar) {
      const created = new ErrorBar(
        kind,
        {
          fix: () => handlers.fix(panel, cell),
          explain: () => handlers.explain(panel, cell),
          askAgain: () => handlers.askAgain(panel, cell)
        },
        icons
      );
      const layout = cell.layout as PanelLayout;
      const outputs = cell.outputArea.parent;
      const at = outputs ? layout.widgets.indexOf(outputs) : -1;
      layout.insertWidget(at >= 0 ? at + 1 : layout.widgets.length, created);
      bars.set(cell, created);
    }
  };
  const follow = () => {
    for (const cell of panel.content.widgets) {
      if (!(cell instanceof CodeCell) || followed.has(cell)) {
        continue;
      }
      followed.add(cell);
      void cell.ready.then(() => {
        update(cell);
        cell.model.outputs.changed.connect(() => update(cell));
      });
    }
  };
  follow();
  panel.content.model?.cells.changed.connect(() => setTimeout(follow, 0));
}
