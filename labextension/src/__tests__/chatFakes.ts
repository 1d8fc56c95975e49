/** The fakes the chat model's tests share: a server client, a hand-fed event stream. */

import { ChatEvent } from '../common/events';
import { ChatModel, messageFromServer } from '../chat/model';
import {
  IChatClient,
  IChatConfig,
  IChatContext,
  IChatExport,
  IExportSaved,
  IChatMessage,
  IChatRequest,
  IContextPreview,
  IHistoryView
} from '../chat/tokens';

/** A stream of typed events the test feeds by hand; aborting the signal fails it. */
export class ManualStream implements AsyncIterable<ChatEvent> {
  constructor(signal: AbortSignal) {
    signal.addEventListener('abort', () => {
      const error = new Error('The operation was aborted.');
      error.name = 'AbortError';
      this.fail(error);
    });
  }

  /** One typed event, as the client decodes it from the wire. */
  send(event: ChatEvent): void {
    this._queue.push({ event });
    this._wake();
  }

  end(): void {
    this._queue.push({ end: true });
    this._wake();
  }

  /** End the reply as the server does: `done` with its text, then the end of the stream. */
  finish(messageId: string, text: string): void {
    this.send({ type: 'done', messageId, text, status: 'complete' });
    this.end();
  }

  fail(error: Error): void {
    this._queue.push({ error });
    this._wake();
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<ChatEvent> {
    for (;;) {
      while (!this._queue.length) {
        await new Promise<void>(resolve => (this._waiting = resolve));
      }
      const item = this._queue.shift()!;
      if (item.error) {
        throw item.error;
      }
      if (item.end) {
        return;
      }
      yield item.event!;
    }
  }

  private _wake(): void {
    const wake = this._waiting;
    this._waiting = null;
    wake?.();
  }

  private _queue: { event?: ChatEvent; end?: boolean; error?: Error }[] = [];
  private _waiting: (() => void) | null = null;
}

export function view(
  chatId: string,
  messages: Partial<IChatMessage>[] = []
): IHistoryView {
  return {
    chat_id: chatId,
    messages: messages.map(m => messageFromServer(m)),
    chats: [chatId]
  };
}

/** A fake server: records calls, answers from what the test set up. */
export class FakeClient implements IChatClient {
  config$: IChatConfig | Error = {
    models: [
      { name: 'fast', model: 'gpt-4o-mini', host: 'api.openai.com' },
      { name: 'local', model: 'llama3', host: 'localhost:11434' }
    ],
    default: 'fast',
    version: '0.1.0'
  };
  histories = new Map<string, IHistoryView>();
  requests: IChatRequest[] = [];
  streams: ManualStream[] = [];
  stops: string[] = [];
  calls: string[] = [];
  chatError: Error | null = null;
  /** Resolves pending history calls by hand when set. */
  holdHistory = false;
  held: (() => void)[] = [];

  async config(): Promise<IChatConfig> {
    this.calls.push('config');
    if (this.config$ instanceof Error) {
      throw this.config$;
    }
    return this.config$;
  }

  async chat(
    request: IChatRequest,
    signal: AbortSignal
  ): Promise<AsyncIterable<ChatEvent>> {
    this.calls.push('chat');
    this.requests.push(request);
    if (this.chatError) {
      throw this.chatError;
    }
    const stream = new ManualStream(signal);
    this.streams.push(stream);
    return stream;
  }

  async context(): Promise<IContextPreview> {
    this.calls.push('context');
    return {
      text: CONTEXT.text,
      summary: CONTEXT.summary,
      chars: CONTEXT.chars
    };
  }

  async stop(messageId: string): Promise<boolean> {
    this.calls.push('stop');
    this.stops.push(messageId);
    return true;
  }

  /** The notebook id each history call sent. */
  historyIds: (string | null | undefined)[] = [];
  /** What importChat answers (a view, or an error to throw). */
  imported: IHistoryView | Error | null = null;
  /** The carried chats importChat received. */
  importedChats: unknown[] = [];
  /** The arguments of each exportChat call. */
  exports: unknown[][] = [];

  async history(
    notebook: string,
    notebookId?: string | null
  ): Promise<IHistoryView> {
    this.calls.push(`history ${notebook}`);
    this.historyIds.push(notebookId);
    const result = this.histories.get(notebook) ?? view(`chat-${notebook}`);
    if (this.holdHistory) {
      await new Promise<void>(resolve => this.held.push(resolve));
    }
    return result;
  }

  async newChat(notebook: string): Promise<IHistoryView> {
    this.calls.push(`new ${notebook}`);
    return view(`new-${notebook}`);
  }

  async clearHistory(notebook: string): Promise<IHistoryView> {
    this.calls.push(`clear ${notebook}`);
    return view(`cleared-${notebook}`);
  }

  async importChat(
    notebook: string,
    _notebookId: string | null,
    chat: unknown
  ): Promise<IHistoryView> {
    this.calls.push(`import ${notebook}`);
    this.importedChats.push(chat);
    if (this.imported instanceof Error) {
      throw this.imported;
    }
    return this.imported ?? view(`imported-${notebook}`);
  }

  async exportChat(
    notebook: string,
    notebookId?: string | null,
    chatId?: string | null
  ): Promise<IChatExport> {
    this.calls.push(`export ${notebook}`);
    this.exports.push([notebook, notebookId, chatId]);
    return { filename: 'x.chat.md', chat_id: chatId ?? '', markdown: '# Chat' };
  }

  /** The files saveExport wrote (path to how many times); those already there. */
  saved = new Map<string, number>();
  /** The `replace` of each saveExport call. */
  replaces: (string | null)[] = [];
  /** The notebook, notebook id and chat id of each saveExport call. */
  saveArgs: unknown[][] = [];

  async saveExport(
    notebook: string,
    notebookId: string | null,
    chatId: string | null,
    replace: string | null
  ): Promise<IExportSaved> {
    this.calls.push(`save-export ${notebook}`);
    this.replaces.push(replace);
    this.saveArgs.push([notebook, notebookId, chatId]);
    const path = notebook.replace(/\.ipynb$/, '.chat.md');
    const exists = this.saved.has(path);
    const written = !exists || replace === path;
    if (written) {
      this.saved.set(path, (this.saved.get(path) ?? 0) + 1);
    }
    return {
      path,
      written,
      exists,
      ...(exists ? { size: 1536, modified: '2025-06-01T10:00:00Z' } : {}),
      filename: path.split('/').pop()!,
      chat_id: chatId ?? ''
    };
  }
}

/** Let pending promises and async iterators run. */
export async function flush(times = 10): Promise<void> {
  for (let i = 0; i < times; i++) {
    await new Promise(resolve => setTimeout(resolve, 0));
  }
}

export const CONTEXT: IChatContext = {
  text: 'Notebook: a.ipynb\nActive cell 2 (code)',
  summary: 'a.ipynb · 2nd cell · 3 variables',
  chars: 38,
  snapshot: {
    path: 'a.ipynb',
    cell_count: 3,
    active: { index: 1, type: 'code', source: 'x = 1' },
    above: [],
    below: [],
    selection: '',
    last_error: null,
    variables: [],
    language: 'python'
  }
};

export function makeModel(
  client: FakeClient,
  options: { stopGraceMs?: number } = {}
) {
  return new ChatModel({
    client,
    context: async () => CONTEXT,
    stopGraceMs: options.stopGraceMs ?? 50
  });
}
