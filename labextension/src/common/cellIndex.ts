/**
 * What the chat's snapshot needs to know about every cell of a notebook, kept up to date from
 * the notebook's own signals instead of walked before each request: which
 * code cells show an error, and how many cells show each execution count (a cell is named by
 * its count only when no other cell shows it, see `cellNames.ts`). The snapshot then reads
 * the cells near the active one and the few cells that show an error, whatever the notebook's
 * length.
 *
 * Only the types of JupyterLab's models are used (the shapes below), so it is tested with
 * plain fakes.
 */

import type { ISignal } from '@lumino/signaling';

import {
  findLastError,
  ICellOutputs,
  ICellSnapshot,
  IErrorSnapshot
} from './snapshot';

/** What the index reads of an output model. */
export interface IIndexedOutput {
  /** Its `output_type`. */
  readonly type: string;
  /** Its nbformat JSON. */
  toJSON(): unknown;
}

/** What the index reads of a cell model (a code cell has outputs and a count). */
export interface IIndexedCell {
  /** "code", "markdown" or "raw". */
  readonly type: string;
  /** Its source. */
  readonly sharedModel: { getSource(): string };
  /** A code cell's execution count. */
  readonly executionCount?: number | null;
  /** A code cell's outputs. */
  readonly outputs?: {
    readonly length: number;
    get(index: number): IIndexedOutput;
    readonly changed: ISignal<any, any>;
  };
  /** Emits `{ name: 'executionCount' }` (and others) when the cell's state changes. */
  readonly stateChanged?: ISignal<any, { name: string }>;
}

/** What the index reads of a notebook model. */
export interface IIndexedNotebook {
  /** Its cells, in order. */
  readonly cells: {
    readonly length: number;
    get(index: number): IIndexedCell;
    readonly changed: ISignal<
      any,
      { type: string; newValues: readonly (IIndexedCell | undefined)[] }
    >;
  };
}

/** Follows one notebook's cells (see the module's doc). */
export class CellIndex {
  /**
   * Follow `notebook`; `indexOf` gives a cell's position (a native search of the shared
   * model's array, not a walk of the cell models), -1 once it left the notebook.
   */
  constructor(
    private _notebook: IIndexedNotebook,
    private _indexOf: (cell: IIndexedCell) => number
  ) {
    _notebook.cells.changed.connect(this._onCellsChanged, this);
  }

  /** The cell's execution count when no other cell shows the same one, else null. */
  ownPrompt(cell: IIndexedCell): number | null {
    this._update();
    const count = this._counted.get(cell);
    return typeof count === 'number' && this._counts.get(count) === 1
      ? count
      : null;
  }

  /**
   * The code cells that show an error, in notebook order, with their error outputs only:
   * what `findLastError` needs (the other outputs never change its answer).
   */
  errorCells(): { cells: ICellOutputs[]; prompts: (number | null)[] } {
    this._update();
    const found: { index: number; cell: IIndexedCell }[] = [];
    for (const cell of this._withErrors) {
      const index = this._indexOf(cell);
      if (index < 0) {
        // It left the notebook without a 'remove' we could place: recount everything.
        this._stale = true;
        return this.errorCells();
      }
      found.push({ index, cell });
    }
    found.sort((a, b) => a.index - b.index);
    return {
      cells: found.map(({ index, cell }) => ({
        index,
        executionCount: cell.executionCount ?? null,
        outputs: errorOutputs(cell).map(
          output => output.toJSON() as ICellOutputs['outputs'][number]
        )
      })),
      prompts: found.map(({ cell }) => this.ownPrompt(cell))
    };
  }

  /** Count the cells now (when a notebook opens), so that no request waits for it. */
  warm(): void {
    this._update();
  }

  /** Stop following the notebook. */
  dispose(): void {
    this._notebook.cells.changed.disconnect(this._onCellsChanged, this);
    for (const cell of this._followed) {
      this._unfollow(cell);
    }
    this._followed.clear();
  }

  private _onCellsChanged(
    _: unknown,
    change: { type: string; newValues: readonly (IIndexedCell | undefined)[] }
  ): void {
    if (change.type === 'add' && !this._stale) {
      for (const cell of change.newValues) {
        if (cell) {
          this._follow(cell);
        }
      }
    } else {
      // A removal does not say which cells left: count again at the next read.
      this._stale = true;
    }
  }

  /** Count every cell again after a removal (or on the first read). */
  private _update(): void {
    if (!this._stale) {
      return;
    }
    this._stale = false;
    const cells = this._notebook.cells;
    const present = new Set<IIndexedCell>();
    for (let i = 0; i < cells.length; i++) {
      present.add(cells.get(i));
    }
    for (const cell of [...this._followed]) {
      if (!present.has(cell)) {
        this._unfollow(cell);
      }
    }
    for (const cell of present) {
      this._follow(cell);
    }
  }

