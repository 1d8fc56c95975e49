/**
 * The chat sidebar: a view over {@link ChatModel}. It keeps no state of its own beyond what
 * is on screen; every action goes to the model (messages) or to {@link CodeActions} (cells).
 * Each message is a {@link MessageView}.
 */

import type { IEditorLanguageRegistry } from '@jupyterlab/codemirror';
import { IRenderMimeRegistry } from '@jupyterlab/rendermime';
import { addIcon, downloadIcon, stopIcon } from '@jupyterlab/ui-components';
import { Message } from '@lumino/messaging';
import { Widget } from '@lumino/widgets';

import { button, element } from '../common/dom';
import { usageText } from '../common/usage';
import { IChatCodeOrigin } from '../contract';
import { CodeActions } from './actions';
import { ContextChip } from './contextChip';
import { holdFocus } from './focus';
import { drawEmpty, REVIEW_NOTE } from './emptyState';
import { ChatInput } from './chatInput';
import { ChatExtension } from './extension';
import { MessageView } from './messageView';
import { ChatModel } from './model';
import { ServerNotices } from './serverNotices';
import {
  CHAT_OFF,
  IChatMessage,
  IChatMode,
  IChatModeControls,
  ICodeBlockOffer,
  ICodeBlockOrigin,
  IMessagePart
} from './tokens';

/** Pause in typing after which the chip is brought up to date for the draft (ms). */
const DRAFT_PREVIEW_MS = 400;
/** Id of the keyboard hint under the input, which describes the input. */
const HINT_ID = 'jp-chapyter-chat-hint';

/** Options of {@link ChatPanel}. */
export interface IChatPanelOptions {
  /** The chat's state. */
  model: ChatModel;
  /** Typesets the math of answers. */
  rendermime: IRenderMimeRegistry;
  /** The editor's languages, to highlight the code blocks of answers. */
  languages?: IEditorLanguageRegistry | null;
  /** Inserts, runs and copies code. */
  actions: CodeActions;
  /** What other plugins plug into the chat (a mode, message parts, code block actions). */
  extension: ChatExtension;
  /** Runs "Export chat" (the plugin's command); none: no Export button. */
  exportChat?: (() => Promise<unknown>) | null;
}

