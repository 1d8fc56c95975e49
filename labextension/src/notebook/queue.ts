/**
 * Ordering of cell runs around prompt cells, free of JupyterLab types so it is unit-tested.
 *
 * JupyterLab's Run All hands every cell to the executor in one synchronous loop. Those calls
 * form a batch. A prompt cell becomes the queue's tail: every cell handed over after it (in
 * this batch or a later one) waits until the prompt and its generated cell have run. If a
 * prompt cell fails, the rest of its batch is skipped, as JupyterLab skips the cells after an
 * error; later batches run normally.
 */

/** The cells handed over in one synchronous run. */
export interface IBatch {
  /** Increasing batch number. */
  id: number;
  /** Ids of the cells in the batch. */
  cellIds: Set<string>;
  /** Whether a prompt cell of this batch failed. */
  failed: boolean;
}

interface IQueueState {
  tail: Promise<void> | null;
  open: IBatch | null;
}

/** Per-notebook queue of cell runs. */
export class RunQueue<K extends object> {
  /** Add a cell to the batch being collected for `key`, opening one if needed. */
  join(key: K, cellId: string): IBatch {
    const state = this._state(key);
    if (!state.open) {
      const batch: IBatch = {
        id: ++this._count,
        cellIds: new Set(),
        failed: false
      };
      state.open = batch;
      queueMicrotask(() => {
        if (state.open === batch) {
          state.open = null;
        }
      });
    }
    state.open.cellIds.add(cellId);
    return state.open;
  }

  /**
   * Run `task` after the current tail. With `blocking`, the task becomes the new tail (a
   * prompt cell); otherwise it only waits (an ordinary cell). Without a tail an ordinary
   * task starts synchronously, keeping JupyterLab's pipelining of ordinary cells.
   */
  schedule<T>(
    key: K,
    batch: IBatch,
    task: () => Promise<T>,
    skipped: () => T,
    blocking: boolean
  ): Promise<T> {
    const state = this._state(key);
    const previous = state.tail;
    const guarded = async (): Promise<T> => {
      if (batch.failed) {
        return skipped();
      }
      try {
        return await task();
      } catch (reason) {
        if (blocking) {
          batch.failed = true;
        }
        throw reason;
      }
    };
    const run = previous ? previous.then(guarded) : guarded();
    if (blocking) {
      const tail = run.then(
        () => undefined,
        () => undefined
      );
      state.tail = tail;
      void tail.then(() => {
        if (state.tail === tail) {
          state.tail = null;
        }
      });
    }
    return run;
  }

  private _state(key: K): IQueueState {
    let state = this._states.get(key);
    if (!state) {
      state = { tail: null, open: null };
      this._states.set(key, state);
    }
    return state;
  }

  private _count = 0;
  private _states = new WeakMap<K, IQueueState>();
}
