/** Inline completion's pure logic, and the provider driven by a scripted stream. */

import type { InlineCompletionTriggerKind } from '@jupyterlab/completer';

import {
  CompletionEvent,
  composeRequest,
  FailureTracker,
  ICompletionBody,
  InFlight,
  parseCompletionEvent,
  shouldRequest
} from '../complete/logic';
import { ChapyterInlineProvider, INotebookSource } from '../complete/provider';

describe('composeRequest', () => {
  it('splits the cell at the cursor and bounds what it sends', () => {
    const body = composeRequest(
      {
        text: 'import pandas as pd\ndf.gro\nprint(df)',
        offset: 'import pandas as pd\ndf.gro'.length,
        cellsAbove: ['a = 1', '', 'x'.repeat(50), 'b = 2'],
        variables: [{ name: 'df', type: 'DataFrame', summary: 'city, temp' }],
        language: 'python',
        editor: 'nb-1'
      },
      { prefixChars: 10, suffixChars: 4, cellsAbove: 2, cellsAboveChars: 100 }
    );
    expect(body.prefix).toBe('as pd\ndf.gro'.slice(-10));
    expect(body.suffix).toBe('\npri');
    expect(body.cells_above).toEqual(['x'.repeat(50), 'b = 2']);
    expect(body.variables?.[0].name).toBe('df');
    expect(body.editor).toBe('nb-1');
  });

  it('keeps the end of the nearest cell when it alone is too long', () => {
    const body = composeRequest(
      {
        text: 'x',
        offset: 1,
        cellsAbove: ['y'.repeat(30)],
        variables: null,
        language: '',
        editor: 'e'
      },
      { prefixChars: 10, suffixChars: 10, cellsAbove: 5, cellsAboveChars: 8 }
    );
    expect(body.cells_above).toEqual(['y'.repeat(8)]);
  });
});

describe('triggers, events, in-flight requests, failures', () => {
  it('skips automatic triggers on demand only', () => {
    expect(shouldRequest(true, 'automatic')).toBe(true);
    expect(shouldRequest(true, 'onDemand')).toBe(false);
    expect(shouldRequest(false, 'onDemand')).toBe(true);
  });

  it('parses the events of the stream', () => {
    expect(
      parseCompletionEvent({ event: 'token', data: '{"text":"a"}' })
    ).toEqual({ type: 'token', text: 'a' });
    expect(
      parseCompletionEvent({
        event: 'error',
        data: '{"kind":"auth","message":"no"}'
      })
    ).toEqual({ type: 'error', kind: 'auth', message: 'no' });
    expect(parseCompletionEvent({ event: 'other', data: '{}' })).toBeNull();
    expect(parseCompletionEvent({ event: 'token', data: 'nope' })?.type).toBe(
      'error'
    );
  });

  it('keeps one request in flight per editor', () => {
    const inFlight = new InFlight();
    const first = inFlight.start('e');
    const second = inFlight.start('e');
    const other = inFlight.start('f');
    expect(first.signal.aborted).toBe(true);
    expect(second.signal.aborted).toBe(false);
    expect(inFlight.size).toBe(2);
    inFlight.finish('e', first); // a stale finish changes nothing
    expect(inFlight.abort('e')).toBe(true);
    expect(second.signal.aborted).toBe(true);
    inFlight.finish('f', other);
    expect(inFlight.size).toBe(0);
  });

  it('logs a failure once per kind and says when it works again', () => {
    const logged: string[] = [];
    const changes: boolean[] = [];
    const failures = new FailureTracker(
      line => logged.push(line),
      status => changes.push(status.failing)
    );
    failures.failed('auth', 'bad key');
    failures.failed('auth', 'bad key');
    failures.failed('auth', 'bad key');
    expect(logged).toHaveLength(1);
    expect(failures.status).toEqual({ failing: true, message: 'bad key' });
    failures.failed('timeout', 'slow');
    expect(logged).toHaveLength(2);
    failures.succeeded();
    failures.succeeded();
    expect(failures.status.failing).toBe(false);
    expect(changes).toEqual([true, true, false]);
  });
});

function scripted(
  events: CompletionEvent[],
  seen: { body?: ICompletionBody; signal?: AbortSignal }
) {
  return async function* (
    body: ICompletionBody,
    signal: AbortSignal
  ): AsyncGenerator<CompletionEvent> {
    seen.body = body;
    seen.signal = signal;
    for (const event of events) {
      if (signal.aborted) {
        return;
      }
      yield event;
    }
  };
}

