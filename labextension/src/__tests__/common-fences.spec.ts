/**
 * The browser's fenced-block reader follows the Python side's rule (`fence_spans` in
 * `chapyter_ext/parsing/fences.py`): the expected blocks below are what `fenced_blocks` returns
 * for the same answers.
 */

import { fencedBlocks, partialCode } from '../common/fences';

const CASES: [string, string, [string, string][]][] = [
  [
    'a fence indented inside a list item',
    '1. Run this:\n\n   ```python\n   df = load()\n     df.head()\n   ```\n2. Done',
    [['python', 'df = load()\n  df.head()']]
  ],
  [
    'a tilde fence holding backticks',
    "~~~py\nx = '```'\n~~~\n",
    [['py', "x = '```'"]]
  ],
  [
    'a longer fence around a shorter one',
    '````python\n```\ninner\n```\n````\nafter',
    [['python', '```\ninner\n```']]
  ],
  [
    'backticks inside a line are no fence',
    'Use ```x``` here\n```\ny = 2\n```',
    [['', 'y = 2']]
  ],
  [
    'a cut answer runs to the end',
    'Here:\n```{.python}\nfor i in range(3):\n    print(i)',
    [['python', 'for i in range(3):\n    print(i)']]
  ],
  [
    'CRLF and a capitalised language',
    '```Python\r\nx = 1\r\n```\r\n',
    [['python', 'x = 1']]
  ],
  [
    'every block, in order',
    '```python\na = 1\n```\ntext\n```bash\nls\n```',
    [
      ['python', 'a = 1'],
      ['bash', 'ls']
    ]
  ]
];

describe('fencedBlocks', () => {
  it.each(CASES)('%s', (_name, answer, expected) => {
    expect(fencedBlocks(answer).map(b => [b.language, b.code])).toEqual(
      expected
    );
  });

  it('says whether the closing fence came', () => {
    expect(fencedBlocks('```\na\n```\n```\nb').map(b => b.closed)).toEqual([
      true,
      false
    ]);
  });
});

describe('partialCode', () => {
  it('shows nothing before a fence opens', () => {
    expect(partialCode('Sure, here is')).toBe('');
    expect(partialCode('Sure:\n``')).toBe('');
  });

  it('shows the inside of an open fence as it grows', () => {
    expect(partialCode('Sure:\n```python\nimport pan')).toBe('import pan');
  });

  it('stops at the closing fence', () => {
    expect(partialCode('```python\nx = 1\n```\nThat sets x.')).toBe('x = 1');
  });

  it('reads a fence the model indented, as the kernel side does', () => {
    expect(partialCode('Steps:\n  ```python\n  x = 1\n  y = 2')).toBe(
      'x = 1\ny = 2'
    );
  });
});
