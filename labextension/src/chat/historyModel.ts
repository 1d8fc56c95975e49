/**
 * The chat's threads and their histories: which notebook the chat follows, that notebook's
 * thread, and the thread's history on the server (load, refresh, new chat, clear, export,
 * follow a rename). {@link ChatModel} adds the conversation itself (models, context, sending,
 * streaming, stopping). No DOM and no JupyterLab runtime code: tested in node.
 *
 * Each notebook has its own thread (chat id, messages, streaming state). Switching notebooks
 * while a reply streams leaves that reply running in its thread; the view follows the current
 * notebook's thread only. A renamed notebook keeps its thread, a streaming reply included.
 */

import { ISignal, Signal } from '@lumino/signaling';

import {
  applyView,
  ChatState,
  errorMessage,
  IThread,
  loadThread
} from './thread';
import { IUsage } from '../common/usage';
import { NotebookThreads } from './threads';
import {
  IChatClient,
  IChatExport,
  IChatMessage,
  IExportSaved,
  IHistoryView,
  INotebookIdentity
} from './tokens';

/** How the chat's notice line starts when Export chat could not write its file. */
const EXPORT_FAILED = 'Could not export the chat:';

/** Which notebook the chat follows, its thread and that thread's history; the signals. */
export class ChatHistoryModel {
  /** Threads over `client`; `identity` reads and writes the open notebooks' metadata. */
  constructor(client: IChatClient, identity: INotebookIdentity | null = null) {
    this._threads = new NotebookThreads(client, identity);
  }

  /** Messages, state, error, notebook or models changed: redraw the structure. */
  get changed(): ISignal<this, void> {
    return this._changed;
  }

  /** One message of the current thread got new text or a new status (while streaming). */
  get messageChanged(): ISignal<this, IChatMessage> {
    return this._messageChanged;
  }

  /** The context preview or its toggle changed. */
  get contextChanged(): ISignal<this, void> {
    return this._contextChanged;
  }

  /** Path of the notebook the chat is about, or null. */
  get notebook(): string | null {
    return this._notebook;
  }

  /** The current notebook's messages, oldest first. */
  get messages(): readonly IChatMessage[] {
    return this._current()?.messages ?? [];
  }

  /** What every chat of the current notebook used, when any answer reported it. */
  get usage(): IUsage | null {
    return this._current()?.usage ?? null;
  }

  /** What the current notebook's chat is doing. */
  get state(): ChatState {
    return this._current()?.state ?? 'idle';
  }

  /** Whether Stop was asked for and the stream has not ended yet. */
  get stopping(): boolean {
    return !!this._current()?.stopping;
  }

  /** The current chat's id, once known. */
  get chatId(): string | null {
    return this._current()?.chatId ?? null;
  }

  /** The last error of the current notebook's chat, one line, or null. */
  get error(): string | null {
    return this._current()?.error ?? this._configError;
  }

  /** Something to tell the user once about the current notebook's chat, or null. */
  get notice(): string | null {
    return this._current()?.notice ?? null;
  }

  /** Hide the notice (it is not shown again). */
  dismissNotice(): void {
    const thread = this._current();
    if (thread?.notice) {
      thread.notice = null;
      this._changed.emit();
    }
  }

  /** Hide the error line. */
  dismissError(): void {
    const thread = this._current();
    if (thread) {
      thread.error = null;
    }
    this._configError = null;
    this._changed.emit();
  }

  /** Follow another notebook (null: none); loads its history unless a reply streams there. */
  async setNotebook(path: string | null): Promise<void> {
    if (path === this._notebook) {
      return;
    }
    this._notebook = path;
    this._notebookChanged();
    this._changed.emit();
    this._contextChanged.emit();
    if (!path) {
      return;
    }
    const thread = this._threads.ensure(path);
    if (thread.state !== 'streaming') {
      await this._load(thread, () => this._threads.view(thread));
    }
  }

  /**
   * A notebook was renamed or moved (`oldPath` to `newPath`): its thread goes with it, a reply
   * streaming in it included, and the chat shown stays the same. Its history is read again
   * (at once, or when the reply ends), quietly: a Save As finds the copy the server made.
   */
  async renameNotebook(oldPath: string, newPath: string): Promise<void> {
    const thread = this._threads.move(oldPath, newPath);
    if (this._notebook === oldPath) {
      this._notebook = newPath;
      this._notebookChanged();
      this._changed.emit();
      this._contextChanged.emit();
    }
    if (thread?.state === 'streaming') {
      thread.moved = true;
    } else if (thread) {
      await this._refresh(thread);
    }
  }