/** The sidebar panel titled "AI Chat". */
export class ChatPanel extends Widget {
  /** Build the panel over a model. */
  constructor(options: IChatPanelOptions) {
    super();
    this.model = options.model;
    this.rendermime = options.rendermime;
    this.languages = options.languages ?? null;
    this.actions = options.actions;
    this.extension = options.extension;
    this.addClass('jp-Chapyter-chat');
    this.node.setAttribute('role', 'region');
    this.node.setAttribute('aria-label', 'AI Chat');

    // Header: title, model picker, New chat.
    const header = element('div', 'jp-Chapyter-chatHeader');
    header.appendChild(element('h2', 'jp-Chapyter-chatTitle', {}, 'AI Chat'));
    this._modelSelect = element('select', 'jp-Chapyter-chatModel', {
      'aria-label': 'Model',
      title: 'Model that answers'
    });
    this._modelSelect.addEventListener('change', () => {
      this.model.selectedModel = this._modelSelect.value || null;
    });
    this._newChat = button(
      'jp-Chapyter-chatNew',
      'New chat',
      '',
      addIcon,
      'New chat: start over for this notebook (earlier chats are kept)'
    );
    this._newChat.addEventListener('click', () => void this._startNewChat());
    // What this notebook's chats used (tokens, and cost where the admin set prices).
    this._usage = element('span', 'jp-Chapyter-chatUsage', {
      role: 'status',
      'aria-label': "This notebook's usage"
    });
    this._usage.hidden = true;
    // Where this chat goes with the notebook, and its export.
    this._saved = element(
      'span',
      'jp-Chapyter-chatSaved',
      {
        role: 'note',
        title:
          'Saved in the notebook: saving the notebook stores this chat in its metadata (redacted), so it travels with the file (Chapyter.save_chat_in_notebook)'
      },
      'In notebook'
    );
    this._export = button(
      'jp-Chapyter-chatExport',
      'Export chat',
      '',
      downloadIcon,
      'Export chat: write it as Markdown next to the notebook (secrets redacted)'
    );
    this._export.hidden = !options.exportChat;
    this._export.addEventListener('click', () => void options.exportChat?.());
    header.append(this._saved, this._modelSelect, this._export, this._newChat);

    // Messages, with the empty state in the same scrolling area.
    this._messages = element('div', 'jp-Chapyter-chatMessages', {
      role: 'log',
      'aria-label': 'Messages',
      tabindex: '0'
    });
    this._messages.addEventListener('scroll', () => {
      const list = this._messages;
      this._atBottom =
        list.scrollHeight - list.scrollTop - list.clientHeight < 48;
    });
    this._empty = element('div', 'jp-Chapyter-chatEmpty');
    this._messages.appendChild(this._empty);

    // One-line error.
    this._error = element('div', 'jp-Chapyter-chatError', { role: 'alert' });
    this._errorText = element('span', 'jp-Chapyter-chatErrorText');
    const dismiss = button(
      'jp-Chapyter-chatDismiss',
      'Dismiss error',
      '×',
      null
    );
    // The same line shows a one-time notice (e.g. damaged history) once no error is shown.
    dismiss.addEventListener('click', () =>
      this.model.error ? this.model.dismissError() : this.model.dismissNotice()
    );
    this._error.append(this._errorText, dismiss);

    this._chip = new ContextChip(this.model);

    // Input, Send and Stop.
    const inputRow = element('div', 'jp-Chapyter-chatInputRow');
    this._input = element('textarea', 'jp-Chapyter-chatInput', {
      'aria-label': 'Ask AI',
      'aria-describedby': HINT_ID,
      rows: '3',
      placeholder: 'Ask about this notebook'
    });
    this._input.addEventListener('keydown', event => this._onKeydown(event));
    this._input.addEventListener('input', () => {
      this._updateInput();
      // The chip shows what this draft would send (what it names comes first), once the
      // user pauses.
      clearTimeout(this._draftTimer);
      this._draftTimer = setTimeout(
        () => void this.model.refreshContext(this._input.value),
        DRAFT_PREVIEW_MS
      );
    });
    this._input.addEventListener(
      'focus',
      () => void this.model.refreshContext(this._input.value)
    );
    this._send = button(
      'jp-Chapyter-chatSend jp-mod-accept',
      'Send',
      'Send',
      null,
      'Send (Enter)'
    );
    this._send.addEventListener('click', () => this._sendInput());
    this._stop = button(
      'jp-Chapyter-chatStop jp-mod-warn',
      'Stop',
      'Stop',
      stopIcon,
      'Stop the answer'
    );
    this._stop.addEventListener('click', () => void this.model.stop());
    inputRow.append(this._input, this._send, this._stop);

    const hint = element(
      'div',
      'jp-Chapyter-chatHint',
      { id: HINT_ID },
      'Enter to send · Shift+Enter for a new line'
    );

    const footer = element('div', 'jp-Chapyter-chatFooter');
    const extras = new ChatInput(this._input, this.model, this.extension).node;
    footer.append(this._error, this._chip.node, extras, inputRow, hint);
    this._inputRow = inputRow;
    // What the server uses instead of a user's setting, and what it turned off.
    this._serverNotices = new ServerNotices(this.model);
    this.node.append(header, this._serverNotices.node, this._usage);
    this.node.append(this._messages, footer);

    this.model.changed.connect(this._onChanged, this);
    this.model.messageChanged.connect(this._onMessageChanged, this);
    this.model.contextChanged.connect(this._onContextChanged, this);
    this.extension.changed.connect(this._onExtended, this);
    this._onExtended();
    this._onChanged();
    this._onContextChanged();
  }

  /** The chat's state. */
  readonly model: ChatModel;
  /** Typesets the math of answers. */
  readonly rendermime: IRenderMimeRegistry;
  /** Highlights the code blocks of answers. */
  readonly languages: IEditorLanguageRegistry | null;
  /** Acts on the notebook. */
  readonly actions: CodeActions;
  /** What other plugins plug into the chat. */
  readonly extension: ChatExtension;

  /** The parts other plugins draw in `message` (an agent turn's steps). */
  messageParts(message: IChatMessage): IMessagePart[] {
    return this.extension.messageParts(message);
  }

