/**
 * The notebook cell executor that gives `%%ai` cells their behaviour in JupyterLab.
 *
 * It replaces JupyterLab's default executor (same token, registered later, so it wins) and
 * delegates every ordinary cell to the default `runCell`. For a prompt cell it runs the
 * magic in the kernel, reads the generated code from the execute reply's `set_next_input`
 * payload, puts it into the linked cell below (inserting or replacing), and runs that cell.
 *
 * Ordering: JupyterLab's Run All hands every cell to the executor at once. Cells after a
 * prompt cell wait until the prompt and its generated cell have run, so each generated cell
 * runs after its prompt and before the next cell, in notebook order.
 */

import { Dialog, showDialog } from '@jupyterlab/apputils';
import { Cell, CodeCell, ICellModel, ICodeCellModel } from '@jupyterlab/cells';
import {
  INotebookCellExecutor,
  INotebookModel,
  INotebookTracker,
  KernelError,
  Notebook,
  runCell as defaultRunCell
} from '@jupyterlab/notebook';
import { KernelMessage } from '@jupyterlab/services';

import {
  DEFAULT_NOTEBOOK_SETTINGS,
  IGeneratedMetadata,
  IGenerationPayload,
  INotebookSettings,
  FRONTEND_MARKER,
  METADATA_KEY,
  PROGRESS_MIME,
  SCHEMA_VERSION
} from '../tokens';
import {
  findGeneratedIndex,
  generatedMetadata,
  ICellView,
  isEdited,
  isUpToDate,
  promptMetadata
} from './links';
import { parsePrompt, partialCode } from './prompt';
import { IBatch, RunQueue } from './queue';

/** A view of a cell model for the link logic. */
export function cellView(model: ICellModel): ICellView {
  return {
    id: model.id,
    type: model.type,
    source: model.sharedModel.getSource(),
    chapyter: model.getMetadata(METADATA_KEY) ?? null
  };
}

/** All cells of a notebook model as views. */
export function cellViews(notebook: INotebookModel): ICellView[] {
  const views: ICellView[] = [];
  for (let i = 0; i < notebook.cells.length; i++) {
    views.push(cellView(notebook.cells.get(i)));
  }
  return views;
}

function indexOfModel(notebook: INotebookModel, model: ICellModel): number {
  for (let i = 0; i < notebook.cells.length; i++) {
    if (notebook.cells.get(i) === model) {
      return i;
    }
  }
  return -1;
}

/** Runs prompt cells and their generated cells; every other cell as JupyterLab would. */
export class PromptCellExecutor implements INotebookCellExecutor {
  /** Needed to reach cell widgets; set by the notebook plugin once the tracker exists. */
  tracker: INotebookTracker | null = null;

  /** Current user settings. */
  settings: INotebookSettings = { ...DEFAULT_NOTEBOOK_SETTINGS };

  /** Execute a cell (the `INotebookCellExecutor` entry point). */
  runCell(options: INotebookCellExecutor.IRunCellOptions): Promise<boolean> {
    const { cell, notebook } = options;
    const batch = this._queue.join(notebook, cell.model.id);
    const isPrompt =
      cell.model.type === 'code' &&
      parsePrompt(cell.model.sharedModel.getSource()) !== null;
    return this._queue.schedule(
      notebook,
      batch,
      () =>
        isPrompt ? this._runPrompt(options, batch) : defaultRunCell(options),
      () => this._skip(cell),
      isPrompt
    );
  }

  /** Ask the model again for a prompt cell, even when its generated cell is up to date. */
  forceRegenerate(promptId: string): void {
    this._forced.add(promptId);
  }

  private _skip(cell: Cell): boolean {
    if (cell.model.type === 'code') {
      (cell.model as ICodeCellModel).executionState = 'idle';
    }
    return false;
  }

  private _notebookWidget(notebook: INotebookModel): Notebook | null {
    const panel = this.tracker?.find(p => p.content.model === notebook);
    return panel ? panel.content : null;
  }

  private _cellWidget(
    notebook: INotebookModel,
    model: ICellModel
  ): Cell | null {
    const widget = this._notebookWidget(notebook);
    return widget?.widgets.find(w => w.model === model) ?? null;
  }

