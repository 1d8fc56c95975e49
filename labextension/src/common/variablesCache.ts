/**
 * When to ask a kernel for its variables again: a cache per kernel, marked stale when a cell
 * runs, with one read at a time shared by every caller. Pure (the read is injected), so the
 * timing rules are tested without a kernel.
 */

import type { IVariableSummary } from './snapshot';

interface IEntry {
  value: IVariableSummary[] | null;
  stale: boolean;
  pending: Promise<IVariableSummary[] | null> | null;
}

/** The variables of each kernel, read again only after a cell ran there. */
export class VariablesCache {
  /**
   * @param timeoutMs - How long a caller waits for a busy kernel before it gets the value
   *   read last time.
   * @param onChange - Called when a late read arrives or a read may be out of date, so the
   *   caller asks again.
   */
  constructor(
    readonly timeoutMs: number,
    private _onChange: () => void
  ) {}

  /** A cell ran on this kernel (every kernel when no id is given). */
  markStale(kernelId?: string): void {
    for (const [id, entry] of this._entries) {
      if (kernelId === undefined || id === kernelId) {
        entry.stale = true;
      }
    }
  }

  /** Forget everything (a kernel changed or restarted). */
  clear(): void {
    this._entries.clear();
  }

  /**
   * The variables of a kernel: the cached value when nothing ran since it was read, else the
   * answer of a read (one at a time, shared by every caller).
   */
  async get(
    kernelId: string,
    read: () => Promise<IVariableSummary[] | null>
  ): Promise<IVariableSummary[] | null> {
    let entry = this._entries.get(kernelId);
    if (!entry) {
      entry = { value: null, stale: true, pending: null };
      this._entries.set(kernelId, entry);
    }
    if (!entry.stale && !entry.pending) {
      return entry.value;
    }
    // A read under way answers every caller: a later caller must not get the value from
    // before the cell that made the entry stale.
    if (!entry.pending) {
      const current = entry;
      current.stale = false;
      current.pending = read()
        .catch(() => null)
        .then(value => {
          current.value = value;
          current.pending = null;
          if (current.stale) {
            // A cell ran while this read was under way: what it read may be out of date.
            this._onChange();
          }
          return value;
        });
    }
    const pending = entry.pending!;
    const late = Symbol('late');
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<typeof late>(resolve => {
      timer = setTimeout(() => resolve(late), this.timeoutMs);
    });
    const value = await Promise.race([pending, timeout]);
    clearTimeout(timer);
    if (value === late) {
      // A kernel busy with a long cell answers late: the value read last time meanwhile,
      // and a call when the answer comes.
      void pending.then(() => this._onChange());
      return entry.value;
    }
    return value;
  }

  private _entries = new Map<string, IEntry>();
}
