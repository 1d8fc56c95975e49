import {
  buildContext,
  clipHead,
  clipTail,
  contextSummary,
  findLastError,
  formatContext,
  INotebookSnapshot,
  stripAnsi
} from '../chat/context';
import { cellCode, chatCellMetadata } from '../chat/provenance';
import { sha256Hex } from '../notebook/sha256';

function snapshot(extra: Partial<INotebookSnapshot> = {}): INotebookSnapshot {
  return {
    path: 'work/analysis.ipynb',
    cellCount: 6,
    active: { index: 3, type: 'code', source: "df.groupby('city').sum()" },
    above: [{ index: 2, type: 'markdown', source: '## Rain per city' }],
    below: [{ index: 4, type: 'code', source: 'plot(df)' }],
    selection: '',
    lastError: {
      cellIndex: 4,
      ename: 'NameError',
      evalue: "name 'plot' is not defined",
      traceback: [
        '\u001b[0;31m---------------------------------------------------------------------------\u001b[0m',
        "\u001b[0;31mNameError\u001b[0m: name 'plot' is not defined"
      ]
    },
    variables: [
      {
        name: 'df',
        type: 'DataFrame',
        summary: '3 rows × 2 columns\ncolumns: city, rain'
      },
      { name: 'API_KEY', type: 'str', summary: '<redacted>' }
    ],
    language: 'python',
    ...extra
  };
}

describe('contextSummary', () => {
  it('names the notebook, the cell, the variables and the last error', () => {
    expect(contextSummary(snapshot())).toBe(
      'analysis.ipynb · cell 4 · 2 variables · last error'
    );
  });

  it('mentions a selection and leaves out what is unknown', () => {
    expect(
      contextSummary(
        snapshot({ selection: 'groupby', variables: null, lastError: null })
      )
    ).toBe('analysis.ipynb · cell 4 · selection');
    expect(
      contextSummary(
        snapshot({
          active: null,
          variables: [{ name: 'x', type: 'int', summary: '1' }]
        })
      )
    ).toBe('analysis.ipynb · 1 variable · last error');
  });
});

describe('formatContext', () => {
  it('holds the active cell, neighbours, error without colours, and variables', () => {
    const text = formatContext(snapshot({ selection: 'groupby' }), 6000);
    expect(text).toContain(
      'Notebook: analysis.ipynb (6 cells; the active cell is cell 4)'
    );
    expect(text).toContain('Selected text (in cell 4):\n```\ngroupby\n```');
    expect(text).toContain(
      "Active cell 4 (code):\n```python\ndf.groupby('city').sum()\n```"
    );
    expect(text).toContain(
      "Last error (cell 5): NameError: name 'plot' is not defined"
    );
    expect(text).not.toContain('\u001b');
    expect(text).toContain(
      '- df (DataFrame): 3 rows × 2 columns\n    columns: city, rain'
    );
    expect(text).toContain('- API_KEY (str): <redacted>');
    expect(text).toContain(
      'Cell 3 (markdown, above the active cell):\n```markdown\n## Rain per city\n```'
    );
    expect(text).toContain('Cell 5 (code, below the active cell):');
    // Most useful first: the active cell before the error, the error before the neighbours.
    expect(text.indexOf('Active cell')).toBeLessThan(
      text.indexOf('Last error')
    );
    expect(text.indexOf('Kernel variables')).toBeLessThan(
      text.indexOf('Cell 3')
    );
  });

  it('stays within the budget, dropping the least useful parts first', () => {
    const big = snapshot({
      active: { index: 3, type: 'code', source: 'x = 1\n'.repeat(2000) },
      variables: Array.from({ length: 200 }, (_, i) => ({
        name: `v${i}`,
        type: 'int',
        summary: String(i)
      }))
    });
    for (const budget of [300, 1000, 3000, 6000]) {
      const text = formatContext(big, budget);
      expect(text.length).toBeLessThanOrEqual(budget);
      expect(text).toContain('Notebook: analysis.ipynb');
    }
    const text = formatContext(big, 6000);
    expect(text).toContain('more characters]');
    expect(text).toMatch(/- … \(\d+ more variables\)/);
  });

  it('fences code that itself holds a fence', () => {
    const text = formatContext(
      snapshot({
        active: { index: 0, type: 'markdown', source: '```py\nx\n```' }
      }),
      2000
    );
    expect(text).toContain('````markdown\n```py\nx\n```\n````');
  });

  it('builds the text and the chip together', () => {
    const context = buildContext(snapshot(), 4000);
    expect(context.summary).toBe(
      'analysis.ipynb · cell 4 · 2 variables · last error'
    );
    expect(context.text).toBe(formatContext(snapshot(), 4000));
  });
});