  private _follow(cell: IIndexedCell): void {
    if (this._followed.has(cell)) {
      return;
    }
    this._followed.add(cell);
    this._recount(cell);
    this._checkErrors(cell);
    cell.stateChanged?.connect(this._onState, this);
    if (cell.outputs) {
      cell.outputs.changed.connect(this._onOutputs, this);
      this._outputOwners.set(cell.outputs, cell);
    }
  }

  private _unfollow(cell: IIndexedCell): void {
    this._followed.delete(cell);
    cell.stateChanged?.disconnect(this._onState, this);
    cell.outputs?.changed.disconnect(this._onOutputs, this);
    this._setCount(cell, null);
    this._withErrors.delete(cell);
  }

  private _onState(cell: IIndexedCell, change: { name: string }): void {
    if (change.name === 'executionCount') {
      this._recount(cell);
    }
  }

  private _onOutputs(outputs: object): void {
    const cell = this._outputOwners.get(outputs);
    if (cell && this._followed.has(cell)) {
      this._checkErrors(cell);
    }
  }

  private _recount(cell: IIndexedCell): void {
    this._setCount(
      cell,
      cell.type === 'code' ? (cell.executionCount ?? null) : null
    );
  }

  private _setCount(cell: IIndexedCell, count: number | null): void {
    const before = this._counted.get(cell);
    if (typeof before === 'number') {
      const left = (this._counts.get(before) ?? 1) - 1;
      if (left > 0) {
        this._counts.set(before, left);
      } else {
        this._counts.delete(before);
      }
    }
    this._counted.set(cell, count);
    if (typeof count === 'number') {
      this._counts.set(count, (this._counts.get(count) ?? 0) + 1);
    }
  }

  private _checkErrors(cell: IIndexedCell): void {
    if (errorOutputs(cell).length) {
      this._withErrors.add(cell);
    } else {
      this._withErrors.delete(cell);
    }
  }

  private _followed = new Set<IIndexedCell>();
  /** The count each followed cell was counted with. */
  private _counted = new Map<IIndexedCell, number | null>();
  /** How many cells show each execution count. */
  private _counts = new Map<number, number>();
  private _withErrors = new Set<IIndexedCell>();
  private _outputOwners = new WeakMap<object, IIndexedCell>();
  /** True until the first read, and after a removal. */
  private _stale = true;
}

/** A code cell's error outputs (their type is read without serialising the others). */
function errorOutputs(cell: IIndexedCell): IIndexedOutput[] {
  const outputs = cell.type === 'code' ? cell.outputs : undefined;
  const found: IIndexedOutput[] = [];
  for (let i = 0; i < (outputs?.length ?? 0); i++) {
    const output = outputs!.get(i);
    if (output.type === 'error') {
      found.push(output);
    }
  }
  return found;
}

/** The cells a snapshot carries: the active one, its neighbours, and the last error. */
export interface ISnapshotCells {
  /** The active cell, if any. */
  active: ICellSnapshot | null;
  /** Cells above the active one, nearest last. */
  above: ICellSnapshot[];
  /** Cells below the active one, nearest first. */
  below: ICellSnapshot[];
  /** The last error, if one is shown. */
  last_error: IErrorSnapshot | null;
}

/**
 * The cells of `notebook` a snapshot carries: the cell at `activeIndex` (-1: none) with
 * `neighbours` cells on each side, and the error of the cell run last. Reads those cells and
 * the cells that show an error, never the whole notebook (`index` follows the rest).
 */
export function snapshotCells(
  notebook: IIndexedNotebook,
  index: CellIndex,
  activeIndex: number,
  neighbours: number
): ISnapshotCells {
  const cells = notebook.cells;
  const read = (at: number): ICellSnapshot => {
    const cell = cells.get(at);
    return {
      index: at,
      type: cell.type,
      source: cell.sharedModel.getSource(),
      prompt: index.ownPrompt(cell)
    };
  };
  const above: ICellSnapshot[] = [];
  const below: ICellSnapshot[] = [];
  if (activeIndex >= 0) {
    for (let i = Math.max(0, activeIndex - neighbours); i < activeIndex; i++) {
      above.push(read(i));
    }
    const last = Math.min(cells.length - 1, activeIndex + neighbours);
    for (let i = activeIndex + 1; i <= last; i++) {
      below.push(read(i));
    }
  }
  const errors = index.errorCells();
  return {
    active: activeIndex >= 0 ? read(activeIndex) : null,
    above,
    below,
    last_error: findLastError(errors.cells, errors.prompts)
  };
}