// InlineCompletionTriggerKind's values (the enum itself cannot be loaded under jest).
const INVOKE = 0 as InlineCompletionTriggerKind;
const AUTOMATIC = 1 as InlineCompletionTriggerKind;

describe('ChapyterInlineProvider', () => {
  let typed: (() => void) | null = null;
  const source: INotebookSource = {
    parts: async (_, request) => ({
      text: request.text,
      offset: request.offset,
      cellsAbove: [],
      variables: null,
      language: 'python',
      editor: 'nb'
    }),
    watch: (_, onChange) => {
      typed = onChange;
      return () => (typed = null);
    }
  };
  const context = (kind: InlineCompletionTriggerKind) =>
    ({ widget: {}, triggerKind: kind }) as any;

  it('stops asking once the server says the administrator turned it off', async () => {
    let asked = 0;
    const failures = new FailureTracker(() => undefined);
    const provider = new ChapyterInlineProvider(
      source,
      failures,
      async function* () {
        asked += 1;
        yield {
          type: 'error' as const,
          kind: 'disabled',
          message: 'Inline completion is turned off on this server.'
        };
      }
    );
    await provider.fetch({ text: 'x', offset: 1 }, context(AUTOMATIC));
    expect(failures.disabled).toBe(true);
    const list = await provider.fetch(
      { text: 'xy', offset: 2 },
      context(AUTOMATIC)
    );
    expect(list.items).toHaveLength(0);
    expect(asked).toBe(1);
  });

  it('streams the suggestion: first piece from fetch, the rest from stream', async () => {
    const seen: { body?: ICompletionBody } = {};
    const failures = new FailureTracker(() => undefined);
    const provider = new ChapyterInlineProvider(
      source,
      failures,
      scripted(
        [
          { type: 'token', text: 'upby(' },
          { type: 'token', text: "'a')" },
          { type: 'done', text: "upby('a')" }
        ],
        seen
      )
    );
    const list = await provider.fetch(
      { text: 'df.gro', offset: 6 },
      context(AUTOMATIC)
    );
    expect(seen.body?.prefix).toBe('df.gro');
    expect(list.items).toHaveLength(1);
    const [item] = list.items;
    expect(item.insertText).toBe('upby(');
    expect(item.isIncomplete).toBe(true);
    const texts: string[] = [];
    for await (const update of provider.stream(item.token!)) {
      texts.push(update.response.insertText);
    }
    expect(texts).toEqual(["upby('a')"]);
    expect(provider.inFlight).toBe(0);
    expect(typed).toBeNull(); // stopped watching the cell
  });

  it('typing on aborts the request', async () => {
    const seen: { signal?: AbortSignal } = {};
    const provider = new ChapyterInlineProvider(
      source,
      new FailureTracker(() => undefined),
      scripted(
        [
          { type: 'token', text: 'a' },
          { type: 'token', text: 'b' }
        ],
        seen
      )
    );
    const list = await provider.fetch(
      { text: 'x = ', offset: 4 },
      context(AUTOMATIC)
    );
    expect(typed).not.toBeNull();
    typed!();
    expect(seen.signal?.aborted).toBe(true);
    const texts: string[] = [];
    for await (const update of provider.stream(list.items[0].token!)) {
      texts.push(update.response.insertText);
    }
    expect(texts).toEqual([]); // nothing more after the abort
  });

  it('is silent on failure, and asks nothing automatically on demand only', async () => {
    const logged: string[] = [];
    const seen: { body?: ICompletionBody } = {};
    const provider = new ChapyterInlineProvider(
      source,
      new FailureTracker(line => logged.push(line)),
      scripted([{ type: 'error', kind: 'auth', message: 'bad key' }], seen)
    );
    const list = await provider.fetch(
      { text: 'x', offset: 1 },
      context(INVOKE)
    );
    expect(list.items).toEqual([]);
    expect(provider.failures.status.failing).toBe(true);
    expect(logged).toHaveLength(1);

    provider.configure({ trigger: 'onDemand' });
    seen.body = undefined;
    const skipped = await provider.fetch(
      { text: 'x', offset: 1 },
      context(AUTOMATIC)
    );
    expect(skipped.items).toEqual([]);
    expect(seen.body).toBeUndefined();
  });
});
