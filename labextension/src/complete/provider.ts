/**
 * chapyter-ext's provider for JupyterLab's inline completer (ghost text): JupyterLab debounces
 * the keystrokes, shows the ghost text and accepts it with Tab; this provider asks the server
 * (`POST chapyter-ext/complete`) and streams the suggestion into it. Typing on aborts the
 * request (the server then closes its upstream call); one request is in flight per notebook.
 * Failures never show in the editor: they go to the {@link FailureTracker}. A keyword argument
 * is shown only once its callee's signature was read from the kernel (./keywords: the calls
 * open at the cursor are read while the server is asked); one the callee does not accept ends
 * the suggestion before its line.
 */

import type {
  CompletionHandler,
  IInlineCompletionContext,
  IInlineCompletionItem,
  IInlineCompletionList,
  IInlineCompletionProvider
} from '@jupyterlab/completer';
import type { JSONValue } from '@lumino/coreutils';
import type { Widget } from '@lumino/widgets';

import { Accepted, IGateResult, KeywordGate } from './keywords';
import {
  CompletionEvent,
  composeRequest,
  FailureTracker,
  ICompletionBody,
  InFlight,
  IRequestParts,
  PROVIDER_ID,
  shouldRequest,
  TriggerMode
} from './logic';

/** What the provider needs from the notebook, supplied by the plugin. */
export interface INotebookSource {
  /** The request's parts for the widget's active cell, or null when it is not a code cell. */
  parts(
    widget: Widget,
    request: CompletionHandler.IRequest
  ): Promise<IRequestParts | null>;
  /** Call `onChange` when the active cell's text changes; returns how to stop. */
  watch(widget: Widget, onChange: () => void): () => void;
  /**
   * What `callees` accept as keywords, read in the widget's kernel within a short wait; a
   * callee missing from the answer is unknown (its calls are kept). Absent: all unknown.
   */
  accepted?(widget: Widget, callees: string[]): Promise<Map<string, Accepted>>;
}

/** Asks the server for a suggestion: `streamCompletion` of ./client (tests give another). */
export type CompletionStream = (
  body: ICompletionBody,
  signal: AbortSignal
) => AsyncGenerator<CompletionEvent>;

/**
 * `InlineCompletionTriggerKind.Automatic` (typing, not Alt+\\): the enum's value, so that this
 * module needs nothing of `@jupyterlab/completer` at run time (jest cannot load it).
 */
const AUTOMATIC = 1;

/** The default delay after the last key (JupyterLab's `debouncerDelay`), in ms. */
export const DEFAULT_DEBOUNCE_MS = 300;

/** One suggestion: the text received, the part shown, and its keywords' gate. */
class Suggestion {
  constructor(
    readonly gate: KeywordGate,
    private _ask: (callees: string[]) => Promise<Map<string, Accepted>>
  ) {
    const open = gate.openCallees();
    if (open.length) {
      void this._read(open); // while the server is asked
    }
  }

  /** All of the suggestion received so far. */
  text = '';
  /** What is shown (only ever grows). */
  shown = '';

  /** Judge the text received (`final`: it is whole); whether a keyword ended it. */
  async advance(final: boolean): Promise<boolean> {
    let result: IGateResult;
    for (;;) {
      result = this.gate.judge(this.text, c => this._verdicts.get(c), final);
      if (!result.pending.length) {
        break;
      }
      await this._read(result.pending);
    }
    const visible = this.text.slice(0, result.visible);
    if (visible.length > this.shown.length && visible.startsWith(this.shown)) {
      this.shown = visible;
    }
    return result.rejected !== null;
  }

  private _read(callees: string[]): Promise<void> {
    const wanted = callees.filter(c => !this._reading.has(c));
    if (wanted.length) {
      const reading = this._ask(wanted).then(
        found =>
          wanted.forEach(c => this._verdicts.set(c, found.get(c) ?? null)),
        () => wanted.forEach(c => this._verdicts.set(c, null))
      );
      wanted.forEach(c => this._reading.set(c, reading));
    }
    return Promise.all(callees.map(c => this._reading.get(c))).then(
      () => undefined
    );
  }

  private _verdicts = new Map<string, Accepted>();
  private _reading = new Map<string, Promise<void>>();
}

interface IStreaming {
  events: AsyncGenerator<CompletionEvent>;
  suggestion: Suggestion;
  finish: () => void;
  stop: () => void;
}

/** The inline completion provider. */
export class ChapyterInlineProvider implements IInlineCompletionProvider {
  /** Shown in JupyterLab's settings and the ghost text's widget. */
  readonly name = 'chapyter-ext (AI)';
  /** Unique; the key of this provider's settings in the Inline Completer settings. */
  readonly identifier = PROVIDER_ID;
  /** This provider's settings, added by JupyterLab to its Inline Completer settings. */
  readonly schema = {
    default: {
      enabled: true,
      debouncerDelay: DEFAULT_DEBOUNCE_MS,
      timeout: 15000,
      trigger: 'automatic'
    },
    properties: {
      trigger: {
        title: 'Trigger',
        description:
          "'automatic': suggest as you type (after the debouncer delay); 'onDemand': only " +
          'when asked (Alt+\\, "Invoke Inline Completer").',
        type: 'string' as const,
        enum: ['automatic', 'onDemand']
      }
    }
  };