  /** An action other plugins offer under a code block (Apply to cell N), or null. */
  codeOffer(code: string, origin: ICodeBlockOrigin): ICodeBlockOffer | null {
    return this.extension.codeOffer(code, origin);
  }

  /** Put the cursor in the input (and keep it there while the palette closes). */
  focusInput(): void {
    holdFocus(this._input, this.node);
  }

  /** The review-first line for the model of `message`, or null when its code may run. */
  reviewNote(message: IChatMessage): string | null {
    return this.model.modelInfo(message.model)?.review_first
      ? REVIEW_NOTE
      : null;
  }

  /** Insert a code block of `message` in the active notebook (and run it, unless review-first). */
  async insertCode(
    code: string,
    message: IChatMessage,
    run: boolean
  ): Promise<void> {
    const info = this.model.modelInfo(message.model);
    run = run && !info?.review_first;
    const origin: IChatCodeOrigin = {
      model: info?.model ?? message.model,
      endpoint: info?.host,
      chatId: this.model.chatId,
      messageId: message.id,
      created: message.created
    };
    await this.actions.insert(code, origin, run);
  }

  /** Keep the newest message in view if the reader was already at the bottom. */
  keepScrolled(): void {
    if (this._atBottom) {
      this._messages.scrollTop = this._messages.scrollHeight;
    }
  }

  /** Read the context again when the panel is shown: the chip may be out of date. */
  protected onAfterShow(msg: Message): void {
    super.onAfterShow(msg);
    void this.model.refreshContext();
    this.keepScrolled();
  }

  /** Activating the panel (its tab, or the Open AI Chat command) puts the cursor in the input. */
  protected onActivateRequest(msg: Message): void {
    super.onActivateRequest(msg);
    if (!this._input.disabled) {
      this._input.focus();
    }
  }

  /** Stop listening and free the message views. */
  dispose(): void {
    if (this.isDisposed) {
      return;
    }
    clearTimeout(this._draftTimer);
    for (const view of this._views.values()) {
      view.dispose();
    }
    this._views.clear();
    super.dispose();
  }

