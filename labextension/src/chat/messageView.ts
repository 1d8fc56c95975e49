/**
 * One chat message on screen. An assistant's answer is drawn as Markdown ({@link AnswerView}:
 * no HTML, nothing fetched) and drawn again as it streams, throttled; its code blocks get
 * buttons once the answer is complete.
 */

import type { IEditorLanguageRegistry } from '@jupyterlab/codemirror';
import { IRenderMimeRegistry } from '@jupyterlab/rendermime';

import { codeBlockKey } from '../contract';
import { CodeActions } from './actions';
import { usageText } from '../common/usage';
import { AnswerView } from './answer';
import { attachmentChips } from './attachments';
import {
  ICodeBlockHandlers,
  REVIEW_HOLD,
  UNCHECKED_PROBLEM
} from './codeBlocks';
import { element } from '../common/dom';
import { mentionList } from './mentionChips';
import {
  author,
  FROM_FILE,
  FROM_FILE_HOLD,
  FROM_FILE_TITLE,
  messageLabel
} from './origin';
import {
  IChatMessage,
  ICodeBlockOffer,
  ICodeBlockOrigin,
  IMessagePart
} from './tokens';

/** Longest gap between two renders of a streaming answer, in ms. */
export const RENDER_INTERVAL_MS = 50;

/** What a message view needs from the panel that shows it. */
export interface IMessageViewHost {
  /** Typesets the math of answers. */
  readonly rendermime: IRenderMimeRegistry;
  /** The editor's languages, to highlight the code blocks of answers. */
  readonly languages?: IEditorLanguageRegistry | null;
  /** Acts on the notebook (here: copies code). */
  readonly actions: CodeActions;
  /** Insert a code block of `message` in the active notebook (and run it). */
  insertCode(code: string, message: IChatMessage, run: boolean): Promise<void>;
  /** Keep the newest message in view if the reader was already at the bottom. */
  keepScrolled(): void;
  /** The parts other plugins draw in `message` (an agent turn's steps). */
  messageParts?(message: IChatMessage): IMessagePart[];
  /** An action other plugins offer under a code block (Apply to cell N), or null. */
  codeOffer?(code: string, origin: ICodeBlockOrigin): ICodeBlockOffer | null;
  /**
   * Review first for the model of `message`: the one line said under its code blocks, which
   * then offer no "Insert and run"; null when its code may run at once.
   */
  reviewNote?(message: IChatMessage): string | null;
}

/** One message on screen; an assistant's answer is re-rendered as it streams, throttled. */
export class MessageView {
  /** Build the view of `message`, shown by `_panel`. */
  constructor(
    readonly message: IChatMessage,
    private _panel: IMessageViewHost
  ) {
    const role = message.role;
    this.node = element('div', `jp-Chapyter-chatMessage jp-mod-${role}`, {
      role: 'article',
      'aria-label': messageLabel(message)
    });
    this._header = element('div', 'jp-Chapyter-chatMessageHeader');
    this._body = element('div', 'jp-Chapyter-chatMessageBody');
    this._footer = element('div', 'jp-Chapyter-chatMessageFooter');
    this._parts = _panel.messageParts?.(message) ?? [];
    this.node.append(this._header);
    if (message.mentions?.length) {
      this.node.appendChild(mentionList(message.mentions));
    }
    for (const part of this._parts) {
      this.node.appendChild(part.node);
    }
    this.node.append(this._body);
    const files = attachmentChips(message.attachments);
    if (files) {
      this.node.append(files);
    }
    for (const part of this._parts) {
      // A step waiting for approval comes after the text: streaming never hides it.
      if (part.pending) {
        this.node.appendChild(part.pending);
      }
    }
    this.node.append(this._footer);
    if (role === 'assistant') {
      this._answer = new AnswerView({
        languages: _panel.languages,
        latexTypesetter: _panel.rendermime.latexTypesetter
      });
      this._body.appendChild(this._answer.node);
    }
    this.update();
  }

  /** The message's node. */
  readonly node: HTMLElement;

  /** Show the message as it is now, at most every {@link RENDER_INTERVAL_MS}. */
  update(): void {
    if (this._disposed) {
      return;
    }
    if (this._timer !== null) {
      // The redraw already due draws the message as it is then.
      return;
    }
    // The first text of an answer is drawn at once: the throttle only spaces out the
    // redraws that follow (measured: it otherwise delayed the first token by ~40 ms).
    const firstText = !this._drawnContent && !!this.message.content;
    const wait = firstText
      ? 0
      : Math.max(0, this._lastRender + RENDER_INTERVAL_MS - Date.now());
    this._timer = setTimeout(() => {
      this._timer = null;
      this._render();
    }, wait);
  }

  /** Stop drawing and leave the page. */
  dispose(): void {
    this._disposed = true;
    if (this._timer !== null) {
      clearTimeout(this._timer);
    }
    for (const part of this._parts) {
      part.dispose();
    }
    this.node.remove();
  }

