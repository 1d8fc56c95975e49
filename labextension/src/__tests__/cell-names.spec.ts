/**
 * @jest-environment jsdom
 */

/**
 * Cells named as JupyterLab shows them (cellNames.ts, against the server's
 * `tests/vectors/cell_names.json`), and the error bar: a busy Fix where the click was, and
 * "Ask again" instead of Fix / Explain on chapyter-ext's own `%%ai` failure line.
 */

import { cellName, cellNameIn, ownPrompts } from '../cellNames';
import { OWN_ERROR_NAMES } from '../common/snapshot';
import './lumino-dom';
import { ErrorBar, errorBarKind, FIXING } from '../fix/errorBarView';
import { readVectors } from './vectors';

interface INameVectors {
  notebooks: {
    counts: (number | null)[];
    prompts: (number | null)[];
    names: string[];
  }[];
}

describe('cell names (tests/vectors/cell_names.json)', () => {
  const { notebooks } = readVectors<INameVectors>('cell_names.json');

  it.each(notebooks.map((nb, i) => [i, nb] as const))(
    'notebook %d is named as the server names it',
    (_, notebook) => {
      expect(ownPrompts(notebook.counts)).toEqual(notebook.prompts);
      const names = notebook.prompts.map((p, i) => cellName(i + 1, p));
      expect(names).toEqual(notebook.names);
      const cells = notebook.counts.map(count =>
        count === null
          ? { type: 'markdown' }
          : { type: 'code', executionCount: count }
      );
      expect(cells.map((_, i) => cellNameIn(cells, i))).toEqual(notebook.names);
    }
  );

  it('names the [4] JupyterLab shows, not the place of the cell', () => {
    // The issue: a step said "5th cell" where JupyterLab shows [4].
    const cells = [
      { type: 'markdown' },
      { type: 'code', executionCount: 1 },
      { type: 'code', executionCount: 2 },
      { type: 'code', executionCount: 3 },
      { type: 'code', executionCount: 4 }
    ];
    expect(cellNameIn(cells, 4)).toBe('cell [4]');
    expect(cellNameIn([...cells, { type: 'code' }], 5)).toBe('the 6th cell');
  });
});

describe('the error bar', () => {
  const noop = { fix: jest.fn(), explain: jest.fn(), askAgain: jest.fn() };
  const labels = (bar: ErrorBar) =>
    Array.from(bar.node.querySelectorAll('button')).map(b =>
      b.getAttribute('aria-label')
    );

  it("offers Ask again, not Fix or Explain, on chapyter-ext's own failure", () => {
    expect(OWN_ERROR_NAMES).toContain('ChapyterError');
    const own = { ename: 'ChapyterError', evalue: 'model down', traceback: [] };
    expect(errorBarKind(own)).toBe('own');
    const actions = { ...noop, askAgain: jest.fn() };
    const bar = new ErrorBar(errorBarKind(own), actions, []);
    expect(labels(bar)).toEqual(['Ask again']);
    bar.node.querySelector('button')!.click();
    expect(actions.askAgain).toHaveBeenCalledTimes(1);
    bar.dispose();
  });

  it('offers Fix and Explain on an error of the code', () => {
    const error = { ename: 'NameError', evalue: "name 'x'", traceback: [] };
    expect(errorBarKind(error)).toBe('code');
    const bar = new ErrorBar('code', noop, []);
    expect(labels(bar)).toEqual(['Fix', 'Explain']);
    bar.dispose();
  });

  it('shows Fixing… on the button itself while asked, and ignores clicks', () => {
    const actions = { ...noop, fix: jest.fn() };
    const bar = new ErrorBar('code', actions, []);
    const fix = bar.node.querySelector('button')!;
    bar.setBusy(true);
    expect(fix.getAttribute('aria-busy')).toBe('true');
    expect(fix.getAttribute('aria-label')).toBe(FIXING);
    expect(fix.textContent).toBe(FIXING);
    fix.click();
    expect(actions.fix).not.toHaveBeenCalled();
    bar.setBusy(false);
    expect(fix.getAttribute('aria-busy')).toBe('false');
    expect(fix.textContent).toBe('Fix');
    fix.click();
    expect(actions.fix).toHaveBeenCalledTimes(1);
    bar.dispose();
  });
});
