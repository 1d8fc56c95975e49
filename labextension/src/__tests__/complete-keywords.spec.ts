/** Ghost text with a keyword its callee does not accept is dropped. */

import type { InlineCompletionTriggerKind } from '@jupyterlab/completer';

import {
  Accepted,
  KeywordCache,
  KeywordGate,
  scanKeywords
} from '../complete/keywords';
import { keywordsExpression } from '../complete/kernelNames';
import { CompletionEvent, FailureTracker } from '../complete/logic';
import { ChapyterInlineProvider, INotebookSource } from '../complete/provider';

/** What the kernel answers for the callees of the cases (as `accepted_keywords` does). */
const KERNEL: Record<string, Accepted> = {
  // A DataFrame's method, bound: no `self`.
  'sales.sort_values': {
    names: ['by', 'axis', 'ascending', 'inplace', 'kind', 'na_position']
  },
  sorted: { names: ['key', 'reverse'] },
  // A builtin without a signature.
  dict: null,
  // **kwargs.
  'sales.plot.bar': { any: true },
  // Positional-only: math.floor(x, /).
  'math.floor': { names: [] },
  f: { names: ['a'] }
};
const known = (callee: string) => KERNEL[callee];

describe('KeywordGate', () => {
  const cases: {
    name: string;
    prefix: string;
    text: string;
    final?: boolean;
    shown: string;
    rejected?: string;
  }[] = [
    {
      name: 'a DataFrame method, a keyword it does not take',
      prefix: 'sales.sort_values(',
      text: "by_region='revenue')",
      shown: '',
      rejected: 'sales.sort_values(by_region=...)'
    },
    {
      name: 'a DataFrame method, its own keyword',
      prefix: 'sales.sort_values(',
      text: "by='revenue')",
      shown: "by='revenue')"
    },
    {
      name: 'a builtin without a signature: kept',
      prefix: 'd = dict(',
      text: 'a=1, b=2)',
      shown: 'a=1, b=2)'
    },
    {
      name: '**kwargs takes anything',
      prefix: 'sales.plot.bar(',
      text: "x='region', colour='red')",
      shown: "x='region', colour='red')"
    },
    {
      name: 'positional-only is no keyword',
      prefix: 'math.floor(',
      text: 'x=2.5)',
      shown: '',
      rejected: 'math.floor(x=...)'
    },
    {
      name: 'nested calls, each keyword to its own callee',
      prefix: 'sales.sort_values(',
      text: 'by=sorted(cols, reverse=True), ascending=False)',
      shown: 'by=sorted(cols, reverse=True), ascending=False)'
    },
    {
      name: 'nested calls, the inner one wrong',
      prefix: 'sales.sort_values(',
      text: 'by=sorted(cols, reversed=True), ascending=False)',
      shown: '',
      rejected: 'sorted(reversed=...)'
    },
    {
      name: 'a partial call at the end: the growing name is held',
      prefix: 'sales.sort_values(',
      text: "by='revenue', asc",
      final: false,
      shown: "by='revenue', "
    },
    {
      name: 'a partial call at the end, once whole',
      prefix: 'sales.sort_values(',
      text: "by='revenue', asc",
      shown: "by='revenue', asc"
    },
    {
      name: 'a later line: the suggestion ends before it',
      prefix: '',
      text: 'x = 1\ny = f(b=2)',
      shown: 'x = 1',
      rejected: 'f(b=...)'
    },
    {
      name: 'definitions, lambdas, strings and comparisons are no keywords',
      prefix: '',
      text: "def g(a=1):\n    return sorted(a, key=lambda v, w=2: v) == f'{a=}'  # f(b=1)",
      shown:
        "def g(a=1):\n    return sorted(a, key=lambda v, w=2: v) == f'{a=}'  # f(b=1)"
    },
    {
      name: "a call's result: nothing to look up, kept",
      prefix: "sales.groupby('region').agg(",
      text: "total=('revenue', 'sum'))",
      shown: "total=('revenue', 'sum'))"
    },
    {
      name: 'a name the cell redefines: the kernel may be stale, kept',
      prefix: 'def f(b):\n    return b\nf(',
      text: 'b=1)',
      shown: 'b=1)'
    }
  ];
  it.each(cases)('$name', ({ prefix, text, final, shown, rejected }) => {
    const result = new KeywordGate(prefix, '').judge(
      text,
      known,
      final ?? true
    );
    expect(result.pending).toEqual([]);
    expect(text.slice(0, result.visible)).toBe(shown);
    expect(result.rejected).toBe(rejected ?? null);
  });

  it('holds a keyword back until its callee is read', () => {
    const gate = new KeywordGate('x = 1\nsales.sort_values(', ')');
    expect(gate.openCallees()).toEqual(['sales.sort_values']);
    const result = gate.judge("by='revenue', key=len", () => undefined, false);
    expect(result.pending).toEqual(['sales.sort_values']);
    expect(result.visible).toBe(0);
  });
});

