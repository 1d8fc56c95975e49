/**
 * The chat input's popup: opened by `/` at the start of the input or `@` at a word
 * start, filtered as the user types, keyboard first (ArrowUp/Down, Enter or Tab to pick,
 * Escape to close) and clickable. A listbox the textarea controls: `aria-expanded`,
 * `aria-controls` and `aria-activedescendant` on the textarea. What to list and what a pick
 * does are the caller's; the token rules are `inputMenuLogic.ts`'s.
 */

import { element } from '../common/dom';
import {
  findTrigger,
  IMenuItem,
  IMenuTrigger,
  moveActive,
  rankItems,
  replaceToken
} from './inputMenuLogic';

/** What the menu lists for a trigger (unfiltered: the menu ranks them). */
export type MenuSource = (
  trigger: IMenuTrigger
) => Promise<IMenuItem[]> | IMenuItem[];

let menus = 0;

/** The popup attached to one textarea. */
export class InputMenu {
  /**
   * Attach to `input`: `source` lists the items, `onPick` hears what was picked (after the
   * token was replaced in the text).
   */
  constructor(
    private _input: HTMLTextAreaElement,
    private _source: MenuSource,
    private _onPick: (item: IMenuItem, trigger: IMenuTrigger) => void
  ) {
    this._id = `jp-chapyter-chat-menu-${++menus}`;
    this.node = element('ul', 'jp-Chapyter-chatMenu', {
      id: this._id,
      role: 'listbox',
      'aria-label': 'Suggestions'
    });
    this.node.hidden = true;
    // A click must not take the focus from the input first.
    this.node.addEventListener('mousedown', event => event.preventDefault());
    _input.setAttribute('aria-haspopup', 'listbox');
    _input.setAttribute('aria-autocomplete', 'list');
    _input.setAttribute('aria-controls', this._id);
    _input.setAttribute('aria-expanded', 'false');
    _input.addEventListener('blur', () => this.close());
  }

  /** The listbox's node. */
  readonly node: HTMLElement;

  /** Whether it is open. */
  get isOpen(): boolean {
    return !this.node.hidden;
  }

  /** The items shown, best first. */
  get items(): readonly IMenuItem[] {
    return this._items;
  }

  /** The highlighted row, or -1. */
  get active(): number {
    return this._active;
  }

  /** Read the text at the caret again: open, filter or close. */
  async update(): Promise<void> {
    const input = this._input;
    const trigger = findTrigger(input.value, input.selectionStart ?? 0);
    const load = ++this._loads;
    if (!trigger) {
      this.close();
      return;
    }
    let items: IMenuItem[] = [];
    try {
      items = await this._source(trigger);
    } catch (error) {
      console.warn('chapyter-ext: could not list the suggestions', error);
    }
    if (load !== this._loads) {
      return; // a later keystroke asked again
    }
    const query =
      trigger.char === '/' ? trigger.query : trigger.query.replace(/^.*\//, '');
    const shown = rankItems(items, query.slice(query.lastIndexOf(' ') + 1));
    if (!shown.length) {
      this.close();
      return;
    }
    this._trigger = trigger;
    this._items = shown;
    this._active = 0;
    this._draw();
  }

  /** Handle a key while open; true when it was the menu's (the caller does nothing more). */
  keydown(event: KeyboardEvent): boolean {
    if (!this.isOpen || event.isComposing) {
      return false;
    }
    const count = this._items.length;
    switch (event.key) {
      case 'ArrowDown':
      case 'ArrowUp':
        this._active = moveActive(
          this._active,
          count,
          event.key === 'ArrowDown' ? 1 : -1
        );
        this._draw();
        break;
      case 'Enter':
      case 'Tab':
        if (event.shiftKey || this._active < 0) {
          return false;
        }
        this.pick(this._active);
        break;
      case 'Escape':
        this.close();
        break;
      default:
        return false;
    }
    event.preventDefault();
    event.stopPropagation();
    return true;
  }

  /** Pick the item at `index`: its text replaces the typed token. */
  pick(index: number): void {
    const item = this._items[index];
    const trigger = this._trigger;
    if (!item || !trigger) {
      return;
    }
    const input = this._input;
    const next = replaceToken(
      input.value,
      trigger,
      input.selectionStart ?? input.value.length,
      item.insert,
      item.keepOpen
    );
    input.value = next.text;
    input.setSelectionRange(next.caret, next.caret);
    this.close();
    this._onPick(item, trigger);
    input.dispatchEvent(new Event('input', { bubbles: true }));
    input.focus();
  }

  /** Close it. */
  close(): void {
    this._loads++;
    this.node.hidden = true;
    this.node.textContent = '';
    this._items = [];
    this._active = -1;
    this._trigger = null;
    this._input.setAttribute('aria-expanded', 'false');
    this._input.removeAttribute('aria-activedescendant');
  }

  private _draw(): void {
    this.node.textContent = '';
    this._items.forEach((item, index) => {
      const row = element('li', 'jp-Chapyter-chatMenuItem', {
        id: `${this._id}-${index}`,
        role: 'option',
        'aria-selected': String(index === this._active)
      });
      row.appendChild(
        element('span', 'jp-Chapyter-chatMenuLabel', {}, item.label)
      );
      if (item.detail) {
        row.appendChild(
          element('span', 'jp-Chapyter-chatMenuDetail', {}, item.detail)
        );
      }
      row.classList.toggle('jp-mod-active', index === this._active);
      row.addEventListener('click', () => this.pick(index));
      this.node.appendChild(row);
    });
    this.node.hidden = false;
    this._input.setAttribute('aria-expanded', 'true');
    if (this._active >= 0) {
      this._input.setAttribute(
        'aria-activedescendant',
        `${this._id}-${this._active}`
      );
      this.node.children[this._active]?.scrollIntoView?.({ block: 'nearest' });
    }
  }

  private _id: string;
  private _items: IMenuItem[] = [];
  private _active = -1;
  private _trigger: IMenuTrigger | null = null;
  private _loads = 0;
}
