/**
 * Which pairing classes each cell gets (pure, so it is tested without a notebook): prompt,
 * generated, edited, and "prompt changed" (stale) only when the prompt really changed, never
 * while its answer is still being written into the generated cell.
 */

import {
  findGeneratedIndex,
  ICellView,
  isEdited,
  isGeneratedCell,
  isPromptCell,
  isUpToDate,
  PROGRESS_MIME
} from '../contract';

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

/** What the pairing needs to know of a prompt cell's run: its state and outputs' data. */
export interface IRunView {
  /** The cell model's execution state ('running' while the kernel works on it). */
  executionState?: string | null;
  /** The `data` of each output (display outputs; others may be empty). */
  outputs: readonly { [mime: string]: unknown }[];
}

/**
 * Whether a prompt's answer is still arriving: the cell runs, or its progress display says
 * "waiting" or "streaming". Its generated cell then holds a partial answer, not a stale one.
 */
export function isAnswering(run: IRunView | null | undefined): boolean {
  if (!run) {
    return false;
  }
  if (run.executionState === 'running') {
    return true;
  }
  return run.outputs.some(data => {
    const progress = data[PROGRESS_MIME] as { state?: unknown } | undefined;
    return progress?.state === 'waiting' || progress?.state === 'streaming';
  });
}

/**
 * The pairing classes of every cell, in order. `answering(index)` tells whether the prompt
 * at `index` is being answered (see {@link isAnswering}).
 */
export function pairClasses(
  views: readonly ICellView[],
  answering: (index: number) => boolean = () => false
): string[][] {
  const classes: string[][] = views.map(() => []);
  views.forEach((view, index) => {
    if (isPromptCell(view)) {
      classes[index].push(PairClasses.prompt);
      const generated = findGeneratedIndex(views, index);
      if (
        generated >= 0 &&
        !isUpToDate(view, views[generated]) &&
        !answering(index)
      ) {
        classes[generated].push(PairClasses.stale);
      }
    } else if (isGeneratedCell(view)) {
      classes[index].push(PairClasses.generated);
      if (isEdited(view)) {
        classes[index].push(PairClasses.edited);
      }
    }
  });
  return classes;
}