describe('scanKeywords', () => {
  it('finds the calls open at the end, and keywords from the start given', () => {
    const code = "pd.read_csv('a.csv', sep=';').merge(other, on=";
    const { uses, open } = scanKeywords(code, 0);
    expect(uses.map(u => [u.callee, u.keyword])).toEqual([
      ['pd.read_csv', 'sep'],
      [null, 'on']
    ]);
    expect(open).toEqual([]);
    expect(scanKeywords('print(sorted(x, ', 0).open).toEqual([
      'print',
      'sorted'
    ]);
  });
});

describe('KeywordCache', () => {
  it('reads the callees of a suggestion in one request, kept until a cell runs', async () => {
    const reads: string[][] = [];
    const cache = new KeywordCache(async callees => {
      reads.push(callees);
      return Object.fromEntries(callees.map(c => [c, KERNEL[c] ?? null]));
    }, 3);
    const first = await cache.get(['sales.sort_values', 'sorted']);
    expect(first.get('sorted')).toEqual(KERNEL.sorted);
    await cache.get(['sorted', 'dict']);
    expect(reads).toEqual([['sales.sort_values', 'sorted'], ['dict']]);
    await cache.get(['f']);
    expect(cache.size).toBe(3); // bounded: the oldest went
    cache.clear();
    await cache.get(['sorted']);
    expect(reads.length).toBe(4);
  });

  it('does not keep what the kernel could not tell', async () => {
    let calls = 0;
    const cache = new KeywordCache(async () => {
      calls++;
      return null;
    });
    expect((await cache.get(['f'])).get('f')).toBeNull();
    await cache.get(['f']);
    expect(calls).toBe(2);
  });

  it('sends only dotted names to the kernel, as data', () => {
    expect(keywordsExpression(['sales.sort_values'])).toContain(
      'accepted_keywords(get_ipython().user_ns, ["sales.sort_values"])'
    );
  });
});

describe('the provider with the kernel', () => {
  const AUTOMATIC = 1 as InlineCompletionTriggerKind;
  const asked: string[][] = [];
  const source: INotebookSource = {
    parts: async (_, request) => ({
      text: request.text,
      offset: request.offset,
      cellsAbove: [],
      variables: null,
      language: 'python',
      editor: 'nb'
    }),
    watch: () => () => undefined,
    accepted: async (_, callees) => {
      asked.push(callees);
      return new Map(callees.map(c => [c, KERNEL[c] ?? null]));
    }
  };
  const stream = (pieces: string[], seen: { signal?: AbortSignal }) =>
    async function* (
      _: unknown,
      signal: AbortSignal
    ): AsyncGenerator<CompletionEvent> {
      seen.signal = signal;
      for (const text of pieces) {
        if (signal.aborted) {
          return;
        }
        yield { type: 'token', text };
      }
      yield { type: 'done', text: pieces.join('') };
    };
  const prefix = 'sales.sort_values(';
  const request = { text: prefix, offset: prefix.length };
  const context = { widget: {}, triggerKind: AUTOMATIC } as any;

  it('shows no ghost text for a keyword the method does not take, and stops the request', async () => {
    asked.length = 0;
    const seen: { signal?: AbortSignal } = {};
    const provider = new ChapyterInlineProvider(
      source,
      new FailureTracker(() => undefined),
      stream(['by_reg', "ion='rev", "enue')"], seen)
    );
    const list = await provider.fetch(request, context);
    expect(list.items).toEqual([]);
    expect(seen.signal?.aborted).toBe(true);
    // Read once, while the server was asked.
    expect(asked).toEqual([['sales.sort_values']]);
  });

  it('shows one it takes, streamed', async () => {
    const provider = new ChapyterInlineProvider(
      source,
      new FailureTracker(() => undefined),
      stream(['by', "='rev", "enue')"], {})
    );
    const list = await provider.fetch(request, context);
    const [item] = list.items;
    expect(item.insertText).toBe("by='rev");
    const texts: string[] = [];
    for await (const update of provider.stream(item.token!)) {
      texts.push(update.response.insertText);
    }
    expect(texts).toEqual(["by='revenue')"]);
  });
});
