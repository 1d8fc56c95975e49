/**
 * Links between a prompt cell and its generated cell, by cell id in `metadata.chapyter`
 * (the same rules as `chapyter_ext.contract`).
 *
 * Pure logic over a minimal view of cells, so it is tested without a browser. Links never
 * rely on execution counts or on text headers: both broke when IPython changed when the
 * execution count moves.
 */

import { codeSha256, requestSha256 } from './hashes';
import { parsePrompt } from './magicLine';
import { failedCheck } from './metadata';

/** What the link logic needs to know of a cell. */
export interface ICellView {
  /** The cell id (nbformat 4.5). */
  id: string;
  /** "code", "markdown" or "raw". */
  type: string;
  /** The cell's source text. */
  source: string;
  /** The `chapyter` entry of the cell's metadata, if any. */
  chapyter?: { [key: string]: unknown } | null;
}

/** Whether a cell is a `%%ai` prompt cell. */
export function isPromptCell(cell: ICellView): boolean {
  return cell.type === 'code' && parsePrompt(cell.source) !== null;
}

/** Whether a cell was generated (by `%%ai` or the chat). */
export function isGeneratedCell(cell: ICellView): boolean {
  return cell.chapyter?.role === 'generated';
}

/**
 * Index of the cell generated from the prompt at `promptIndex`, or -1.
 *
 * The prompt's `generated_cell` id is followed only when that cell points back to the prompt:
 * a copied prompt cell (new id, old link) must not take over the original's generated cell.
 */
export function findGeneratedIndex(
  cells: readonly ICellView[],
  promptIndex: number
): number {
  const prompt = cells[promptIndex];
  if (!prompt) {
    return -1;
  }
  const pointsBack = (cell: ICellView) =>
    isGeneratedCell(cell) && cell.chapyter?.generated_from === prompt.id;
  const linkedId = prompt.chapyter?.generated_cell;
  if (typeof linkedId === 'string') {
    const index = cells.findIndex(cell => cell.id === linkedId);
    if (index >= 0 && pointsBack(cells[index])) {
      return index;
    }
  }
  return cells.findIndex(pointsBack);
}

/** Index of the prompt a generated cell came from, or -1. */
export function findPromptIndex(
  cells: readonly ICellView[],
  generatedIndex: number
): number {
  const from = cells[generatedIndex]?.chapyter?.generated_from;
  if (typeof from !== 'string') {
    return -1;
  }
  return cells.findIndex(cell => cell.id === from && isPromptCell(cell));
}

/** Whether a generated cell's code differs from what the model wrote. */
export function isEdited(generated: ICellView): boolean {
  const recorded = generated.chapyter?.code_sha256;
  return (
    typeof recorded === 'string' && recorded !== codeSha256(generated.source)
  );
}

/**
 * Whether the generated cell still answers the prompt as it is now: same request hash, and
 * the same model when the prompt names one.
 */
export function isUpToDate(prompt: ICellView, generated: ICellView): boolean {
  const parsed = parsePrompt(prompt.source);
  if (!parsed || !generated.chapyter) {
    return false;
  }
  if (generated.chapyter.prompt_sha256 !== requestSha256(parsed.request)) {
    return false;
  }
  return parsed.model === null || generated.chapyter.model === parsed.model;
}

/**
 * Whether a generated cell still holds code that failed the syntax check when it was
 * generated (not edited since): such code is never replayed as up to date.
 */
export function hasSyntaxError(generated: ICellView): boolean {
  return failedCheck(generated.chapyter) !== null && !isEdited(generated);
}