  private _render(): void {
    try {
      this._draw();
    } catch (error) {
      console.error('chapyter-ext: could not render a chat message', error);
    } finally {
      this._lastRender = Date.now();
    }
  }

  private _draw(): void {
    const message = this.message;
    const streaming = message.status === 'streaming';
    this._drawHeader();
    for (const part of this._parts) {
      part.update();
    }
    this.node.setAttribute('aria-busy', streaming ? 'true' : 'false');
    this.node.classList.toggle('jp-mod-streaming', streaming);
    this.node.classList.toggle('jp-mod-error', message.status === 'error');
    // The buttons depend on the model being review-first, known once the config loaded:
    // when that changes after they were added, the answer is drawn again with new ones.
    const note = message.imported
      ? FROM_FILE_HOLD
      : (this._panel.reviewNote?.(message) ?? null);
    const content = message.content;
    const key = streaming ? 'streaming' : `done ${note}`;
    if (!this._answer) {
      this._body.textContent = content;
    } else if (content !== this._drawnContent || key !== this._drawnKey) {
      this._answer.render(
        content,
        streaming ? null : this._buttons(note),
        streaming ? undefined : message.numbers
      );
    }
    this._drawnContent = content;
    this._drawnKey = key;
    this._drawFooter();
    this._panel.keepScrolled();
  }

  private _drawHeader(): void {
    const message = this.message;
    const who = author(message);
    const status =
      message.status === 'stopped'
        ? 'stopped'
        : message.status === 'error'
          ? 'failed'
          : '';
    const key = `${who}|${status}|${!!message.imported}`;
    if (key === this._headerKey) {
      return;
    }
    this._headerKey = key;
    this.node.setAttribute('aria-label', messageLabel(message));
    this.node.classList.toggle('jp-mod-imported', !!message.imported);
    this._header.textContent = '';
    this._header.appendChild(
      element('span', 'jp-Chapyter-chatAuthor', {}, who)
    );
    if (status) {
      this._header.appendChild(
        element('span', 'jp-Chapyter-chatStatus', {}, status)
      );
    }
    if (message.imported) {
      this._header.appendChild(
        element(
          'span',
          'jp-Chapyter-chatOrigin',
          { title: FROM_FILE_TITLE },
          FROM_FILE
        )
      );
    }
  }

  private _drawFooter(): void {
    const message = this.message;
    this._footer.textContent = '';
    if (
      message.status === 'streaming' &&
      !message.content &&
      !this._parts.some(part => part.waiting)
    ) {
      this._footer.appendChild(
        element(
          'span',
          'jp-Chapyter-chatThinking',
          { role: 'status' },
          'Thinking…'
        )
      );
    } else if (message.status === 'error') {
      // The reason also shows in the error line above the input while it is fresh; the
      // message keeps it, so it is still there after a reload.
      const lead = message.content ? 'The answer broke off.' : 'No answer.';
      const reason = (message.error ?? '').replace(/^The model failed:\s*/, '');
      const note = reason ? `${lead} ${reason}` : lead;
      this._footer.appendChild(
        element(
          'span',
          'jp-Chapyter-chatMessageError',
          { title: message.error ?? '' },
          note
        )
      );
    } else if (message.usage) {
      this._footer.appendChild(
        element(
          'span',
          'jp-Chapyter-chatMessageUsage',
          {},
          usageText(message.usage)
        )
      );
    }
  }

  /**
   * Insert below, Insert and run (not for a review-first model, `note` says why), Copy and
   * Apply to cell N under every code block of the answer.
   */
  private _buttons(note: string | null): ICodeBlockHandlers {
    // Verdicts that came with the file were made elsewhere, if at all: none are used.
    const checks = this.message.imported ? [] : (this.message.checks ?? []);
    return {
      insert: (code, run) =>
        void this._panel.insertCode(code, this.message, run),
      copy: code => this._panel.actions.copy(code),
      reviewNote: note,
      verdict: code => {
        const key = codeBlockKey(code);
        const found = checks.find(check => check.block_id === key);
        // The server checks every block it draws as code: in an answer it checked, a block
        // it did not read the way the browser does is not offered either.
        return (
          found ??
          (checks.length
            ? { runnable: false, problem: UNCHECKED_PROBLEM }
            : null)
        );
      },
      applyOffer: code =>
        this._panel.codeOffer?.(code, {
          model: this.message.model ?? '',
          hold: this.message.imported
            ? FROM_FILE_HOLD
            : note
              ? REVIEW_HOLD
              : null
        }) ?? null
    };
  }

  private _header: HTMLElement;
  private _parts: IMessagePart[];
  private _body: HTMLElement;
  private _footer: HTMLElement;
  private _answer: AnswerView | null = null;
  private _drawnContent: string | null = null;
  private _drawnKey = '';
  private _headerKey = '';
  private _timer: ReturnType<typeof setTimeout> | null = null;
  private _lastRender = 0;
  private _disposed = false;
}
