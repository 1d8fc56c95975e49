/**
 * Where a chat message comes from: the user's own history, or a chat that came with the
 * notebook's file (`metadata.chapyter.chat`), which the server marks `imported` when it
 * takes it, whatever the file says. What the chat says of the latter, in one place: its
 * mark, its accessible name, why its code is not offered to run at once. Pure: no DOM.
 */

import type { IChatMessage } from './tokens';

/** The mark of a message that came with the notebook's file. */
export const FROM_FILE = 'from the notebook file';

/** The mark's tooltip: what it means. */
export const FROM_FILE_TITLE =
  "Saved in the notebook's metadata by whoever wrote the file: shown as it says, nothing " +
  'in it checked or acted on here (no Undo, no links to cells)';

/** Why the code of a message from the notebook's file is not offered to run at once. */
export const FROM_FILE_HOLD =
  'it came with the notebook file: read it before it runs';

/** Whether the server marked `data` (a message it served) as from the notebook's file. */
export function isImported(data: { imported?: unknown }): boolean {
  return data.imported === true;
}

/** Who wrote a message, as its header says. */
export function author(message: IChatMessage): string {
  if (message.role === 'assistant') {
    return message.model || 'Assistant';
  }
  // A question from the file was not necessarily asked by whoever reads it now.
  return message.imported ? 'Someone' : 'You';
}

/** The accessible name of a message: who wrote it, and whether it came with the file. */
export function messageLabel(message: IChatMessage): string {
  if (!message.imported) {
    return message.role === 'user' ? 'Your message' : 'Answer';
  }
  return message.role === 'user'
    ? `Message ${FROM_FILE}`
    : `Answer ${FROM_FILE}`;
}