  private async _runPrompt(
    options: INotebookCellExecutor.IRunCellOptions,
    batch: IBatch
  ): Promise<boolean> {
    // Run All hands the cells after this one over in the same synchronous loop: let it
    // finish, so that `batch` holds them all before deciding. Otherwise an up-to-date first
    // prompt ran its generated cell itself and again in its own turn, and a prompt first in
    // a Run All counted as run alone (asking the model again).
    await Promise.resolve();
    const { cell, notebook, sessionContext } = options;
    const parsed = parsePrompt(cell.model.sharedModel.getSource())!;
    const views = cellViews(notebook);
    const promptIndex = indexOfModel(notebook, cell.model);
    const generatedIndex = findGeneratedIndex(views, promptIndex);
    const forced = this._forced.delete(cell.model.id);
    const explicit =
      forced || batch.cellIds.size === 1 || parsed.flags.has('--regenerate');

    if (
      !explicit &&
      generatedIndex >= 0 &&
      isUpToDate(views[promptIndex], views[generatedIndex])
    ) {
      return this._replay(options, batch, notebook.cells.get(generatedIndex));
    }
    if (
      !sessionContext ||
      sessionContext.hasNoKernel ||
      sessionContext.isTerminating ||
      sessionContext.pendingInput
    ) {
      // JupyterLab's own executor knows how to explain these states to the user.
      return defaultRunCell(options);
    }

    const stream = this.settings.streamIntoCell
      ? new StreamIntoCell(notebook, cell.model)
      : null;
    options.onCellExecutionScheduled({ cell });
    const deletedCells = notebook.deletedCells;
    let reply: KernelMessage.IExecuteReplyMsg | void;
    try {
      reply = await CodeCell.execute(cell as CodeCell, sessionContext, {
        deletedCells,
        recordTiming: options.notebookConfig.recordTiming,
        // Tells the kernel that this frontend inserts, links and runs the code itself.
        [FRONTEND_MARKER]: { version: 1 }
      });
      deletedCells.splice(0, deletedCells.length);
    } catch (reason) {
      stream?.undo();
      if (cell.isDisposed || (reason as Error).message.startsWith('Canceled')) {
        return false;
      }
      options.onCellExecuted({
        cell,
        success: false,
        error: reason as KernelError
      });
      throw reason;
    } finally {
      stream?.dispose();
    }
    if (cell.isDisposed) {
      stream?.undo();
      return false;
    }
    if (!reply) {
      stream?.undo();
      return true;
    }
    if (reply.content.status !== 'ok') {
      // Nothing generated: no half-inserted cell, the previous code stays.
      stream?.undo();
      const error = new KernelError(reply.content);
      options.onCellExecuted({ cell, success: false, error });
      throw error;
    }
    const generation = readPayload(reply.content);
    if (!generation) {
      stream?.undo();
      options.onCellExecuted({ cell, success: true });
      return true;
    }
    const generated = await this._upsertGenerated(
      notebook,
      cell.model,
      generation,
      stream
    );
    options.onCellExecuted({ cell, success: true });
    if (!generated) {
      return true;
    }
    const wantsRun =
      generation.run &&
      this.settings.autoRun &&
      !this.settings.reviewBeforeRunning;
    if (!wantsRun) {
      this._select(notebook, generated);
      return true;
    }
    if (batch.cellIds.has(generated.id)) {
      // Run All includes the generated cell: it runs in its own turn, right after this one.
      return true;
    }
    const widget = this._cellWidget(notebook, generated);
    if (!widget) {
      return true;
    }
    return defaultRunCell({ ...options, cell: widget });
  }

  private async _replay(
    options: INotebookCellExecutor.IRunCellOptions,
    batch: IBatch,
    generated: ICellModel
  ): Promise<boolean> {
    const { cell } = options;
    const model = cell.model as ICodeCellModel;
    // Not in a shared-model transaction: the outputs model mirrors the transaction's delta
    // once it ends, and that removed the note just added (it never showed).
    model.outputs.clear();
    model.outputs.add({
      output_type: 'stream',
      name: 'stdout',
      text:
        '↻ Up to date: replaying the generated cell below without asking the model ' +
        '(Regenerate, or Shift+Enter on this cell alone, asks again).\n'
    });
    model.executionCount = null;
    options.onCellExecuted({ cell, success: true });
    if (batch.cellIds.has(generated.id)) {
      return true;
    }
    const widget = this._cellWidget(options.notebook, generated);
    return widget ? defaultRunCell({ ...options, cell: widget }) : true;
  }

