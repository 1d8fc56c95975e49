/**
 * "Load as variable" without DOM: the variable's name, the cell's code, whether pandas is
 * imported already, and the sent files this page keeps (`SentFiles`), bounded.
 */

import {
  MAX_KEPT,
  PendingAttachments,
  SentFiles,
  TOTAL_LIMIT
} from '../chat/attachmentRules';
import {
  importsPandas,
  isLoadable,
  loadCode,
  variableName
} from '../chat/loadTable';

describe('Load as variable', () => {
  it.each([
    ['sales.csv', 'sales'],
    ['Sales Q1 2024.xlsx', 'sales_q1_2024'],
    ['2024.parquet', 'df_2024'],
    ['class.json', 'class_df'],
    ['---.csv', 'df']
  ])('names %s %s', (file, name) => {
    expect(variableName(file)).toBe(name);
  });

  it('writes the cell that reads each format', () => {
    expect(loadCode('sales.csv', 'sales', true)).toBe(
      'import pandas as pd\nsales = pd.read_csv("sales.csv")\nsales'
    );
    expect(loadCode('t.tsv', 't', false)).toBe(
      't = pd.read_csv("t.tsv", sep="\\t")\nt'
    );
    expect(loadCode('a "b".xlsx', 'a_b', false)).toBe(
      'a_b = pd.read_excel("a \\"b\\".xlsx")\na_b'
    );
    expect(isLoadable('x.parquet')).toBe(true);
    expect(isLoadable('x.txt')).toBe(false);
  });

  it('imports pandas only when no cell does', () => {
    expect(importsPandas(['x = 1', 'import pandas as pd'])).toBe(true);
    expect(importsPandas(['import pandas', '# import pandas as pd2'])).toBe(
      false
    );
  });

  it('keeps the most recent sent files, found by their note', () => {
    const sent = new SentFiles();
    const files = Array.from({ length: MAX_KEPT + 1 }, (_, i) => ({
      name: `f${i}.csv`,
      type: 'text/csv',
      size: i,
      data: 'eA=='
    }));
    sent.keep(files);
    expect(sent.find({ name: 'f0.csv', type: 'text/csv', size: 0 })).toBeNull();
    expect(sent.find({ name: 'f3.csv', type: 'text/csv', size: 3 })?.data).toBe(
      'eA=='
    );
  });

  it('keeps what is taken from the composer, and bounds the files together', () => {
    const pending = new PendingAttachments();
    const half = TOTAL_LIMIT / 2;
    expect(
      pending.add({ name: 'a.csv', type: '', size: half, data: '' })
    ).toBeTruthy();
    expect(
      pending.add({ name: 'b.csv', type: '', size: half, data: '' })
    ).toBeTruthy();
    expect(pending.admit({ name: 'c.txt', type: '', size: 1 })).toBe(
      '"c.txt" was not attached: the files of one message can be at most 20 MB together.'
    );
    pending.take();
    expect(
      pending.sent.find({ name: 'a.csv', type: 'text/csv', size: half })
    ).toBeTruthy();
  });
});
