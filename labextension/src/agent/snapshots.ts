/**
 * The kernel side of an agent turn's Undo: before each step that runs code the kernel keeps
 * the state from before it (`take`); Undo shows what it will and will not restore
 * (`preview`) and puts the variables back (`restore`), through `common/kernelUndo.ts`. Where
 * the kernel keeps no snapshot, the chat is told why once and Undo removes the cells only.
 */

import {
  IRestoreAnswer,
  IUndoPreview,
  KernelUndo,
  previewAnswer
} from '../common/kernelUndo';

/** The chat's one line when a kernel keeps no snapshot. */
export function noSnapshotNotice(why: string): string {
  return (
    `Undo cannot restore the kernel here (${why}): it removes the turn's cells, ` +
    'the variables stay as they are (docs/undo.md).'
  );
}

/** The snapshots of one turn (its id: the reply's message id). */
export class TurnSnapshots {
  /**
   * Over `undo` (null: the notebook has no kernel to ask); `tell` gets the one line to say
   * the first time a snapshot could not be taken.
   */
  constructor(
    private _undo: KernelUndo | null,
    private _tell: (line: string) => void = () => undefined
  ) {}

  /**
   * The snapshots a turn from the history should have: one before each step that put a cell
   * (`steps`); the kernel says whether it still keeps them.
   */
  static recorded(undo: KernelUndo | null, steps: number[]): TurnSnapshots {
    const snapshots = new TurnSnapshots(undo);
    snapshots._tried = steps.map(step => ({ step, ok: true }));
    return snapshots;
  }

  /** The steps (0-based) before which a snapshot was kept, in order. */
  get taken(): number[] {
    return this._tried.filter(t => t.ok).map(t => t.step);
  }

  /** Why a snapshot could not be taken (the first reason), or null. */
  get why(): string | null {
    return this._why;
  }

  /** Keep the state from before step `step` of `turn`; whether the kernel kept it. */
  async before(turn: string, step: number): Promise<boolean> {
    const answer = this._undo
      ? await this._undo.take(turn, step)
      : { ok: false, why: 'the notebook has no kernel' };
    this._tried.push({ step, ok: answer.ok });
    if (answer.ok) {
      return true;
    }
    if (this._why === null) {
      this._why = answer.why ?? 'no reason given';
      this._tell(noSnapshotNotice(this._why));
    }
    return false;
  }

  /**
   * The snapshot that holds the state from before step `step`: the first tried at or after
   * it (steps between ran no code), if it was kept; null when there is none for that point.
   */
  at(step: number): number | null {
    const first = this._tried.find(t => t.step >= step);
    return first?.ok ? first.step : null;
  }

  /** What undoing `turn` to before step `step` would and would not restore. */
  async preview(turn: string, step: number): Promise<IUndoPreview> {
    const at = this.at(step);
    if (at === null || !this._undo) {
      return previewAnswer({
        available: false,
        why: this._why,
        line: this._noneLine()
      });
    }
    return this._undo.preview(turn, at);
  }

  /** Put the variables back as they were before step `step` of `turn`. */
  async restore(turn: string, step: number): Promise<IRestoreAnswer> {
    const at = this.at(step);
    if (at === null || !this._undo) {
      return {
        ok: false,
        restored: [],
        removed: [],
        cannot: [],
        line: this._noneLine()
      };
    }
    return this._undo.restore(turn, at);
  }

  private _noneLine(): string {
    return this._why
      ? `The variables stay as they are: ${this._why}.`
      : 'The variables stay as they are: no snapshot was kept.';
  }

  private _tried: { step: number; ok: boolean }[] = [];
  private _why: string | null = null;
}
