/**
 * @jest-environment jsdom
 */

/**
 * Undo of Fix's Accept and run: the bar says what Undo will restore (the kernel's preview),
 * Undo restores the variables and puts the cell's code back when it still holds the accepted
 * code (left as it is when edited since), Dismiss lets the kernel's copy go.
 */

import './lumino-dom';

import type { Cell } from '@jupyterlab/cells';

import { KernelUndo } from '../common/kernelUndo';
import { UndoRunBar } from '../fix/undoBar';

/** A kernel that keeps every snapshot; the calls it got, as `fn('turn', step)`. */
function kernel(): { undo: KernelUndo; calls: string[] } {
  const calls: string[] = [];
  const undo = new KernelUndo(async expression => {
    const [, fn, args] = /\.(\w+)\(get_ipython\(\), (.*)\)$/.exec(expression)!;
    calls.push(`${fn}(${args})`);
    if (fn === 'preview') {
      return { available: true, why: null, line: 'Undo restores df.' };
    }
    if (fn === 'restore') {
      return { ok: true, restored: ['df'], line: 'Restored df.' };
    }
    return { ok: true };
  });
  return { undo, calls };
}

/** A cell holding `source`. */
function cell(source: string): Cell & { source: string } {
  const fake = {
    source,
    isDisposed: false,
    model: {
      sharedModel: {
        getSource: () => fake.source,
        setSource: (text: string) => (fake.source = text)
      }
    }
  };
  return fake as unknown as Cell & { source: string };
}

async function settled(): Promise<void> {
  for (let i = 0; i < 5; i++) {
    await new Promise(resolve => setTimeout(resolve, 0));
  }
}

describe('Undo of Accept and run', () => {
  it('shows what it will restore, restores, and puts the code back', async () => {
    const { undo, calls } = kernel();
    const target = cell('df = clean(df)');
    const bar = new UndoRunBar(
      undo,
      'fix-c-1',
      target,
      'df = clen(df)',
      'df = clean(df)'
    );
    const line = bar.node.querySelector('[role="status"]')!;
    const button = bar.node.querySelector<HTMLButtonElement>(
      '[aria-label="Undo the accepted fix and its run"]'
    )!;
    await settled();
    expect(line.textContent).toBe('Undo restores df.');
    expect(button.title).toContain('Undo restores df.');
    button.click();
    await settled();
    expect(line.textContent).toBe(
      "Restored df. The cell's code is back as before (its outputs are the run's)."
    );
    expect(target.source).toBe('df = clen(df)');
    expect(button.hidden).toBe(true);
    bar.node
      .querySelector<HTMLButtonElement>('[aria-label="Dismiss"]')!
      .click();
    await settled();
    expect(bar.isDisposed).toBe(true);
    expect(calls).toEqual([
      "preview('fix-c-1', 0)",
      "restore('fix-c-1', 0)",
      "release('fix-c-1')"
    ]);
    bar.dispose(); // already disposed: nothing more is asked of the kernel
    expect(calls).toHaveLength(3);
  });

  it('leaves code edited since the run as it is', async () => {
    const { undo } = kernel();
    const target = cell('df = clean(df)  # mine');
    const bar = new UndoRunBar(undo, 't', target, 'old', 'df = clean(df)');
    bar.node
      .querySelector<HTMLButtonElement>('.jp-Chapyter-undoRunUndo')!
      .click();
    await settled();
    expect(target.source).toBe('df = clean(df)  # mine');
    expect(bar.node.textContent).toContain('edited since: left as it is');
    bar.dispose();
  });
});