  /**
   * @param _source - Reads the notebook around the cursor.
   * @param failures - Where failures go (logged once, shown by the status item).
   * @param _stream - The server call.
   */
  constructor(
    private _source: INotebookSource,
    readonly failures: FailureTracker,
    private _stream: CompletionStream
  ) {}

  /** The trigger mode in use. */
  get mode(): TriggerMode {
    return this._mode;
  }

  /** JupyterLab passes this provider's settings. */
  configure(settings: { [property: string]: JSONValue }): void {
    this._mode = settings.trigger === 'onDemand' ? 'onDemand' : 'automatic';
  }

  /** Ask for a suggestion; resolves with its first piece (the rest comes by `stream`). */
  async fetch(
    request: CompletionHandler.IRequest,
    context: IInlineCompletionContext
  ): Promise<IInlineCompletionList<IInlineCompletionItem>> {
    const automatic = (context.triggerKind as number) === AUTOMATIC;
    if (this.failures.disabled || !shouldRequest(automatic, this._mode)) {
      return { items: [] };
    }
    const parts = await this._source.parts(context.widget, request);
    if (!parts) {
      return { items: [] };
    }
    const body: ICompletionBody = composeRequest(parts);
    const editor = parts.editor;
    const controller = this._inFlight.start(editor);
    // Typing on aborts the request: the server sees the connection close.
    const unwatch = this._source.watch(context.widget, () =>
      this._inFlight.abort(editor)
    );
    const finish = () => {
      unwatch();
      this._inFlight.finish(editor, controller);
    };
    const events = this._stream(body, controller.signal);
    const widget = context.widget;
    const suggestion = new Suggestion(
      new KeywordGate(body.prefix, body.suffix),
      callees =>
        this._source.accepted?.(widget, callees) ?? Promise.resolve(new Map())
    );
    // A keyword the callee does not take: the rest is of no use, close the upstream call.
    const stop = () => {
      finish();
      controller.abort();
      void events.return(undefined);
    };
    try {
      for (;;) {
        const next = await events.next();
        const event = next.done ? null : next.value;
        if (!event || event.type === 'done') {
          if (event) {
            suggestion.text = event.text || suggestion.text;
            this.failures.succeeded();
          }
          finish();
          await suggestion.advance(true);
          return this._items(suggestion.shown, false);
        }
        if (event.type === 'error') {
          finish();
          this.failures.failed(event.kind, event.message);
          return { items: [] };
        }
        suggestion.text += event.text;
        if (await suggestion.advance(false)) {
          stop();
          return this._items(suggestion.shown, false);
        }
        if (suggestion.shown) {
          // The first piece: show it now, the rest streams in.
          const token = `chapyter-${++this._tokens}`;
          this._streams.set(token, { events, suggestion, finish, stop });
          return this._items(suggestion.shown, true, token);
        }
      }
    } catch (error) {
      finish();
      if (!controller.signal.aborted) {
        this.failures.failed('internal', (error as Error).message);
      }
      return { items: [] };
    }
  }

  /** The rest of a suggestion, as the whole text so far after each piece. */
  async *stream(
    token: string
  ): AsyncGenerator<{ response: IInlineCompletionItem }> {
    const streaming = this._streams.get(token);
    if (!streaming) {
      return;
    }
    this._streams.delete(token);
    const suggestion = streaming.suggestion;
    try {
      for await (const event of streaming.events) {
        if (event.type === 'token') {
          const before = suggestion.shown;
          suggestion.text += event.text;
          const ended = await suggestion.advance(false);
          if (suggestion.shown !== before) {
            yield { response: { insertText: suggestion.shown } };
          }
          if (ended) {
            streaming.stop();
            break;
          }
        } else if (event.type === 'done') {
          this.failures.succeeded();
          const before = suggestion.shown;
          suggestion.text = event.text || suggestion.text;
          await suggestion.advance(true);
          if (suggestion.shown !== before) {
            yield { response: { insertText: suggestion.shown } };
          }
          return;
        } else {
          // Silent in the editor: the suggestion stays as far as it got.
          this.failures.failed(event.kind, event.message);
          break;
        }
      }
    } finally {
      streaming.finish();
    }
  }

  /** How many requests are in flight (for tests). */
  get inFlight(): number {
    return this._inFlight.size;
  }

  private _items(
    text: string,
    incomplete: boolean,
    token?: string
  ): IInlineCompletionList<IInlineCompletionItem> {
    if (!text) {
      return { items: [] };
    }
    return {
      items: [{ insertText: text, isIncomplete: incomplete, token }]
    };
  }

  private _mode: TriggerMode = 'automatic';
  private _inFlight = new InFlight();
  private _streams = new Map<string, IStreaming>();
  private _tokens = 0;
}
