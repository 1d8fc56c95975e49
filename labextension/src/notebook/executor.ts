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
 *
 * Self-correction: when the generated cell raises and the kernel allows retries, the prompt
 * runs again with `RETRY_MARKER` metadata (the failing code and its error); the answer
 * replaces the code (one undo step) and runs, within the kernel's `Chapyter.fix_retries`.
 */

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
import { JSONObject } from '@lumino/coreutils';

import {
  failedCheck,
  findGeneratedIndex,
  FRONTEND_MARKER,
  hasSyntaxError,
  isUpToDate,
  IGeneration,
  parsePrompt,
  readGenerationPayload,
  RETRY_MARKER
} from '../contract';
import { DEFAULT_NOTEBOOK_SETTINGS, INotebookSettings } from '../tokens';
import { cellViews, indexOfModel } from './cells';
import { upsertGenerated } from './generated';
import { IBatch, RunQueue } from './queue';
import { IRetryRequest, retryNote, retryRequest } from './retry';
import { StreamIntoCell } from './stream';

/**
 * What an up-to-date prompt shows when Run All replays it (the kernel prints it: this copy is
 * for a notebook without a kernel); the same as `chapyter_ext.magic.replay.REPLAY_LINE`.
 */
export const REPLAY_LINE =
  '↻ replayed: no model was asked; the saved code in the cell below runs as it is (Shift+Enter on this cell alone asks again)';

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
    // A line that cannot be read goes to the kernel, which explains it in one line.
    const explicit =
      forced ||
      batch.cellIds.size === 1 ||
      parsed.options === null ||
      parsed.options.regenerate;

    if (
      !explicit &&
      generatedIndex >= 0 &&
      isUpToDate(views[promptIndex], views[generatedIndex]) &&
      !hasSyntaxError(views[generatedIndex])
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

    let retry: IRetryRequest | null = null;
    for (;;) {
      const asked = await this._ask(options, retry);
      if (typeof asked === 'boolean') {
        return asked;
      }
      const { generation, generated } = asked;
      const retries: number = retry?.attempt ?? 0;
      const wantsRun =
        generation.run &&
        failedCheck(generation.metadata) === null &&
        this.settings.autoRun &&
        !this.settings.reviewBeforeRunning;
      if (!wantsRun) {
        this._select(notebook, generated);
        return true;
      }
      if (batch.cellIds.has(generated.id)) {
        // Run All includes the generated cell: it runs in its own turn, right after this
        // one (and is not corrected: a Run All reruns what is there).
        return true;
      }
      const widget = this._cellWidget(notebook, generated);
      if (!widget) {
        return true;
      }
      try {
        const ran = await defaultRunCell({ ...options, cell: widget });
        // Not run (cancelled, the cell gone): nothing to say about the retries.
        this._note(cell.model, ran ? retryNote(retries, true) : '');
        return ran;
      } catch (reason) {
        // Code that raised: ask the model to correct it while the kernel allows retries.
        retry =
          reason instanceof KernelError && !cell.isDisposed
            ? retryRequest(
                generated.sharedModel.getSource(),
                reason,
                retries + 1,
                generation.retriesLeft
              )
            : null;
        if (!retry) {
          this._note(cell.model, retryNote(retries, false));
          throw reason;
        }
      }
    }
  }

  /**
   * Run the prompt cell in the kernel (with `retry`: asking for a correction) and put the
   * answer below; the generation and its cell, or what `runCell` returns when done.
   */
  private async _ask(
    options: INotebookCellExecutor.IRunCellOptions,
    retry: IRetryRequest | null
  ): Promise<boolean | { generation: IGeneration; generated: ICellModel }> {
    const { cell, notebook, sessionContext } = options;
    const stream = this.settings.streamIntoCell
      ? new StreamIntoCell(notebook, cell.model)
      : null;
    options.onCellExecutionScheduled({ cell });
    const deletedCells = notebook.deletedCells;
    let reply: KernelMessage.IExecuteReplyMsg | void;
    try {
      reply = await CodeCell.execute(cell as CodeCell, sessionContext!, {
        deletedCells,
        recordTiming: options.notebookConfig.recordTiming,
        // Tells the kernel that this frontend inserts, links and runs the code itself.
        [FRONTEND_MARKER]: { version: 1 },
        ...(retry ? { [RETRY_MARKER]: retry as unknown as JSONObject } : {})
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
    const generation = readGenerationPayload(reply.content);
    if (reply.content.status !== 'ok') {
      const error = new KernelError(reply.content);
      if (generation && failedCheck(generation.metadata) !== null) {
        // An answer that failed the syntax check stays visible below, never run; the
        // prompt shows the one-line error and a Run All stops here.
        await upsertGenerated(
          notebook,
          cell.model,
          { ...generation, run: false },
          stream,
          this.settings
        );
      } else {
        // Nothing generated: no half-inserted cell, the previous code stays.
        stream?.undo();
      }
      options.onCellExecuted({ cell, success: false, error });
      throw error;
    }
    if (!generation) {
      stream?.undo();
      options.onCellExecuted({ cell, success: true });
      return true;
    }
    const generated = await upsertGenerated(
      notebook,
      cell.model,
      generation,
      stream,
      this.settings
    );
    options.onCellExecuted({ cell, success: true });
    return generated ? { generation, generated } : true;
  }

  /** Add a line to the prompt cell's output (nothing for an empty one). */
  private _note(prompt: ICellModel, text: string): void {
    if (text && !prompt.isDisposed && prompt.type === 'code') {
      (prompt as ICodeCellModel).outputs.add({
        output_type: 'stream',
        name: 'stdout',
        text
      });
    }
  }

  private async _replay(
    options: INotebookCellExecutor.IRunCellOptions,
    batch: IBatch,
    generated: ICellModel
  ): Promise<boolean> {
    const { cell } = options;
    if (!(await this._replayInKernel(options))) {
      // No kernel to ask: the same line, without an execution count.
      const model = cell.model as ICodeCellModel;
      // Not in a shared-model transaction: the outputs model mirrors the transaction's delta
      // once it ends, and that removed the note just added (it never showed).
      model.outputs.clear();
      model.outputs.add({
        output_type: 'stream',
        name: 'stdout',
        text: REPLAY_LINE + '\n'
      });
      model.executionCount = null;
    }
    options.onCellExecuted({ cell, success: true });
    if (batch.cellIds.has(generated.id)) {
      return true;
    }
    const widget = this._cellWidget(options.notebook, generated);
    return widget ? defaultRunCell({ ...options, cell: widget }) : true;
  }

  /**
   * Run the up-to-date prompt in the kernel with the replay marker: the magic prints the
   * replay line (the wording batch runs print) and asks no model, and the cell gets an
   * execution count like any cell that ran, so a replayed prompt never shows `[ ]:`.
   * False when no kernel could answer (none, restarting, or no `%%ai` in it).
   */
  private async _replayInKernel(
    options: INotebookCellExecutor.IRunCellOptions
  ): Promise<boolean> {
    const { cell, sessionContext } = options;
    if (
      !sessionContext ||
      sessionContext.hasNoKernel ||
      sessionContext.isTerminating ||
      sessionContext.pendingInput
    ) {
      return false;
    }
    options.onCellExecutionScheduled({ cell });
    try {
      const reply = await CodeCell.execute(cell as CodeCell, sessionContext, {
        recordTiming: options.notebookConfig.recordTiming,
        [FRONTEND_MARKER]: { version: 1, replay: true }
      });
      return reply?.content.status === 'ok';
    } catch {
      return false;
    }
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
