/**
 * @jest-environment jsdom
 */

/**
 * Every block the chat draws as code goes through the server's guard: the blocks the lexer
 * draws are the ones the server checks (shared vectors), lines of a Markdown list are never
 * offered as code, an indented block or a block the server did not read is not offered
 * without a verdict, and a passing indented block is offered like a fenced one.
 */

// The icons' module ships as ES modules only, which jest cannot load: buttons without icons.
jest.mock('@jupyterlab/ui-components', () => ({
  addBelowIcon: null,
  copyIcon: null,
  runIcon: null
}));

import { AnswerView } from '../chat/answer';
import {
  blockVerdict,
  codeButtons,
  ICodeBlockHandlers,
  LIST_PROBLEM,
  UNCHECKED_PROBLEM
} from '../chat/codeBlocks';
import { codeBlocks, markdownList, parseMarkdown } from '../untrusted/markdown';
import { readVectors } from './vectors';

interface IVectors {
  list_problem: string;
  blocks: {
    name: string;
    text: string;
    blocks: { code: string; fenced: boolean }[];
  }[];
  lists: { code: string; list: boolean }[];
}

const VECTORS = readVectors<IVectors>('code_blocks.json');

describe('the blocks drawn as code (tests/vectors/code_blocks.json)', () => {
  it.each(VECTORS.blocks.map(v => [v.name, v] as const))(
    '%s',
    (_name, vector) => {
      const found = codeBlocks(parseMarkdown(vector.text, 'http://x/')).map(
        block => ({ code: block.code, fenced: block.fenced })
      );
      expect(found).toEqual(vector.blocks);
    }
  );

  it.each(VECTORS.lists.map(v => [JSON.stringify(v.code), v] as const))(
    'Markdown list or not: %s',
    (_name, vector) => {
      expect(markdownList(vector.code)).toBe(vector.list);
    }
  );
});

/** Handlers that record what was inserted; `checks`: the server's verdicts by code. */
function handlers(checks: {
  [code: string]: { runnable: boolean; problem: string };
}): ICodeBlockHandlers & { inserted: string[] } {
  const inserted: string[] = [];
  // By the code itself: jsdom has no TextEncoder for the real key (`codeBlockKey`).
  const byCode = new Map(Object.entries(checks));
  return {
    inserted,
    insert: code => inserted.push(code),
    copy: () => undefined,
    verdict: code => byCode.get(code) ?? null
  };
}

function labels(bar: HTMLElement | null): string[] {
  return Array.from(bar?.querySelectorAll('button') ?? []).map(
    b => b.getAttribute('aria-label') ?? ''
  );
}

describe('the buttons under a code block', () => {
  it('never offer lines of a Markdown list, whatever the verdict', () => {
    expect(LIST_PROBLEM).toBe(VECTORS.list_problem);
    const passed = handlers({
      '- 12.\n- 13.': { runnable: true, problem: '' }
    });
    expect(blockVerdict('- 12.\n- 13.', true, passed)).toEqual({
      runnable: false,
      problem: LIST_PROBLEM
    });
    const bar = codeButtons('- 12.\n- 13.', passed, false);
    expect(labels(bar)).toEqual(['Copy']);
    expect(bar!.textContent).toContain(`Not offered to run: ${LIST_PROBLEM}.`);
  });

  it('offer an indented block only with a passing verdict', () => {
    const none = handlers({});
    expect(labels(codeButtons('x = 1', none, false))).toEqual(['Copy']);
    expect(codeButtons('x = 1', none, false)!.textContent).toContain(
      UNCHECKED_PROBLEM
    );
    // A fenced block of an older answer (no verdicts at all) keeps its buttons.
    expect(labels(codeButtons('x = 1', none, true))).toEqual([
      'Insert below',
      'Insert and run',
      'Copy'
    ]);
    const passed = handlers({ 'x = 1': { runnable: true, problem: '' } });
    expect(labels(codeButtons('x = 1', passed, false))).toEqual([
      'Insert below',
      'Insert and run',
      'Copy'
    ]);
    const failed = handlers({
      'x = (': { runnable: false, problem: 'it does not parse' }
    });
    expect(labels(codeButtons('x = (', failed, false))).toEqual(['Copy']);
  });
});

describe('an answer drawn with its verdicts', () => {
  const answer = [
    'Here:',
    '',
    "    df = pd.read_csv('x.csv'",
    '',
    'The values:',
    '',
    '    - 12.',
    '    - 13.',
    '',
    '<pre>',
    "print('raw')",
    '</pre>',
    '',
    'And:',
    '',
    '    total = 1 + 2',
    ''
  ].join('\n');

  it('offers only the indented block that passed; raw <pre> is text', () => {
    const view = new AnswerView({});
    const h = handlers({
      "df = pd.read_csv('x.csv'": {
        runnable: false,
        problem: "it does not parse (line 1: '(' was never closed)"
      },
      // A server that let the list pass is overruled.
      '- 12.\n- 13.': { runnable: true, problem: '' },
      'total = 1 + 2': { runnable: true, problem: '' }
    });
    view.render(answer, h);
    const blocks = Array.from(
      view.node.querySelectorAll<HTMLElement>('.jp-Chapyter-codeBlock')
    );
    expect(blocks.map(b => b.querySelector('pre')!.textContent)).toEqual([
      "df = pd.read_csv('x.csv'",
      '- 12.\n- 13.',
      'total = 1 + 2'
    ]);
    expect(blocks.map(b => labels(b as HTMLElement))).toEqual([
      ['Copy'],
      ['Copy'],
      ['Insert below', 'Insert and run', 'Copy']
    ]);
    const raw = view.node.querySelector('.jp-Chapyter-rawHtml')!;
    expect(raw.textContent).toContain("print('raw')");
    expect(raw.querySelector('button')).toBeNull();
    blocks[2].querySelector<HTMLButtonElement>('button')!.click();
    expect(h.inserted).toEqual(['total = 1 + 2']);
  });
});