describe('findLastError', () => {
  it('picks the error of the cell run last', () => {
    const error = (ename: string) => ({
      output_type: 'error',
      ename,
      evalue: 'boom',
      traceback: ['t']
    });
    const found = findLastError([
      { index: 0, executionCount: 7, outputs: [error('Late')] },
      { index: 1, executionCount: 3, outputs: [error('Early')] },
      {
        index: 2,
        executionCount: 9,
        outputs: [{ output_type: 'stream', text: 'ok' }]
      },
      { index: 3, executionCount: null, outputs: [error('Never')] }
    ]);
    expect(found).toEqual({
      cellIndex: 0,
      ename: 'Late',
      evalue: 'boom',
      traceback: ['t']
    });
    expect(
      findLastError([{ index: 0, executionCount: 1, outputs: [] }])
    ).toBeNull();
  });
});

describe('clipping', () => {
  it('keeps the head or the tail and says how much was cut', () => {
    expect(clipHead('abc', 5)).toBe('abc');
    const head = clipHead('x'.repeat(500), 100);
    expect(head.length).toBeLessThanOrEqual(100);
    expect(head).toMatch(/more characters\]$/);
    const tail = clipTail('a'.repeat(400) + 'END', 100);
    expect(tail.length).toBeLessThanOrEqual(100);
    expect(tail.endsWith('END')).toBe(true);
  });

  it('strips ANSI colours', () => {
    expect(stripAnsi('\u001b[0;31mNameError\u001b[0m: x')).toBe('NameError: x');
  });
});

describe('chatCellMetadata', () => {
  it('records the provenance of a chat cell like a %%ai cell', () => {
    const code = cellCode("total = rain['mm'].sum()\nprint(total)\n\n");
    expect(code).toBe("total = rain['mm'].sum()\nprint(total)");
    const metadata = chatCellMetadata(code, {
      model: 'gpt-4o-mini',
      endpoint: 'api.openai.com',
      chatId: 'c1',
      messageId: 'm1',
      created: '2026-11-22T10:00:00.123Z'
    });
    expect(metadata).toEqual({
      schema: 1,
      role: 'generated',
      source: 'chat',
      model: 'gpt-4o-mini',
      endpoint: 'api.openai.com',
      created: '2026-11-22T10:00:00.123Z',
      code_sha256: sha256Hex(code),
      edited: false,
      chat_id: 'c1',
      message_id: 'm1'
    });
    expect(Object.keys(metadata).slice(0, 4)).toEqual([
      'schema',
      'role',
      'source',
      'model'
    ]);
  });

  it('uses the current time when the message has none', () => {
    const before = Date.now();
    const metadata = chatCellMetadata('x', {
      model: 'm',
      chatId: null,
      messageId: 'id'
    });
    expect(Date.parse(metadata.created)).toBeGreaterThanOrEqual(before - 1000);
    expect(metadata.created).toMatch(
      /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/
    );
    expect(metadata.chat_id).toBe('');
    expect(metadata).not.toHaveProperty('endpoint');
  });
});
