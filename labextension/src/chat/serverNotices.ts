/**
 * What the server says of its settings, at the top of the chat: one line for each setting a
 * lock or a value that could not be used replaced, and the chat turned off
 * ({@link ChatModel.serverNotices}). Never an extension that is silently not there.
 */

import { button, element } from '../common/dom';
import type { ChatModel } from './model';

/** The notices' node, drawn from the model. */
export class ServerNotices {
  /** Build the (hidden) node over `model`. */
  constructor(private _model: ChatModel) {
    this.node = element('div', 'jp-Chapyter-chatServerNotices', {
      role: 'note',
      'aria-label': "The server's settings"
    });
    this._lines = element('div', 'jp-Chapyter-chatServerNoticeLines');
    const dismiss = button(
      'jp-Chapyter-chatDismiss',
      "Dismiss the server's notices",
      '×',
      null
    );
    dismiss.addEventListener('click', () => this._model.dismissServerNotices());
    this.node.append(this._lines, dismiss);
    this.node.hidden = true;
  }

  /** The element to place in the panel. */
  readonly node: HTMLElement;

  /** Draw the model's notices (hidden when there are none). */
  update(): void {
    const lines = this._model.serverNotices;
    const key = lines.join('\n');
    if (key === this._key) {
      return;
    }
    this._key = key;
    this._lines.textContent = '';
    for (const line of lines) {
      this._lines.appendChild(
        element('p', 'jp-Chapyter-chatServerNotice', {}, line)
      );
    }
    this.node.hidden = !lines.length;
  }

  private _lines: HTMLElement;
  private _key = '';
}
