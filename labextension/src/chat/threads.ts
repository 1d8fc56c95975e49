/**
 * Every notebook's chat thread, keyed by the notebook's path, and how a thread's history
 * comes from the server: asked for with the notebook's own id (from its metadata), so a
 * notebook moved where the server did not see finds its chats; adopting the id the server
 * answers with; importing the chat a notebook carries when the server has none for it.
 * No signals and no DOM: `model.ts` drives it.
 */

import { isNotebookId, newNotebookId } from '../contract';
import { newThread, errorMessage, IThread } from './thread';
import {
  IChatClient,
  IChatExport,
  IExportSaved,
  IHistoryView,
  INotebookChatMetadata,
  INotebookIdentity
} from './tokens';

/** The threads of every notebook the chat has shown, and their histories on the server. */
export class NotebookThreads {
  /** Threads over `client`; `identity` reads and writes the notebooks' metadata. */
  constructor(
    private readonly _client: IChatClient,
    /** The open notebooks' metadata (null: no ids are read or written). */
    public identity: INotebookIdentity | null = null
  ) {}

  /** The thread of a notebook, if it has one. */
  get(path: string): IThread | null {
    return this._threads.get(path) ?? null;
  }

  /** The thread of a notebook, made on first use. */
  ensure(path: string): IThread {
    let thread = this._threads.get(path);
    if (!thread) {
      thread = newThread(path);
      this._threads.set(path, thread);
    }
    return thread;
  }

  /** Every thread. */
  values(): IterableIterator<IThread> {
    return this._threads.values();
  }

  /**
   * A notebook was renamed or moved: its thread (streaming or not) goes with it. A thread
   * already at the new path is replaced, unless it is streaming (then the moved one is
   * dropped: the server keeps both chats). Returns the thread now at `newPath`.
   */
  move(oldPath: string, newPath: string): IThread | null {
    const thread = this._threads.get(oldPath);
    if (!thread || oldPath === newPath) {
      return this.get(newPath);
    }
    this._threads.delete(oldPath);
    const there = this._threads.get(newPath);
    if (there?.state === 'streaming') {
      return there;
    }
    thread.notebook = newPath;
    this._threads.set(newPath, thread);
    return thread;
  }

  /**
   * The notebook's id from its metadata; with `create`, one is made and written when it has
   * none (its first message: the id must be in the notebook before it is saved).
   */
  async notebookId(thread: IThread, create = false): Promise<string | null> {
    const found = (await this._metadata(thread))?.notebookId ?? null;
    if (found || !create || !this.identity) {
      return found;
    }
    const made = newNotebookId();
    return this.identity.write(thread.notebook, made) ? made : null;
  }

  /** The thread's history: by path and id, the notebook's carried chat imported if needed. */
  async view(thread: IThread): Promise<IHistoryView> {
    const metadata = await this._metadata(thread);
    const notebookId = metadata?.notebookId ?? null;
    let view = await this._client.history(thread.notebook, notebookId);
    if (!view?.notebook_id && metadata?.storedChat) {
      try {
        view = await this._client.importChat(
          thread.notebook,
          notebookId,
          metadata.storedChat
        );
      } catch (error) {
        view = {
          ...view,
          notice: `The chat saved in this notebook could not be loaded: ${errorMessage(error)}`
        };
      }
    }
    this._adopt(thread, metadata, view);
    return view;
  }

  /** Start a new chat on the server. */
  async newChat(thread: IThread): Promise<IHistoryView> {
    const metadata = await this._metadata(thread);
    const view = await this._client.newChat(
      thread.notebook,
      metadata?.notebookId
    );
    this._adopt(thread, metadata, view);
    return view;
  }

  /** Forget every chat of the notebook on the server. */
  async clear(thread: IThread): Promise<IHistoryView> {
    const notebookId = await this.notebookId(thread);
    return this._client.clearHistory(thread.notebook, notebookId);
  }

  /** The thread's current chat as Markdown. */
  async exportChat(thread: IThread): Promise<IChatExport> {
    const notebookId = await this.notebookId(thread);
    return this._client.exportChat(thread.notebook, notebookId, thread.chatId);
  }

  /**
   * The thread's current chat written next to its notebook by the server; a file already
   * there is replaced only when `replace` is its path.
   */
  async saveExport(
    thread: IThread,
    replace: string | null
  ): Promise<IExportSaved> {
    const notebookId = await this.notebookId(thread);
    return this._client.saveExport(
      thread.notebook,
      notebookId,
      thread.chatId,
      replace
    );
  }

  private async _metadata(
    thread: IThread
  ): Promise<INotebookChatMetadata | null> {
    if (!this.identity) {
      return null;
    }
    try {
      return await this.identity.read(thread.notebook);
    } catch (error) {
      console.warn('chapyter-ext: could not read the notebook metadata', error);
      return null;
    }
  }

  /** The server's id for the notebook goes into its metadata when it differs (a copy). */
  private _adopt(
    thread: IThread,
    metadata: INotebookChatMetadata | null,
    view: IHistoryView | null
  ): void {
    const served = view?.notebook_id;
    if (isNotebookId(served) && served !== metadata?.notebookId) {
      this.identity?.write(thread.notebook, served);
    }
  }

  private _threads = new Map<string, IThread>();
}