  private async _upsertGenerated(
    notebook: INotebookModel,
    prompt: ICellModel,
    generation: IGenerationPayload & { code: string },
    stream: StreamIntoCell | null
  ): Promise<ICellModel | null> {
    const code = generation.code;
    const promptIndex = indexOfModel(notebook, prompt);
    if (promptIndex < 0) {
      stream?.undo();
      return null;
    }
    const views = cellViews(notebook);
    const index = stream?.target
      ? indexOfModel(notebook, stream.target)
      : findGeneratedIndex(views, promptIndex);
    const metadata = generatedMetadata(generation.metadata, prompt.id);
    if (index < 0) {
      notebook.sharedModel.insertCell(promptIndex + 1, {
        cell_type: 'code',
        source: code,
        metadata: this._cellMetadata(metadata)
      });
      const inserted = notebook.cells.get(promptIndex + 1);
      prompt.setMetadata(METADATA_KEY, promptMetadata(inserted.id));
      return inserted;
    }
    const existing = notebook.cells.get(index);
    const before = stream?.originalSource ?? existing.sharedModel.getSource();
    const view = { ...cellView(existing), source: before };
    if (isEdited(view) && this.settings.confirmOverwriteEdited) {
      stream?.undo();
      existing.setMetadata(METADATA_KEY, {
        ...(existing.getMetadata(METADATA_KEY) as object),
        edited: true
      });
      const answer = await showDialog({
        title: 'Replace edited code?',
        body:
          'The cell generated from this prompt was edited by hand. Replace it with the ' +
          'new answer? Undo (Ctrl+Z in that cell) brings your code back.',
        buttons: [
          Dialog.cancelButton({ label: 'Keep my edits' }),
          Dialog.warnButton({ label: 'Replace' })
        ],
        // Enter must never overwrite hand-written code.
        defaultButton: 0
      });
      if (!answer.button.accept) {
        (prompt as ICodeCellModel).outputs.add({
          output_type: 'stream',
          name: 'stdout',
          text: 'Kept your edited code below; the new answer was not used.\n'
        });
        return null;
      }
    }
    if (stream?.target === existing) {
      // Streaming wrote many small edits: fold them so that one undo restores the old code.
      existing.sharedModel.setSource(stream.originalSource ?? '');
      existing.sharedModel.clearUndoHistory();
    }
    existing.sharedModel.transact(() => {
      if (existing.sharedModel.getSource() !== code) {
        existing.sharedModel.setSource(code);
      }
      for (const [key, value] of Object.entries(this._cellMetadata(metadata))) {
        existing.setMetadata(key, value);
      }
    });
    if (existing.type === 'code') {
      // Outside the transaction: the outputs model re-applies a transaction's delta on
      // commit, which would undo changes made to it inside one.
      (existing as ICodeCellModel).outputs.clear();
      (existing as ICodeCellModel).executionCount = null;
    }
    prompt.setMetadata(METADATA_KEY, promptMetadata(existing.id));
    return existing;
  }

  private _cellMetadata(metadata: IGeneratedMetadata): { [key: string]: any } {
    const result: { [key: string]: any } = { [METADATA_KEY]: metadata };
    if (this.settings.collapseGeneratedInput) {
      result.jupyter = { source_hidden: true };
    }
    return result;
  }

  private _select(notebook: INotebookModel, model: ICellModel): void {
    const widget = this._notebookWidget(notebook);
    if (!widget) {
      return;
    }
    const index = widget.widgets.findIndex(w => w.model === model);
    if (index >= 0) {
      widget.activeCellIndex = index;
      widget.deselectAll();
    }
  }

  private _forced = new Set<string>();
  private _queue = new RunQueue<INotebookModel>();
}

/** The generated code and provenance in an execute reply, if `%%ai` sent one. */
export function readPayload(
  content: KernelMessage.IExecuteReply
): (IGenerationPayload & { code: string }) | null {
  for (const item of (content.payload ?? []) as any[]) {
    if (item?.source === 'set_next_input' && item[METADATA_KEY]) {
      const entry = item[METADATA_KEY] as IGenerationPayload;
      return { ...entry, code: String(item.text ?? '') };
    }
  }
  return null;
}

/**
 * Shows the code in the generated cell while the model writes it, from the progress the
 * kernel displays in the prompt cell; `undo` puts everything back if the generation fails.
 */
class StreamIntoCell {
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
