/**
 * The chat sidebar's state, without DOM and without JupyterLab runtime code: the server is an
 * injected {@link IChatClient} and the notebook's context an injected function, so the
 * streaming state machine is tested in node. The threads and their histories are
 * {@link ChatHistoryModel}'s (`historyModel.ts`); this adds models, context, sending,
 * streaming and stopping.
 */

import { ISignal, Signal } from '@lumino/signaling';

import type { INotebookSnapshot } from '../common/snapshot';
import { ChatEvent } from '../common/events';
import {
  attachmentNotes,
  attachmentsField,
  IAttachment,
  PendingAttachments
} from './attachmentRules';
import { FollowUpQueue, IQueuedMessage } from './followUpQueue';
import { ChatHistoryModel } from './historyModel';
import { mentionsField } from './mentions';
import { ModelChoice } from './modelChoice';
import type { IChatModelOptions, MentionDetails } from './modelOptions';
import {
  applyEvent,
  beginReply,
  endReply,
  errorMessage,
  IThread
} from './thread';
import {
  CHAT_OFF,
  IChatClient,
  IChatContext,
  IChatMention,
  IChatMessage,
  IChatRequest,
  IChatTurnHook,
  IModelInfo,
  MessageStatus
} from './tokens';

export type { ChatState } from './thread';
export { errorMessage, messageFromServer } from './thread';
export type { IChatModelOptions, MentionDetails } from './modelOptions';

/** The chat's state and actions; the view listens to its signals. */
export class ChatModel extends ChatHistoryModel {
  /** Create a model over a client. */
  constructor(options: IChatModelOptions) {
    super(options.client, options.identity ?? null);
    this._client = options.client;
    this.contextProvider = options.context ?? null;
    this.snapshotProvider = options.snapshot ?? null;
    this._contextDefault = options.sendContext ?? true;
    this._contextEnabled = this._contextDefault;
    this._stopGraceMs = options.stopGraceMs ?? 3000;
  }

  /** Collects the context; set by the plugin once the notebook side is ready. */
  contextProvider: ((message: string) => Promise<IChatContext | null>) | null;

  /** Takes the snapshot a message sends (see {@link IChatModelOptions.snapshot}). */
  snapshotProvider: (() => Promise<INotebookSnapshot | null>) | null;

  /** Runs messages as agent turns while it is enabled (`agent/`); null: plain replies. */
  agent: IChatTurnHook | null = null;

  /** The @-mentions that go with `text` (the input's chips, `chatInput.ts`); none: none. */
  mentionsFor: ((text: string) => IChatMention[]) | null = null;

  /** What a message's mentions send besides their names (`mentionDetails.ts`); none: names. */
  mentionDetails: MentionDetails | null = null;
  /** The server slash command `text` runs (`serverCommands.ts`); none: none. */
  commandFor: ((text: string) => string | undefined) | null = null;

  /** Messages sent while a reply streams, per thread (`followUpQueue.ts`). */
  readonly followUps = new FollowUpQueue<IThread>();

  /** The files attached to the message being written (`attachments.ts` draws them). */
  readonly attachments = new PendingAttachments();

  /** The current notebook's queued messages, oldest first. */
  get queued(): readonly IQueuedMessage[] {
    return this.followUps.items(this._current());
  }

  /** Models the server offers. */
  get models(): readonly IModelInfo[] {
    return this._choice.models;
  }

  /** Name of the model messages go to (null: the server's default). */
  get selectedModel(): string | null {
    return this._choice.selected;
  }
  set selectedModel(name: string | null) {
    if (this._choice.select(name)) {
      this._changed.emit();
      this._modelSelected.emit(name);
    }
  }

  /** The person picked another model (not emitted when the config picks one). */
  get modelSelected(): ISignal<this, string | null> {
    return this._modelSelected;
  }

  /** The model picked last time (a setting): selected whenever the server offers it. */
  get preferredModel(): string {
    return this._choice.preferred;
  }
  set preferredModel(name: string) {
    if (this._choice.prefer(name)) {
      this._changed.emit();
    }
  }

  /** The model info of a name (the selected one by default). */
  modelInfo(name: string | null = this._choice.selected): IModelInfo | null {
    return this._choice.info(name);
  }

  /** Whether the next message carries the notebook's context. */
  get contextEnabled(): boolean {
    return this._contextEnabled;
  }
  set contextEnabled(value: boolean) {
    if (value !== this._contextEnabled) {
      this._contextEnabled = value;
      this._contextChanged.emit();
    }
  }

  /** Whether the context toggle starts on (a setting). */
  get contextDefault(): boolean {
    return this._contextDefault;
  }
  set contextDefault(value: boolean) {
    this._contextDefault = value;
    this.contextEnabled = value;
  }

  /** What would be sent as context now, as last collected (null: nothing to send). */
  get context(): IChatContext | null {
    return this._context;
  }

