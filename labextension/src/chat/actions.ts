/**
 * What the buttons under a code block in the chat do to the active notebook: insert the code
 * in a new cell below the active cell (with `chapyter` provenance, like a `%%ai` cell), run
 * it, or copy it.
 */

import { Clipboard, showErrorMessage } from '@jupyterlab/apputils';
import { INotebookTracker, NotebookActions } from '@jupyterlab/notebook';

import {
  cellCode,
  chatCellMetadata,
  IChatCodeOrigin,
  METADATA_KEY
} from '../contract';

/** Acts on the tracker's current notebook. */
export class CodeActions {
  /** Act on the notebooks of `tracker`. */
  constructor(private _tracker: INotebookTracker) {}

  /** Whether there is a notebook to insert into. */
  get canInsert(): boolean {
    return !!this._tracker.currentWidget?.content.model;
  }

  /**
   * Insert `code` in a new cell below the active cell of the current notebook and, if `run`,
   * run it. Returns the new cell's id, or null when no notebook is open.
   */
  async insert(
    code: string,
    origin: IChatCodeOrigin,
    run: boolean
  ): Promise<string | null> {
    const panel = this._tracker.currentWidget;
    const notebook = panel?.content;
    const model = notebook?.model;
    if (!panel || !notebook || !model) {
      await showErrorMessage(
        'No notebook',
        'Open a notebook (or click into one) to insert the code there.'
      );
      return null;
    }
    const source = cellCode(code);
    const index = notebook.activeCell
      ? notebook.activeCellIndex + 1
      : model.cells.length;
    const metadata: { [key: string]: any } = {
      [METADATA_KEY]: chatCellMetadata(source, origin)
    };
    model.sharedModel.insertCell(index, {
      cell_type: 'code',
      source,
      metadata
    });
    notebook.activeCellIndex = index;
    notebook.deselectAll();
    const cell = notebook.widgets[index];
    void notebook.scrollToItem(index, 'smart');
    if (run && cell) {
      await NotebookActions.runCells(notebook, [cell], panel.sessionContext);
    }
    return cell?.model.id ?? null;
  }

  /** Put `code` on the system clipboard. */
  copy(code: string): void {
    Clipboard.copyToSystem(cellCode(code));
  }
}