  private _onKeydown(event: KeyboardEvent): void {
    if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) {
      // Enter sends; Shift+Enter falls through to the textarea and makes a new line.
      event.preventDefault();
      event.stopPropagation();
      this._sendInput();
    }
  }

  private _sendInput(): void {
    const text = this._input.value;
    const { notebook, state } = this.model;
    if (!text.trim() || !notebook || state === 'loading') {
      return;
    }
    this._input.value = '';
    this._atBottom = true;
    void this.model.send(text, this.model.attachments.take());
    this._updateInput();
  }

  private async _startNewChat(): Promise<void> {
    await this.model.newChat();
    this._input.focus();
  }

  /** The mode that is on, or null. */
  private get _activeMode(): IChatMode | null {
    const mode = this.extension.mode;
    return mode?.enabled ? mode : null;
  }

  /** A plugin set a mode or added message parts: draw them. */
  private _onExtended(): void {
    const mode = this.extension.mode;
    if (mode !== this._mode) {
      this._mode?.changed.disconnect(this._onModeChanged, this);
      this._mode = mode;
      this._modeControls?.node.remove();
      // A mode's controls (agent mode) sit right below the input, after it in tab order.
      this._modeControls = mode ? mode.controls() : null;
      if (this._modeControls) {
        this._inputRow.after(this._modeControls.node);
      }
      mode?.changed.connect(this._onModeChanged, this);
    }
    // Views built before a plugin added its parts are built again with them.
    for (const view of this._views.values()) {
      view.dispose();
    }
    this._views.clear();
    this._onChanged();
    this._onModeChanged();
  }

  private _onModeChanged(): void {
    this._updateInput();
    this._onContextChanged();
  }

  private _onChanged(): void {
    const model = this.model;
    this._drawModels();
    this._drawUsage();
    this._newChat.disabled = !model.notebook || model.state !== 'idle';
    this._export.disabled =
      !model.chatId || !model.messages.length || model.state !== 'idle';
    this._saved.hidden = !model.savesInNotebook || !model.notebook;
    this._serverNotices.update();
    this._drawMessages();
    this._drawEmpty();
    const error = model.error ?? model.notice;
    this._error.hidden = !error;
    this._error.classList.toggle('jp-mod-notice', !model.error && !!error);
    this._errorText.textContent = error ?? '';
    this._errorText.title = error ?? '';
    this._updateInput();
  }

  private _onMessageChanged(_: ChatModel, message: IChatMessage): void {
    this._views.get(message)?.update();
  }

  private _onContextChanged(): void {
    this._chip.update(this._activeMode);
  }

  private _drawModels(): void {
    const models = this.model.models;
    const key = models
      .map(m => `${m.name}\u0000${m.model}\u0000${m.host}`)
      .join('\u0001');
    if (key !== this._modelsKey) {
      this._modelsKey = key;
      this._modelSelect.textContent = '';
      for (const info of models) {
        const label =
          info.name === info.model ? info.name : `${info.name} (${info.model})`;
        const option = element('option', '', { value: info.name }, label);
        option.title = `${info.model} at ${info.host}`;
        this._modelSelect.appendChild(option);
      }
      if (!models.length) {
        this._modelSelect.appendChild(
          element('option', '', { value: '' }, 'No model')
        );
      }
    }
    this._modelSelect.value = this.model.selectedModel ?? '';
    this._modelSelect.disabled = models.length === 0;
  }

  private _drawUsage(): void {
    const usage = this.model.usage;
    this._usage.hidden = !usage;
    this._usage.textContent = usage ? `This notebook: ${usageText(usage)}` : '';
    this._usage.title = usage
      ? `What this notebook's chats used so far: ${usageText(usage)}`
      : '';
  }

  private _drawMessages(): void {
    const messages = this.model.messages;
    const wanted = new Set(messages);
    for (const [message, view] of this._views) {
      if (!wanted.has(message)) {
        view.dispose();
        this._views.delete(message);
      }
    }
    let previous: Element = this._empty;
    for (const message of messages) {
      let view = this._views.get(message);
      if (!view) {
        view = new MessageView(message, this);
        this._views.set(message, view);
      } else {
        view.update();
      }
      if (previous.nextElementSibling !== view.node) {
        previous.after(view.node);
      }
      previous = view.node;
    }
    this.keepScrolled();
  }

  private _drawEmpty(): void {
    drawEmpty(this._empty, this.model, text => {
      this._input.value = text;
      this._updateInput();
      this._input.focus();
    });
  }

  private _updateInput(): void {
    const model = this.model;
    const streaming = model.state === 'streaming';
    const hadFocus = document.activeElement === this._stop;
    this._input.disabled = !model.notebook || model.chatOff;
    this._input.placeholder = model.chatOff
      ? CHAT_OFF
      : !model.notebook
        ? 'Open a notebook to chat about it'
        : (this._activeMode?.placeholder ?? 'Ask about this notebook');
    this._modeControls?.update(!!model.notebook);
    this._send.disabled =
      !model.notebook ||
      model.chatOff ||
      model.state === 'loading' ||
      !this._input.value.trim();
    this._stop.hidden = !streaming;
    this._stop.disabled = model.stopping;
    if (hadFocus && !streaming) {
      this._input.focus();
    }
  }

  private _mode: IChatMode | null = null;
  private _modeControls: IChatModeControls | null = null;
  private _inputRow: HTMLElement;
  private _modelSelect: HTMLSelectElement;
  private _newChat: HTMLButtonElement;
  private _export: HTMLButtonElement;
  private _saved: HTMLElement;
  private _messages: HTMLElement;
  private _usage: HTMLElement;
  private _serverNotices: ServerNotices;
  private _empty: HTMLElement;
  private _error: HTMLElement;
  private _errorText: HTMLElement;
  private _chip: ContextChip;
  private _input: HTMLTextAreaElement;
  private _draftTimer: ReturnType<typeof setTimeout> | undefined;
  private _send: HTMLButtonElement;
  private _stop: HTMLButtonElement;
  private _views = new Map<IChatMessage, MessageView>();
  private _modelsKey = '';
  /** Whether the message list follows new text (the reader has not scrolled up). */
  private _atBottom = true;
}
