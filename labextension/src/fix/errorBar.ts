/**
 * Fix and Explain by every error output: a small bar inserted after the outputs of each code
 * cell whose outputs hold an error, kept in step as outputs change.
 */

import { Cell, CodeCell } from '@jupyterlab/cells';
import { NotebookPanel } from '@jupyterlab/notebook';
import { LabIcon } from '@jupyterlab/ui-components';
import { PanelLayout, Widget } from '@lumino/widgets';

import { button, element } from '../common/dom';
import { IErrorInfo } from './logic';

/** What the bar's buttons do, for the cell they sit in. */
export interface IErrorBarHandlers {
  /** Ask for a fix of `cell`. */
  fix(panel: NotebookPanel, cell: CodeCell): void;
  /** Explain `cell`'s error in the chat. */
  explain(panel: NotebookPanel, cell: CodeCell): void;
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

/** The bar under one failing cell. */
export class ErrorBar extends Widget {
  /** A bar of Fix / Explain with a line for status and failures. */
  constructor(onFix: () => void, onExplain: () => void, icons: LabIcon[]) {
    super();
    this.addClass('jp-Chapyter-errorActions');
    this.node.setAttribute('role', 'group');
    this.node.setAttribute('aria-label', 'AI actions for this error');
    const fix = button(
      'jp-Chapyter-errorFix',
      'Fix',
      'Fix',
      icons[0] ?? null,
      'Ask the model for a corrected version of this cell'
    );
    const explain = button(
      'jp-Chapyter-errorExplain',
      'Explain',
      'Explain',
      icons[1] ?? null,
      'Explain this error in the AI Chat'
    );
    fix.addEventListener('click', onFix);
    explain.addEventListener('click', onExplain);
    this._status = element('span', 'jp-Chapyter-errorStatus', {
      role: 'status'
    });
    this.node.append(fix, explain, this._status);
  }

  /** Show one line next to the buttons (empty: nothing). */
  setStatus(text: string, failed = false): void {
    this._status.textContent = text;
    this._status.classList.toggle('jp-mod-error', failed);
  }

  private _status: HTMLElement;
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
    const failing = cellError(cell) !== null;
    const bar = bars.get(cell);
    if (failing && !bar) {
      const created = new ErrorBar(
        () => handlers.fix(panel, cell),
        () => handlers.explain(panel, cell),
        icons
      );
      const layout = cell.layout as PanelLayout;
      const outputs = cell.outputArea.parent;
      const at = outputs ? layout.widgets.indexOf(outputs) : -1;
      layout.insertWidget(at >= 0 ? at + 1 : layout.widgets.length, created);
      bars.set(cell, created);
    } else if (!failing && bar) {
      bar.dispose();
      bars.delete(cell);
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
