/**
 * The chat's snapshot reads the cells it sends (the active one and its
 * neighbours) and the cells that show an error, never every cell and output of the notebook
 * (common/cellIndex.ts). The answer is the one a walk of every cell gives (the reference
 * below is the walk the snapshot made before).
 */

import { Signal } from '@lumino/signaling';

import { ownPrompts } from '../cellNames';
import {
  CellIndex,
  IIndexedCell,
  ISnapshotCells,
  snapshotCells
} from '../common/cellIndex';
import { findLastError, ICellOutputs } from '../common/snapshot';

type Json = ICellOutputs['outputs'][number];

/** What the snapshot read, reset before the read a test looks at. */
const reads = { cells: 0, outputs: 0, serialised: 0 };

class FakeOutput {
  constructor(readonly json: Json) {}
  get type(): string {
    return this.json.output_type;
  }
  toJSON(): Json {
    reads.serialised++;
    return this.json;
  }
}

class FakeOutputs {
  items: FakeOutput[] = [];
  readonly changed = new Signal<this, void>(this);
  get length(): number {
    return this.items.length;
  }
  get(index: number): FakeOutput {
    reads.outputs++;
    return this.items[index];
  }
  set(items: Json[]): void {
    this.items = items.map(json => new FakeOutput(json));
    this.changed.emit();
  }
}

class FakeCell implements IIndexedCell {
  constructor(
    readonly type: string,
    readonly source: string,
    public executionCount: number | null = null,
    outputs: Json[] = []
  ) {
    this.outputs.items = outputs.map(json => new FakeOutput(json));
  }
  readonly sharedModel = { getSource: () => this.source };
  readonly outputs = new FakeOutputs();
  readonly stateChanged = new Signal<this, { name: string }>(this);
  run(count: number | null, outputs: Json[]): void {
    this.executionCount = count;
    this.stateChanged.emit({ name: 'executionCount' });
    this.outputs.set(outputs);
  }
}

class FakeNotebook {
  constructor(readonly list: FakeCell[]) {}
  readonly changed = new Signal<
    this,
    { type: string; newValues: (FakeCell | undefined)[] }
  >(this);
  readonly cells = {
    length: 0,
    get: (index: number): FakeCell => {
      reads.cells++;
      return this.list[index];
    },
    changed: this.changed
  };
  insert(at: number, cell: FakeCell): void {
    this.list.splice(at, 0, cell);
    this.changed.emit({ type: 'add', newValues: [cell] });
  }
  remove(at: number): void {
    this.list.splice(at, 1);
    // JupyterLab's CellList does not say which cells a removal took.
    this.changed.emit({ type: 'remove', newValues: [] });
  }
}

function notebook(cells: FakeCell[]): FakeNotebook {
  const nb = new FakeNotebook(cells);
  Object.defineProperty(nb.cells, 'length', { get: () => nb.list.length });
  return nb;
}

const stream = (text: string): Json => ({
  output_type: 'stream',
  name: 'stdout',
  text
});
const result = (n: number): Json => ({
  output_type: 'execute_result',
  execution_count: n,
  data: { 'text/plain': `${n}`, 'text/html': `<b>${n}</b>` },
  metadata: {}
});
const error = (ename: string, n: number): Json => ({
  output_type: 'error',
  ename,
  evalue: `boom ${n}`,
  traceback: [`line ${n}`]
});

/** The walk of every cell and output the snapshot made before the cell index. */
function walkEveryCell(
  nb: FakeNotebook,
  activeIndex: number,
  neighbours: number
): ISnapshotCells {
  const cells = nb.list;
  const prompts = ownPrompts(
    cells.map(c => (c.type === 'code' ? c.executionCount : null))
  );
  const read = (index: number) => ({
    index,
    type: cells[index].type,
    source: cells[index].source,
    prompt: prompts[index] ?? null
  });
  const above = [];
  const below = [];
  if (activeIndex >= 0) {
    for (let i = Math.max(0, activeIndex - neighbours); i < activeIndex; i++) {
      above.push(read(i));
    }
    for (
      let i = activeIndex + 1;
      i <= Math.min(cells.length - 1, activeIndex + neighbours);
      i++
    ) {
      below.push(read(i));
    }
  }
  const outputs: ICellOutputs[] = [];
  cells.forEach((cell, index) => {
    if (cell.type === 'code') {
      outputs.push({
        index,
        executionCount: cell.executionCount,
        outputs: cell.outputs.items.map(o => o.json)
      });
    }
  });
  return {
    active: activeIndex >= 0 ? read(activeIndex) : null,
    above,
    below,
    last_error: findLastError(outputs)
  };
}

