/**
 * The chips of @-mentions: removable buttons above the input (click, or Backspace
 * in an empty input for the last one), read-only on a sent message.
 */

import { element } from '../common/dom';
import { mentionKey } from './mentions';
import type { IChatMention } from './tokens';

/** What a chip's tooltip says of a mention. */
function chipTitle(mention: IChatMention): string {
  const what = { variable: 'Variable', cell: 'Cell', file: 'File' }[
    mention.kind
  ];
  return `${what} ${mention.label}: sent with the message`;
}

/** The read-only chips of a sent message's mentions. */
export function mentionList(mentions: readonly IChatMention[]): HTMLElement {
  const list = element('ul', 'jp-Chapyter-chatMentions', {
    'aria-label': 'Mentioned'
  });
  for (const mention of mentions) {
    const chip = element(
      'li',
      `jp-Chapyter-chatMention jp-mod-${mention.kind}`,
      { title: chipTitle(mention) },
      `@${mention.label}`
    );
    list.appendChild(chip);
  }
  return list;
}

/** The chips above the input: the mentions the next message sends, each removable. */
export class MentionChips {
  /** Build the (empty, hidden) list. */
  constructor(private _onRemoved: () => void = () => undefined) {
    this.node = element('ul', 'jp-Chapyter-chatMentions jp-mod-draft', {
      'aria-label': 'Mentions sent with the next message'
    });
    this.node.hidden = true;
  }

  /** The list's node. */
  readonly node: HTMLElement;

  /** The mentions, in the order they were picked. */
  get mentions(): readonly IChatMention[] {
    return this._mentions;
  }

  /** Add `mention` (once). */
  add(mention: IChatMention): void {
    const key = mentionKey(mention);
    if (!this._mentions.some(m => mentionKey(m) === key)) {
      this._mentions.push(mention);
      this._draw();
    }
  }

  /** Remove the mention at `index`. */
  remove(index: number): void {
    if (index >= 0 && index < this._mentions.length) {
      this._mentions.splice(index, 1);
      this._draw();
      this._onRemoved();
    }
  }

  /** Remove the last mention; false when there is none. */
  removeLast(): boolean {
    if (!this._mentions.length) {
      return false;
    }
    this.remove(this._mentions.length - 1);
    return true;
  }

  /** The mentions, and the chips cleared (the message that sends them is on its way). */
  take(): IChatMention[] {
    const taken = this._mentions;
    this._mentions = [];
    this._draw();
    return taken;
  }

  private _draw(): void {
    this.node.textContent = '';
    this._mentions.forEach((mention, index) => {
      const item = element(
        'li',
        `jp-Chapyter-chatMention jp-mod-${mention.kind}`
      );
      const remove = element(
        'button',
        'jp-Chapyter-chatMentionRemove',
        {
          type: 'button',
          'aria-label': `Remove mention ${mention.label}`,
          title: `${chipTitle(mention)}. Click to remove it.`
        },
        `@${mention.label} ×`
      );
      remove.addEventListener('click', () => this.remove(index));
      item.appendChild(remove);
      this.node.appendChild(item);
    });
    this.node.hidden = !this._mentions.length;
  }

  private _mentions: IChatMention[] = [];
}
