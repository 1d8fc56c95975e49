/**
 * What a message's @-mentions send besides their names (`chat/mentionDetails.ts`): a cell's
 * text found by id and named as JupyterLab shows it, its outputs as text, the variables the
 * snapshot lacks and the expression that reads only them.
 */

import type { INotebookSnapshot } from '../common/snapshot';
import {
  mentionedVariablesExpression,
  outputsText,
  variablesToRead,
  withDetails
} from '../chat/mentionDetails';
import type { IChatMention } from '../chat/tokens';

const SNAPSHOT: INotebookSnapshot = {
  path: 'a.ipynb',
  cell_count: 2,
  active: null,
  above: [],
  below: [],
  selection: '',
  last_error: null,
  variables: [
    { name: 'rain', type: 'DataFrame', summary: '3 rows × 2 columns' },
    { name: 'late', type: 'int', summary: '' }
  ],
  language: 'python'
};

const MENTIONS: IChatMention[] = [
  { kind: 'variable', name: 'rain', label: 'rain' },
  { kind: 'variable', name: 'late', label: 'late' },
  { kind: 'variable', name: 'gone', label: 'gone' },
  { kind: 'cell', cellId: 'c2', label: 'cell [1]' },
  { kind: 'file', path: 'data/a.csv', label: 'data/a.csv' }
];

describe('mention details', () => {
  it('read only the variables the snapshot has no summary of', () => {
    expect(variablesToRead(MENTIONS, SNAPSHOT)).toEqual(['late', 'gone']);
    expect(variablesToRead(MENTIONS, null)).toEqual(['rain', 'late', 'gone']);
  });

  it('read them with an expression that names only identifiers', () => {
    const expression = mentionedVariablesExpression(['late', 'x); import os']);
    expect(expression).toContain('for n in ["late"] if n in');
    expect(expression).not.toContain('import os');
    expect(expression).toContain('describe_variables(dict((n, ');
  });

  it('turn outputs into text', () => {
    expect(
      outputsText([
        { output_type: 'stream', name: 'stdout', text: ['a\n', 'b\n'] },
        { output_type: 'execute_result', data: { 'text/plain': '1501' } },
        { output_type: 'display_data', data: { 'image/png': 'xx' } },
        {
          output_type: 'error',
          ename: 'KeyError',
          evalue: "'x'",
          traceback: ['\u001b[31mKeyError\u001b[0m: x']
        }
      ])
    ).toBe("a\nb\n1501\n[image/png output]\nKeyError: 'x'\nKeyError: x");
  });

  it('add each cell its text and its name now, each variable what was read', () => {
    const cells = [
      {
        id: 'c1',
        type: 'code',
        executionCount: 5,
        source: 'x = 1',
        outputs: []
      },
      {
        id: 'c2',
        type: 'code',
        executionCount: 6,
        source: 'x + 1',
        outputs: [
          { output_type: 'execute_result', data: { 'text/plain': '2' } }
        ]
      }
    ];
    const read = [{ name: 'late', type: 'int', summary: '7' }];
    const sent = withDetails(MENTIONS, cells, read);
    expect(sent[3]).toEqual({
      kind: 'cell',
      cellId: 'c2',
      label: 'cell [6]',
      source: 'x + 1',
      outputs: '2'
    });
    expect(sent[1].variable).toEqual(read[0]);
    expect(sent[0].variable).toBeUndefined();
    expect(sent[4]).toEqual(MENTIONS[4]);
    // A cell no longer there keeps its name only.
    expect(withDetails(MENTIONS, [], [])[3]).toEqual(MENTIONS[3]);
  });
});