function bigNotebook(count: number): FakeNotebook {
  const cells = Array.from({ length: count }, (_, i) => {
    const outputs = [stream(`part ${i}\n`), result(i + 1)];
    if (i === Math.floor(count / 2)) {
      outputs.push(error('KeyError', i));
    }
    return new FakeCell('code', `part${i} = load(${i})`, i + 1, outputs);
  });
  return notebook(cells);
}

function indexOf(nb: FakeNotebook): CellIndex {
  return new CellIndex(nb, cell => nb.list.indexOf(cell as FakeCell));
}

describe('the snapshot of a 1,000-cell notebook', () => {
  it('reads the cells it sends and the error cells, not every cell and output', () => {
    const nb = bigNotebook(1000);
    const index = indexOf(nb);
    // Counted once, when the notebook opens (the collector warms it, off the send path).
    index.warm();
    // The user runs the last cell (a new count, new outputs), then sends.
    nb.list[999].run(1001, [stream('done\n'), result(1001)]);
    reads.cells = reads.outputs = reads.serialised = 0;
    const cells = snapshotCells(nb, index, 999, 1);
    // The active cell and its neighbour; the error cell's outputs, one serialised.
    expect(reads.cells).toBeLessThanOrEqual(2);
    expect(reads.outputs).toBeLessThanOrEqual(3);
    expect(reads.serialised).toBe(1);
    expect(cells).toEqual(walkEveryCell(nb, 999, 1));
    expect(cells.last_error).toMatchObject({
      cell_index: 500,
      cell_prompt: 501,
      ename: 'KeyError'
    });
  });

  it('reads as little at 1,000 cells as at 10', () => {
    const counts = [10, 1000].map(count => {
      const nb = bigNotebook(count);
      const index = indexOf(nb);
      index.warm();
      reads.cells = reads.outputs = reads.serialised = 0;
      snapshotCells(nb, index, count - 1, 2);
      return { ...reads };
    });
    expect(counts[1]).toEqual(counts[0]);
  });
});

describe('the cell index follows every change of the notebook', () => {
  /** A small seeded generator, so a failure replays. */
  function random(seed: number): () => number {
    let state = seed;
    return () => {
      state = (state * 1103515245 + 12345) % 2147483648;
      return state / 2147483648;
    };
  }

  it.each([1, 2, 3, 4, 5])(
    'gives what a walk of every cell gives (seed %d)',
    seed => {
      const next = random(seed);
      const pick = (n: number) => Math.floor(next() * n);
      const nb = notebook(
        Array.from(
          { length: 12 },
          (_, i) => new FakeCell('code', `c${i}`, i + 1, [result(i + 1)])
        )
      );
      const index = indexOf(nb);
      let count = 13;
      const seen = { errors: 0, sharedCounts: 0 };
      for (let step = 0; step < 300; step++) {
        const at = pick(nb.list.length + 1);
        const cell = nb.list[Math.min(at, nb.list.length - 1)];
        switch (pick(7)) {
          case 0:
            nb.insert(
              at,
              pick(3) === 0
                ? new FakeCell('markdown', `## note ${step}`)
                : new FakeCell('code', `new${step}`, null, [])
            );
            break;
          case 1:
            if (nb.list.length > 1) {
              nb.remove(Math.min(at, nb.list.length - 1));
            }
            break;
          case 2:
            if (cell?.type === 'code') {
              // A run that fails, sometimes with chapyter-ext's own failure.
              cell.run(count++, [
                stream('x'),
                error(pick(4) === 0 ? 'ChapyterError' : 'ValueError', step)
              ]);
            }
            break;
          case 3:
            if (cell?.type === 'code') {
              cell.run(count++, [result(count)]);
            }
            break;
          case 4:
            if (pick(10) === 0) {
              // A restart: counts start again, so some are shown twice.
              count = 1 + pick(5);
            }
            break;
          case 5:
            if (cell?.type === 'code') {
              cell.outputs.set([]);
            }
            break;
          default:
            if (cell?.type === 'code') {
              // An error shown twice with the same count (a pasted cell).
              nb.insert(
                at,
                new FakeCell('code', 'pasted', cell.executionCount, [
                  error('TypeError', step)
                ])
              );
            }
        }
        const active = pick(nb.list.length + 1) - 1;
        const neighbours = pick(3);
        const cells = snapshotCells(nb, index, active, neighbours);
        expect(cells).toEqual(walkEveryCell(nb, active, neighbours));
        seen.errors += cells.last_error ? 1 : 0;
        seen.sharedCounts += cells.last_error?.cell_prompt === null ? 1 : 0;
      }
      // The walk met errors, and errors whose count another cell shows too.
      expect(seen.errors).toBeGreaterThan(50);
      expect(seen.sharedCounts).toBeGreaterThan(0);
    }
  );
});
