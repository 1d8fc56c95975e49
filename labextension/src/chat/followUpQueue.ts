/**
 * The follow-ups queue, without DOM: a message sent while a reply streams (chat or agent
 * turn) waits in its notebook's thread instead of being refused, and goes once that reply
 * completes, oldest first, one per turn. A reply the user stopped, or one that failed, sends
 * nothing: the queue stays, each message to send or remove by hand (Stop means "let me
 * decide"; a follow-up to an answer that failed is likely to miss its point).
 */

import { ISignal, Signal } from '@lumino/signaling';

import type { IAttachment } from './attachmentRules';
import type { IChatMention, MessageStatus } from './tokens';

/** A message waiting for the reply streaming in its thread. */
export interface IQueuedMessage {
  /** Unique in this page. */
  readonly id: string;
  /** What the user wrote. */
  readonly text: string;
  /** The files that go with it. */
  readonly attachments: readonly IAttachment[];
  /** What it @-mentioned, taken from the input when it was queued (kept, not read again). */
  readonly mentions: IChatMention[];
}

/** Whether a reply that ended with `status` sends the next queued message by itself. */
export function sendsFollowUp(status: MessageStatus): boolean {
  return status === 'complete';
}

let queuedIds = 0;

/** Queued messages per thread (`K`: the thread object, which a rename keeps). */
export class FollowUpQueue<K extends object> {
  /** A message was queued, sent or removed. */
  get changed(): ISignal<this, void> {
    return this._changed;
  }

  /** The messages waiting in `key`'s thread, oldest first. */
  items(key: K | null): readonly IQueuedMessage[] {
    return (key && this._queues.get(key)) || [];
  }

  /** Queue a message in `key`'s thread. */
  add(
    key: K,
    text: string,
    attachments: readonly IAttachment[] = [],
    mentions?: IChatMention[]
  ): IQueuedMessage {
    queuedIds += 1;
    const item: IQueuedMessage = {
      id: `queued-${queuedIds}`,
      text,
      attachments: [...attachments],
      mentions: mentions ?? []
    };
    this._queues.set(key, [...this.items(key), item]);
    this._changed.emit();
    return item;
  }

  /** Take a message out of whichever thread holds it; null when none does. */
  remove(id: string): IQueuedMessage | null {
    for (const [key, items] of this._queues) {
      const item = items.find(entry => entry.id === id);
      if (item) {
        this._set(
          key,
          items.filter(entry => entry !== item)
        );
        this._changed.emit();
        return item;
      }
    }
    return null;
  }

  /**
   * The reply of `key`'s thread ended with `status`: the message to send now (taken out of
   * the queue), or null (nothing queued, or the reply was stopped or failed).
   */
  next(key: K, status: MessageStatus): IQueuedMessage | null {
    const items = this.items(key);
    if (!items.length || !sendsFollowUp(status)) {
      return null;
    }
    this._set(key, items.slice(1));
    this._changed.emit();
    return items[0];
  }

  private _set(key: K, items: readonly IQueuedMessage[]): void {
    if (items.length) {
      this._queues.set(key, items);
    } else {
      this._queues.delete(key);
    }
  }

  private _queues = new Map<K, readonly IQueuedMessage[]>();
  private _changed = new Signal<this, void>(this);
}