  /** Whether the server saves chats in their notebooks (`Chapyter.save_chat_in_notebook`). */
  get savesInNotebook(): boolean {
    return this._savesInNotebook;
  }

  /** Whether the server turned the chat off (`Chapyter.chat`): nothing is sent. */
  get chatOff(): boolean {
    return this._chatOff;
  }

  /**
   * What the server says of its settings, one line each: a setting a lock or a value that
   * could not be used replaced (`GET config`'s `notices`), the chat turned off. Empty once
   * dismissed.
   */
  get serverNotices(): readonly string[] {
    if (this._serverNoticesDismissed) {
      return [];
    }
    return this._chatOff
      ? [CHAT_OFF, ...this._serverNotices]
      : this._serverNotices;
  }

  /** Hide the server's notices (until the page is loaded again). */
  dismissServerNotices(): void {
    this._serverNoticesDismissed = true;
    this._changed.emit();
  }

  /** Load the models from the server. */
  async loadConfig(): Promise<void> {
    try {
      const config = await this._client.config();
      this._choice.configure(config);
      this._savesInNotebook = !!config?.save_chat_in_notebook;
      this._chatOff = config?.features?.chat === false;
      const notices = Array.isArray(config?.notices) ? config.notices : [];
      this._serverNotices = notices.filter(n => typeof n === 'string' && n);
      this._configError = null;
    } catch (error) {
      this._configError = `Could not load the chat settings: ${errorMessage(error)}`;
    }
    this._changed.emit();
  }

  /**
   * Collect the context again for the chip, as it would go with `draft` (the message being
   * written; by default the last one given, "" once a message is sent).
   */
  async refreshContext(draft?: string): Promise<void> {
    if (draft !== undefined) {
      this._draft = draft;
    }
    const token = ++this._contextLoads;
    let context: IChatContext | null = null;
    if (this._notebook && this.contextProvider) {
      try {
        context = await this.contextProvider(this._draft);
      } catch (error) {
        console.warn(
          'chapyter-ext: could not collect the notebook context',
          error
        );
      }
    }
    if (token === this._contextLoads) {
      this._context = context;
      this._contextChanged.emit();
    }
  }

  /**
   * Ask: the message and an empty reply appear at once, tokens stream into the reply; while
   * one streams, it is queued (`followUpQueue.ts`). Returns false when nothing was sent or
   * queued (empty text, no notebook, a history loading, the chat turned off on the server).
   */
  async send(
    text: string,
    files: readonly IAttachment[] = [],
    thread = this._current(),
    mentioned = this.mentionsFor?.(text),
    extra: { fields?: Partial<IChatRequest>; agent?: boolean } = {}
  ): Promise<boolean> {
    if (!thread || !text.trim() || this._chatOff) {
      return false;
    }
    if (thread.state === 'streaming') {
      this.followUps.add(thread, text, files, mentioned);
      return true;
    }
    if (thread.state !== 'idle') {
      return false;
    }
    this._draft = '';
    const model = this._choice.selected;
    const controller = new AbortController();
    const mentions = mentionsField(mentioned);
    const reply = beginReply(thread, text, model, controller);
    Object.assign(thread.messages[thread.messages.length - 2], mentions, {
      attachments: attachmentNotes(files)
    });
    this._changed.emit();

    try {
      const request: IChatRequest = {
        notebook: thread.notebook,
        message: text,
        command: this.commandFor?.(text),
        ...mentions,
        ...attachmentsField(files),
        ...extra.fields
      };
      if (thread.chatId) {
        request.chat_id = thread.chatId;
      }
      if (model) {
        request.model = model;
      }
      const notebookId = await this._threads.notebookId(thread, true);
      if (notebookId) {
        request.notebook_id = notebookId;
      }
      const context = await this._collectContext(text);
      if (context) {
        request.context = context;
      }
      if (request.mentions && this.mentionDetails) {
        request.mentions = await this.mentionDetails(request.mentions, context);
      }
      if (controller.signal.aborted) {
        this._setStatus(thread, reply, 'stopped');
        return true;
      }
      const agent = (extra.agent ?? this.agent?.enabled) ? this.agent : null;
      const events = agent
        ? await agent.open(request, reply, controller.signal, () =>
            this._emitMessage(thread, reply)
          )
        : await this._client.chat(request, controller.signal);
      let ended = false;
      for await (const event of events) {
        if (this._apply(thread, reply, event)) {
          ended = true;
          break;
        }
      }
      if (!ended) {
        if (controller.signal.aborted) {
          this._setStatus(thread, reply, 'stopped');
        } else {
          this._fail(
            thread,
            reply,
            'The connection closed before the reply finished.'
          );
        }
      }
    } catch (error) {
      if (controller.signal.aborted) {
        this._setStatus(thread, reply, 'stopped');
      } else {
        this._fail(thread, reply, errorMessage(error));
      }
    } finally {
      endReply(thread, controller);
      if (thread.notebook === this._notebook) {
        this._changed.emit();
      }
      // A reply completed in the notebook shown (its context is at hand): the next queued goes.
      const shown = !thread.moved && thread.notebook === this._notebook;
      const next = shown && this.followUps.next(thread, reply.status);
      if (next && !this._disposed) {
        void this.send(next.text, next.attachments, thread, next.mentions);
      }
      if (thread.moved) {
        thread.moved = false;
        void this._refresh(thread);
      }
      if (this.snapshotProvider && !this._disposed) {
        void this.refreshContext();
      }
    }
    return true;
  }

