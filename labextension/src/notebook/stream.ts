/**
 * Streaming into the generated cell: the code appears there while the model writes it, read
 * from the progress the kernel displays in the prompt cell.
 */

import { ICellModel, ICodeCellModel } from '@jupyterlab/cells';
import { INotebookModel } from '@jupyterlab/notebook';

import {
  findGeneratedIndex,
  isEdited,
  METADATA_KEY,
  PROGRESS_MIME,
  SCHEMA_VERSION
} from '../contract';
import { partialCode } from '../common/fences';
import { cellView, cellViews, indexOfModel } from './cells';

/**
 * Shows the code in the generated cell while the model writes it, from the progress the
 * kernel displays in the prompt cell; `undo` puts everything back if the generation fails.
 */
export class StreamIntoCell {
  constructor(
    private _notebook: INotebookModel,
    private _prompt: ICellModel
  ) {
    (this._prompt as ICodeCellModel).outputs.changed.connect(
      this._onOutputs,
      this
    );
  }

  /** The cell being written into, once the first code arrived. */
  target: ICellModel | null = null;
  /** Its source before streaming began (null if the cell was inserted for the stream). */
  originalSource: string | null = null;
  private _inserted = false;

  private _onOutputs(): void {
    const outputs = (this._prompt as ICodeCellModel).outputs;
    for (let i = 0; i < outputs.length; i++) {
      const data = outputs.get(i).data[PROGRESS_MIME] as any;
      if (data && typeof data.text === 'string' && data.state === 'streaming') {
        this._show(partialCode(data.text));
      }
    }
  }

  private _show(code: string): void {
    if (!code) {
      return;
    }
    if (!this.target) {
      const promptIndex = indexOfModel(this._notebook, this._prompt);
      if (promptIndex < 0) {
        return;
      }
      const index = findGeneratedIndex(cellViews(this._notebook), promptIndex);
      if (index >= 0) {
        this.target = this._notebook.cells.get(index);
        this.originalSource = this.target.sharedModel.getSource();
        if (isEdited({ ...cellView(this.target) })) {
          // Never touch hand-edited code before the user agreed to replace it.
          this.dispose();
          this.target = null;
          this.originalSource = null;
          return;
        }
      } else {
        // Linked from the start, so the cell shows as generated while the code streams in.
        this._notebook.sharedModel.insertCell(promptIndex + 1, {
          cell_type: 'code',
          source: '',
          metadata: {
            [METADATA_KEY]: {
              schema: SCHEMA_VERSION,
              role: 'generated',
              source: 'magic',
              generated_from: this._prompt.id
            }
          }
        });
        this.target = this._notebook.cells.get(promptIndex + 1);
        this._inserted = true;
      }
    }
    this.target.sharedModel.setSource(code);
  }

  /** Stop following the prompt's outputs. */
  dispose(): void {
    (this._prompt as ICodeCellModel).outputs.changed.disconnect(
      this._onOutputs,
      this
    );
  }

  /** Remove what streaming wrote: the inserted cell, or the replaced text. */
  undo(): void {
    this.dispose();
    if (!this.target) {
      return;
    }
    if (this._inserted) {
      const index = indexOfModel(this._notebook, this.target);
      if (index >= 0) {
        this._notebook.sharedModel.deleteCell(index);
      }
    } else if (this.originalSource !== null) {
      this.target.sharedModel.setSource(this.originalSource);
    }
    this.target = null;
    this.originalSource = null;
  }
}
