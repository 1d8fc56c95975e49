/**
 * The cards other plugins show in the chat ({@link IChatExtension.showCard}, e.g. an outside
 * agent's approval), drawn above the input while the chat is about their notebook. The
 * plugin places it over the panel's node, so `panel.ts` has no part in it.
 */

import { element } from '../common/dom';
import type { ChatExtension } from './extension';
import type { ChatModel } from './model';

/** The cards' area above the chat's input row. */
export class ChatCards {
  /** Place it in `panel` (the chat panel's node) and follow `extension`'s cards. */
  constructor(
    private _model: ChatModel,
    private _extension: ChatExtension,
    panel: HTMLElement
  ) {
    const inputRow = panel.querySelector('.jp-Chapyter-chatInputRow');
    (inputRow?.parentElement ?? panel).prepend(this.node);
    _extension.changed.connect(this._update, this);
    _model.changed.connect(this._update, this);
    this._update();
  }

  /** The area. */
  readonly node = element('div', 'jp-Chapyter-chatCards', {
    role: 'region',
    'aria-label': 'Waiting for you'
  });

  private _update(): void {
    const shown = this._extension.cards.filter(
      card => card.notebook === this._model.notebook
    );
    for (const child of [...this.node.children]) {
      if (!shown.some(card => card.node === child)) {
        child.remove();
      }
    }
    for (const card of shown) {
      if (card.node.parentElement !== this.node) {
        this.node.appendChild(card.node);
      }
    }
    this.node.hidden = shown.length === 0;
  }
}
