/** The pure logic of Fix / Edit with AI: finder, diff, similarity. */

import {
  assigns,
  failingName,
  findDefiningCells,
  ICellCode,
  lineDiff,
  lineSimilarity,
  similarCell
} from '../fix/logic';

const cells = (...sources: string[]): ICellCode[] =>
  sources.map((source, index) => ({ id: `c${index}`, index, source }));

const nameError = (name: string) => ({
  ename: 'NameError',
  evalue: `name '${name}' is not defined`,
  traceback: []
});

describe('failingName', () => {
  it('reads NameError and KeyError', () => {
    expect(failingName(nameError('x'))).toEqual({ kind: 'name', name: 'x' });
    expect(
      failingName({ ename: 'KeyError', evalue: "'col'", traceback: [] })
    ).toEqual({ kind: 'column', name: 'col' });
    expect(
      failingName({ ename: 'ValueError', evalue: 'bad', traceback: [] })
    ).toBeNull();
  });
});

describe('assigns', () => {
  it('knows assignments, imports, defs and loops but not comparisons', () => {
    expect(assigns('x = 1', 'x')).toBe(true);
    expect(assigns('a, x = 1, 2', 'x')).toBe(true);
    expect(assigns('x += 1', 'x')).toBe(true);
    expect(assigns('import numpy as np', 'np')).toBe(true);
    expect(assigns('def f():\n    pass', 'f')).toBe(true);
    expect(assigns('for x in y:\n    pass', 'x')).toBe(true);
    expect(assigns('x == 1', 'x')).toBe(false);
    expect(assigns('xy = 1', 'x')).toBe(false);
    expect(assigns('print(x)', 'x')).toBe(false);
  });
});

describe('findDefiningCells', () => {
  it('NameError: the last earlier cell assigning the name', () => {
    const nb = cells('x = 1', 'y = 2', 'x = 3', 'print(x + z)', 'x = 9');
    expect(findDefiningCells(nb, nb[3], nameError('x')).map(c => c.id)).toEqual(
      ['c2']
    );
    expect(findDefiningCells(nb, nb[3], nameError('z'))).toEqual([]);
  });

  it('KeyError: the cell mentioning the column, then the frame maker', () => {
    const nb = cells(
      "df = pd.DataFrame({'a': [1]})",
      "df = df.rename(columns={'a': 'amount'})",
      'other = 1',
      "df['amount_usd'].sum()"
    );
    const found = findDefiningCells(nb, nb[3], {
      ename: 'KeyError',
      evalue: "'amount_usd'",
      traceback: []
    });
    expect(found.map(c => c.id)).toEqual(['c1']);
    const direct = cells("df = pd.DataFrame({'col': [1]})", "df['col2']");
    expect(
      findDefiningCells(direct, direct[1], {
        ename: 'KeyError',
        evalue: "'col2'",
        traceback: []
      }).map(c => c.id)
    ).toEqual(['c0']);
  });
});

describe('lineDiff', () => {
  it('marks removed and added lines, keeps the rest', () => {
    expect(lineDiff('a\nb\nc', 'a\nB\nc\nd')).toEqual([
      { kind: 'same', text: 'a' },
      { kind: 'removed', text: 'b' },
      { kind: 'added', text: 'B' },
      { kind: 'same', text: 'c' },
      { kind: 'added', text: 'd' }
    ]);
    expect(lineDiff('', 'x')).toEqual([{ kind: 'added', text: 'x' }]);
    expect(lineDiff('x\n', 'x')).toEqual([{ kind: 'same', text: 'x' }]);
  });
});

describe('similarity', () => {
  it('is the share of common lines', () => {
    expect(lineSimilarity('a\nb', 'a\nb')).toBe(1);
    expect(lineSimilarity('a\nb', 'a\nc')).toBe(0.5);
    expect(lineSimilarity('a', 'b')).toBe(0);
    expect(lineSimilarity('', '')).toBe(0);
  });

  it('picks the most alike cell at or above 0.5, never an identical one', () => {
    const nb = cells('import pandas', 'x = 1\ny = 2\nz = 3', 'x = 1\ny = 2');
    expect(similarCell(nb, 'x = 1\ny = 2\nz = 4')?.id).toBe('c2');
    expect(similarCell(nb, 'x = 1\ny = 2')?.id).toBe('c1');
    expect(similarCell(nb, 'print(1)')).toBeNull();
  });
});
