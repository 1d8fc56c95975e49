import {
  findLastError,
  INotebookSnapshot,
  previewContext,
  variablesExpression
} from '../common/snapshot';
import { cellCode, chatCellMetadata, sha256Hex } from '../contract';

// How the snapshot becomes text (sections, budget, redaction) is the server's job and is
// tested there: tests/test_context_notebook.py and tests/server/test_context_route.py.

function snapshot(extra: Partial<INotebookSnapshot> = {}): INotebookSnapshot {
  return {
    path: 'work/analysis.ipynb',
    cell_count: 6,
    active: { index: 3, type: 'code', source: "df.groupby('city').sum()" },
    above: [{ index: 2, type: 'markdown', source: '## Rain per city' }],
    below: [{ index: 4, type: 'code', source: 'plot(df)' }],
    selection: '',
    last_error: null,
    variables: [
      { name: 'df', type: 'DataFrame', summary: '3 rows × 2 columns' }
    ],
    language: 'python',
    ...extra
  };
}

const error = (ename: string) => ({
  output_type: 'error',
  ename,
  evalue: 'boom',
  traceback: ['t']
});

describe('findLastError', () => {
  it('picks the error of the cell run last, in the wire shape', () => {
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
      cell_index: 0,
      cell_prompt: 7,
      ename: 'Late',
      evalue: 'boom',
      traceback: ['t']
    });
    expect(
      findLastError([{ index: 0, executionCount: 1, outputs: [] }])
    ).toBeNull();
  });

  it("never takes chapyter-ext's own failure for the user's last error", () => {
    const own = {
      output_type: 'error',
      ename: 'ChapyterError',
      evalue: '',
      traceback: ['\u001b[31mchapyter-ext:\u001b[0m The model is down.']
    };
    // A failed %%ai after the user's own error: the user's error is still the last one.
    expect(
      findLastError([
        { index: 0, executionCount: 4, outputs: [error('NameError')] },
        { index: 1, executionCount: 5, outputs: [own] }
      ])
    ).toEqual({
      cell_index: 0,
      cell_prompt: 4,
      ename: 'NameError',
      evalue: 'boom',
      traceback: ['t']
    });
    expect(
      findLastError([{ index: 1, executionCount: 5, outputs: [own] }])
    ).toBeNull();
  });
});

describe('variablesExpression', () => {
  it("asks describe_variables for the server's budget, binding no name", () => {
    const expression = variablesExpression(6000);
    expect(expression).toContain(
      'describe_variables(get_ipython().user_ns, get_ipython().user_ns_hidden, budget=6000))'
    );
    expect(expression).not.toMatch(/\b\w+ = /); // an expression: no assignment
    expect(variablesExpression(null)).toContain(
      'get_ipython().user_ns_hidden))'
    );
    expect(variablesExpression(0)).not.toContain('budget=');
    expect(variablesExpression(1234.7)).toContain('budget=1234)');
  });
});

describe('previewContext', () => {
  it("shows the server's text and chip, and keeps the snapshot to send", async () => {
    const sent: INotebookSnapshot[] = [];
    const snap = snapshot();
    const context = await previewContext(snap, async s => {
      sent.push(s);
      return {
        text: 'Notebook: analysis.ipynb',
        summary: 'analysis.ipynb · 4th cell · 1 variable',
        chars: 24,
        rules: [{ path: 'AGENTS.md', chars: 120 }]
      };
    });
    expect(sent).toEqual([snap]);
    expect(context).toEqual({
      text: 'Notebook: analysis.ipynb',
      summary: 'analysis.ipynb · 4th cell · 1 variable',
      chars: 24,
      rules: [{ path: 'AGENTS.md', chars: 120 }],
      snapshot: snap
    });
  });

  it('still sends the snapshot when the server cannot preview it', async () => {
    const snap = snapshot();
    const context = await previewContext(snap, async () => {
      throw new Error('Bad Gateway');
    });
    expect(context.snapshot).toBe(snap);
    expect(context.text).toBe('');
    expect(context.summary).toBe('Context preview unavailable: Bad Gateway');
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
