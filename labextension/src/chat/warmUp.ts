/**
 * The chat's hint that a user is about to ask a model: the server loads the model
 * SDK (~0.5 s, ~30 MB) when the chat panel is first shown, not when it starts, so that a
 * server nobody chats with stays small and the first answer still finds it loaded.
 */

import { IMessageHandler, Message, MessageLoop } from '@lumino/messaging';
import { Widget } from '@lumino/widgets';

import { requestAPI } from '../request';

/**
 * `POST warm`: the server starts loading the SDK and answers at once. A failure (an older
 * server) costs nothing but the wait at the first answer: it is only logged.
 */
export async function sendWarmUpHint(
  request: typeof requestAPI = requestAPI
): Promise<void> {
  try {
    await request('warm', { method: 'POST', body: '{}' });
  } catch (reason) {
    console.debug('chapyter-ext: the warm-up hint failed', reason);
  }
}

/** Call `hint` once, the first time `widget` is visible (at once if it already is). */
export function hintWhenFirstShown(
  widget: Widget,
  hint: () => Promise<unknown>
): void {
  let sent = false;
  const send = () => {
    if (!sent && !widget.isDisposed && widget.isVisible) {
      sent = true;
      MessageLoop.removeMessageHook(widget, hook);
      void hint();
    }
  };
  // Shown from a collapsed side area ('after-show'), or restored open with the page
  // ('after-attach'): the hook runs before the widget takes the message, so check after it.
  const hook = (_: IMessageHandler, msg: Message): boolean => {
    if (msg.type === 'after-show' || msg.type === 'after-attach') {
      void Promise.resolve().then(send);
    }
    return true;
  };
  MessageLoop.installMessageHook(widget, hook);
  send();
}
