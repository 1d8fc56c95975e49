/**
 * The follow-ups queue on screen: the current notebook's queued messages below the thread,
 * each marked "Queued" with a Remove button; once the reply ended without completing
 * (stopped or failed) each also gets Send, since nothing goes by itself then
 * (`followUpQueue.ts` says why). Also what the Send button says while a reply streams.
 */

import { element } from '../common/dom';
import { formatSize } from './attachmentRules';
import { IQueuedMessage } from './followUpQueue';
import type { ChatModel } from './model';

/** Longest part of a queued message named in its buttons' labels. */
const LABEL_CHARS = 40;

/** The start of a message, for a button's accessible name. */
export function shortText(text: string): string {
  const line = text.split(/\s+/).join(' ').trim();
  return line.length > LABEL_CHARS
    ? `${line.slice(0, LABEL_CHARS - 1)}…`
    : line;
}

/** Send while idle; while a reply streams, Queue (Stop sits beside it). */
export function sendLabel(send: HTMLButtonElement, streaming: boolean): void {
  send.hidden = false;
  const text = send.querySelector('.jp-Chapyter-chatButtonText');
  if (text) {
    text.textContent = streaming ? 'Queue' : 'Send';
  }
  const label = streaming ? 'Queue: send when the answer ends' : 'Send';
  send.setAttribute('aria-label', label);
  send.title = `${label} (Enter)`;
}

/** The queued messages of the current notebook's chat. */
export class FollowUpsView {
  /** A view over `model`'s queue; it draws itself when the queue or the chat changes. */
  constructor(readonly model: ChatModel) {
    this.node = element('div', 'jp-Chapyter-chatQueue', {
      role: 'region',
      'aria-label': 'Queued messages'
    });
    this._note = element('div', 'jp-Chapyter-chatQueueNote');
    this._list = element('ul', 'jp-Chapyter-chatQueueList');
    this.node.append(this._note, this._list);
    model.followUps.changed.connect(this.update, this);
    model.changed.connect(this.update, this);
    this.update();
  }

  /** The view's node. */
  readonly node: HTMLElement;

  /** Draw the current notebook's queue. */
  update(): void {
    const items = this.model.queued;
    const streaming = this.model.state === 'streaming';
    this.node.hidden = !items.length;
    this._note.textContent = streaming
      ? 'Sent one at a time as each answer ends:'
      : 'Not sent: the last answer was stopped or failed.';
    this._list.textContent = '';
    for (const item of items) {
      this._list.appendChild(this._item(item, !streaming));
    }
  }

  private _item(item: IQueuedMessage, idle: boolean): HTMLElement {
    const node = element('li', 'jp-Chapyter-chatQueued');
    const short = shortText(item.text);
    node.append(
      element('span', 'jp-Chapyter-chatQueuedBadge', {}, 'Queued'),
      element('span', 'jp-Chapyter-chatQueuedText', { title: item.text }, short)
    );
    if (item.attachments.length) {
      const size = item.attachments.reduce((sum, file) => sum + file.size, 0);
      const count = item.attachments.length;
      const files = `${count} file${count === 1 ? '' : 's'}, ${formatSize(size)}`;
      node.appendChild(
        element('span', 'jp-Chapyter-chatQueuedFiles', {}, files)
      );
    }
    if (idle) {
      node.appendChild(
        this._button('Send', `Send queued message now: ${short}`, () => {
          const taken = this.model.followUps.remove(item.id);
          if (taken) {
            void this.model.send(
              taken.text,
              taken.attachments,
              undefined,
              taken.mentions
            );
          }
        })
      );
    }
    node.appendChild(
      this._button('×', `Remove queued message: ${short}`, () =>
        this.model.followUps.remove(item.id)
      )
    );
    return node;
  }

  private _button(
    text: string,
    label: string,
    action: () => void
  ): HTMLButtonElement {
    const node = element(
      'button',
      'jp-Chapyter-chatButton jp-Chapyter-chatQueuedAction',
      { type: 'button', 'aria-label': label, title: label },
      text
    );
    node.addEventListener('click', action);
    return node;
  }

  private _note: HTMLElement;
  private _list: HTMLElement;
}