  /**
   * Stop the streaming reply: ask the server (which ends the stream with what it has and
   * saves it), and cut the connection if it has not ended after a grace period.
   */
  async stop(): Promise<void> {
    const thread = this._current();
    const controller = thread?.controller;
    if (
      !thread ||
      thread.state !== 'streaming' ||
      !controller ||
      thread.stopping
    ) {
      return;
    }
    thread.stopping = true;
    this._changed.emit();
    const reply = thread.messages[thread.messages.length - 1];
    if (reply?.status === 'streaming') {
      this.agent?.stop(reply);
    }
    if (!thread.messageId) {
      // The server has not named the reply yet: closing the connection is the only way.
      controller.abort();
      return;
    }
    await this._stopOnServer(thread, thread.messageId);
  }

  /** The context collected for the old notebook does not go with the new one. */
  protected _notebookChanged(): void {
    this._context = null;
  }

  private async _collectContext(
    text: string
  ): Promise<INotebookSnapshot | null> {
    const enabled = this._contextEnabled;
    // The toggle is for the next message only.
    this.contextEnabled = this._contextDefault;
    if (!enabled || !this.contextProvider) {
      return null;
    }
    if (this.snapshotProvider) {
      // The first token matters more than the chip: the chip is brought up to date once
      // the reply has ended (see send), off the path to the model.
      try {
        return await this.snapshotProvider();
      } catch (error) {
        console.warn(
          'chapyter-ext: could not collect the notebook context',
          error
        );
        return null;
      }
    }
    try {
      const context = await this.contextProvider(text);
      this._context = context;
      this._contextChanged.emit();
      // The snapshot goes; the server assembles it into the text the chip showed.
      return context?.snapshot ?? null;
    } catch (error) {
      console.warn(
        'chapyter-ext: could not collect the notebook context',
        error
      );
      return null;
    }
  }

  /** Ask the server to stop the reply; cut the connection if the stream does not end soon. */
  private async _stopOnServer(
    thread: IThread,
    messageId: string
  ): Promise<void> {
    const controller = thread.controller;
    if (!controller || thread.stopTimer !== null) {
      return;
    }
    thread.stopTimer = setTimeout(() => controller.abort(), this._stopGraceMs);
    try {
      // The server ends the stream with `done` (status "stopped") and saves what there was.
      await this._client.stop(messageId);
    } catch {
      controller.abort();
    }
  }

  /** Apply one typed event; true when the reply has ended. */
  private _apply(
    thread: IThread,
    reply: IChatMessage,
    event: ChatEvent
  ): boolean {
    const outcome = applyEvent(thread, reply, event);
    switch (outcome.do) {
      case 'redraw':
        if (event.type === 'start' && !reply.content) {
          // `start` only names the reply. Drawing it now, still empty, would start the
          // view's render throttle, and the first token (right behind it with a fast
          // model) would wait out the interval: measured ~25 ms of Send to first token.
          return false;
        }
        this._emitMessage(thread, reply);
        return false;
      case 'notice':
        if (thread.notebook === this._notebook && !this._disposed) {
          this._changed.emit();
        }
        return false;
      case 'end':
        this._setStatus(thread, reply, outcome.status);
        return true;
      case 'fail':
        this._fail(thread, reply, outcome.message);
        return true;
    }
  }

  private _setStatus(
    thread: IThread,
    reply: IChatMessage,
    status: MessageStatus
  ): void {
    reply.status = status;
    reply.created = new Date().toISOString();
    this._emitMessage(thread, reply);
  }

  private _fail(thread: IThread, reply: IChatMessage, message: string): void {
    reply.error = message;
    thread.error = message;
    this._setStatus(thread, reply, 'error');
  }

  private _client: IChatClient;
  private _savesInNotebook = false;
  private _chatOff = false;
  private _serverNotices: string[] = [];
  private _serverNoticesDismissed = false;
  private _choice = new ModelChoice();
  private _context: IChatContext | null = null;
  private _contextLoads = 0;
  private _draft = '';
  private _contextDefault: boolean;
  private _contextEnabled: boolean;
  private _stopGraceMs: number;
  private _modelSelected = new Signal<this, string | null>(this);
}
