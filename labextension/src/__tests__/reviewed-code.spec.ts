/**
 * What a person reviews is what runs: invisible characters are named in code under review,
 * a fix proposal's diff is drawn from the string Accept applies, and "Apply to cell N" is
 * given the code block's source as a cell holds it.
 */

import { ChatExtension, IChatExtensionOptions } from '../chat/extension';
import { cellCode } from '../contract';
import { IFixProposal } from '../fix/client';
import { applyProposal, proposalDiff, proposedSource } from '../fix/proposal';
import {
  countInvisible,
  describeInvisible,
  isInvisible,
  splitInvisible
} from '../untrusted/invisible';
import { imageSource, linkHref } from '../untrusted/urls';

describe('invisible characters', () => {
  it('are found one by one, tabs and newlines are not', () => {
    // The "Trojan Source" shape: a right-to-left override inside a string.
    const code =
      'access = "user\u202e \u2066# admin\u2069 \u2066"\n\tok\u200b = 1';
    expect(splitInvisible(code)).toEqual([
      { kind: 'text', text: 'access = "user' },
      { kind: 'invisible', codePoint: 0x202e },
      { kind: 'text', text: ' ' },
      { kind: 'invisible', codePoint: 0x2066 },
      { kind: 'text', text: '# admin' },
      { kind: 'invisible', codePoint: 0x2069 },
      { kind: 'text', text: ' ' },
      { kind: 'invisible', codePoint: 0x2066 },
      { kind: 'text', text: '"\n\tok' },
      { kind: 'invisible', codePoint: 0x200b },
      { kind: 'text', text: ' = 1' }
    ]);
    expect(countInvisible(code)).toBe(5);
    expect(countInvisible('plain\tcode\nwith ünïcode ✓ 🙂')).toBe(0);
  });

  it('include controls, tag characters and Hangul fillers', () => {
    for (const codePoint of [0x00, 0x0d, 0x1b, 0x7f, 0x85, 0xe0041, 0x3164]) {
      expect(isInvisible(codePoint)).toBe(true);
    }
    expect(describeInvisible(0x202e)).toBe('U+202E right-to-left override');
    expect(describeInvisible(0xe0041)).toBe('U+E0041');
  });
});

describe('urls', () => {
  const base = 'https://lab.example/lab';
  it('name the host an image would be fetched from', () => {
    expect(imageSource('\\\\evil.example/x.png', base)).toMatchObject({
      kind: 'remote',
      host: 'evil.example'
    });
    expect(imageSource('  ', base).kind).toBe('blocked');
    expect(imageSource('DATA:image/svg+xml,<svg/>', base).kind).toBe('inline');
  });

  it('open no script, whatever its spelling', () => {
    expect(linkHref(' javascript:alert(1)', base)).toBeNull();
    expect(linkHref('java\nscript:alert(1)', base)).toBeNull();
    expect(linkHref('vbscript:x', base)).toBeNull();
    expect(linkHref('//cdn.example/x', base)).toBe('https://cdn.example/x');
  });
});

const PROPOSAL: IFixProposal = {
  cell_id: 'c1',
  code: 'import pandas as pd\r\ndf = pd.read_csv("a.csv")\rprint(df)\n\n',
  explanation: 'Read the file.',
  model: 'fake-model',
  kind: 'fix',
  request_sha256: 'a'.repeat(64)
};

/** A cell model with just what `applyProposal` uses. */
function fakeCell(source: string) {
  const metadata: { [key: string]: unknown } = {};
  const shared = {
    source,
    getSource: () => shared.source,
    setSource: (value: string) => (shared.source = value),
    transact: (change: () => void) => change()
  };
  return {
    shared,
    metadata,
    model: {
      sharedModel: shared,
      getMetadata: (key: string) => metadata[key],
      setMetadata: (key: string, value: unknown) => (metadata[key] = value)
    } as any
  };
}

describe('fix proposals', () => {
  it('are diffed and applied as one string', () => {
    const before = 'import pandas as pd\ndf = pd.read_csv("b.csv")';
    const source = proposedSource(PROPOSAL);
    expect(source).toBe(
      'import pandas as pd\ndf = pd.read_csv("a.csv")\nprint(df)'
    );
    // The new side of the diff, read top to bottom, is the code Accept puts in the cell.
    const shown = proposalDiff(before, PROPOSAL)
      .filter(line => line.kind !== 'removed')
      .map(line => line.text)
      .join('\n');
    expect(shown).toBe(source);
    const cell = fakeCell(before);
    expect(applyProposal(cell.model, PROPOSAL, before)).toBeNull();
    expect(cell.shared.source).toBe(source);
    expect((cell.metadata.chapyter as any).code_sha256).toBeDefined();
  });

  it('are refused when the cell changed since the diff was drawn', () => {
    const cell = fakeCell('x = 2');
    expect(applyProposal(cell.model, PROPOSAL, 'x = 1')).toMatch(/changed/);
    expect(cell.shared.source).toBe('x = 2');
  });
});

describe('Apply to cell N', () => {
  const chat = () => new ChatExtension({} as IChatExtensionOptions);

  it('is asked with the code block as a cell holds it', () => {
    const asked: string[] = [];
    const withFix = chat();
    withFix.addCodeAction(code => {
      asked.push(code);
      return { label: 'Apply to cell 2', apply: () => undefined };
    });
    const code = 'df = df.dropna()\r\nprint(df)\n';
    expect(withFix.codeOffer(code, { model: 'm' })?.label).toBe(
      'Apply to cell 2'
    );
    expect(asked).toEqual([cellCode(code)]);
    expect(asked[0]).toBe('df = df.dropna()\nprint(df)');
  });

  it('offers nothing without the Fix plugin', () => {
    expect(chat().codeOffer('x = 1', { model: 'm' })).toBeNull();
  });

  it('offers the first action that has one', () => {
    const withTwo = chat();
    withTwo.addCodeAction(() => null);
    withTwo.addCodeAction(() => ({ label: 'second', apply: () => undefined }));
    expect(withTwo.codeOffer('x = 1', { model: 'm' })?.label).toBe('second');
  });
});
