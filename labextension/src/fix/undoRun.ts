/**
 * Fix's **Accept and run** with Undo: the kernel keeps its state from before the accepted code
 * runs (`common/kernelUndo.ts`, as an agent turn does), then {@link UndoRunBar} shows where
 * the proposal was (above the cell's editor). A kernel that keeps no snapshot (not Linux, no
 * chapyter-ext there) just runs the code.
 */

import { Cell } from '@jupyterlab/cells';
import { NotebookActions, NotebookPanel } from '@jupyterlab/notebook';

import { readJSON } from '../common/kernelRead';
import { KernelUndo } from '../common/kernelUndo';
import { insertAboveEditor } from './review';
import { UndoRunBar } from './undoBar';

/** The Undo bar of each cell (one at a time: a new run replaces it). */
const bars = new WeakMap<Cell, UndoRunBar>();

let runs = 0;

/**
 * Run the accepted code of `cell` (its code before Accept: `before`, now `accepted`) with a
 * snapshot of the kernel taken first; then offer Undo where the proposal was.
 */
export async function runAccepted(
  panel: NotebookPanel,
  cell: Cell,
  before: string,
  accepted: string
): Promise<void> {
  const kernel = panel.sessionContext.session?.kernel;
  const undo = kernel
    ? new KernelUndo(expression => readJSON(kernel, expression))
    : null;
  runs += 1;
  const turn = `fix-${cell.model.id}-${runs}`;
  const taken = undo ? await undo.take(turn, 0) : null;
  await NotebookActions.runCells(panel.content, [cell], panel.sessionContext);
  if (!undo || !taken?.ok || cell.isDisposed) {
    return;
  }
  bars.get(cell)?.dispose();
  const bar = new UndoRunBar(undo, turn, cell, before, accepted);
  bars.set(cell, bar);
  bar.disposed.connect(() => {
    if (bars.get(cell) === bar) {
      bars.delete(cell);
    }
  });
  insertAboveEditor(cell, bar);
}