  /** Load the current notebook's history again. */
  async reloadHistory(): Promise<void> {
    const thread = this._current();
    if (thread && thread.state !== 'streaming') {
      await this._load(thread, () => this._threads.view(thread));
    }
  }

  /**
   * Bring the current chat up to date with the server (another tab may have added to it),
   * without a loading state; a failure keeps what is shown.
   */
  async refreshHistory(): Promise<void> {
    const thread = this._current();
    if (thread) {
      await this._refresh(thread);
    }
  }

  /** Start a new chat for the current notebook; the earlier ones stay on the server. */
  async newChat(): Promise<void> {
    const thread = this._current();
    if (thread && thread.state !== 'streaming') {
      await this._load(thread, () => this._threads.newChat(thread));
    }
  }

  /** Forget every chat of the current notebook. */
  async clearHistory(): Promise<void> {
    const thread = this._current();
    if (thread && thread.state !== 'streaming') {
      await this._load(thread, () => this._threads.clear(thread));
    }
  }

  /** The current chat as Markdown (redacted by the server); null with no chat to export. */
  async exportChat(): Promise<IChatExport | null> {
    const thread = this._current();
    if (!thread || !thread.chatId) {
      return null;
    }
    return this._threads.exportChat(thread);
  }

  /**
   * The current chat written next to its notebook (`NotebookThreads.saveExport`);
   * null with no chat to export. A file the server could not write (a full disk, a quota,
   * a refused link) is also the chat's one-line notice, then rethrown.
   */
  async saveExport(replace: string | null): Promise<IExportSaved | null> {
    const thread = this._current();
    if (!thread || !thread.chatId) {
      return null;
    }
    try {
      const saved = await this._threads.saveExport(thread, replace);
      if (thread.notice?.startsWith(EXPORT_FAILED)) {
        thread.notice = null; // written after all: nothing left to tell
        this._changed.emit();
      }
      return saved;
    } catch (error) {
      thread.notice = `${EXPORT_FAILED} ${errorMessage(error)}`;
      if (thread === this._current()) {
        this._changed.emit();
      }
      throw error;
    }
  }

  /** Stop every stream (the panel is going away). */
  dispose(): void {
    if (this._disposed) {
      return;
    }
    this._disposed = true;
    for (const thread of this._threads.values()) {
      thread.controller?.abort();
    }
    Signal.clearData(this);
  }

  /** Whether {@link dispose} was called. */
  get isDisposed(): boolean {
    return this._disposed;
  }

  protected _current(): IThread | null {
    return this._notebook ? this._threads.get(this._notebook) : null;
  }

  /** The notebook followed changed (or was renamed); what depends on it is reset. */
  protected _notebookChanged(): void {
    // Nothing here; the chat model drops the context collected for the old one.
  }

  protected _emitMessage(thread: IThread, message: IChatMessage): void {
    if (thread.notebook === this._notebook && !this._disposed) {
      this._messageChanged.emit(message);
    }
  }

  /** Read the thread's history without a loading state; it applies only if nothing else
   * happened to the thread meanwhile. */
  protected async _refresh(thread: IThread): Promise<void> {
    if (thread.state !== 'idle') {
      return;
    }
    const load = ++thread.loads;
    let view: IHistoryView;
    try {
      view = await this._threads.view(thread);
    } catch (error) {
      console.warn('chapyter-ext: could not refresh the chat', error);
      return;
    }
    if (load !== thread.loads || thread.state !== 'idle' || this._disposed) {
      return;
    }
    applyView(thread, view);
    if (thread.notebook === this._notebook) {
      this._changed.emit();
    }
  }

  protected async _load(
    thread: IThread,
    fetch: () => Promise<IHistoryView>
  ): Promise<void> {
    const loading = loadThread(thread, fetch);
    if (thread.notebook === this._notebook) {
      this._changed.emit(); // now 'loading'
    }
    if (
      (await loading) &&
      thread.notebook === this._notebook &&
      !this._disposed
    ) {
      this._changed.emit();
    }
  }

  protected _threads: NotebookThreads;
  protected _notebook: string | null = null;
  protected _configError: string | null = null;
  protected _disposed = false;
  protected _changed = new Signal<this, void>(this);
  protected _messageChanged = new Signal<this, IChatMessage>(this);
  protected _contextChanged = new Signal<this, void>(this);
}
