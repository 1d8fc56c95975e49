/**
 * What the chat shows before its first message: which notebook, which model answers (and
 * what review first means for it), what the chat sees, and a few requests to try.
 */

import { element } from '../common/dom';
import { REVIEW_HOLD } from './codeBlocks';
import type { ChatModel } from './model';

/** Id of the "Try:" label, which names the list of suggestions. */
const TRY_ID = 'jp-chapyter-chat-try';

/** Said under code blocks (and on the empty chat) when the model is review-first. */
export const REVIEW_NOTE =
  `Its code ${REVIEW_HOLD}: it is inserted below, not run; read it, then run the cell ` +
  '(Shift+Enter).';

/** Requests a person can try on an empty chat. */
const SUGGESTIONS = [
  'Explain what the active cell does',
  'Why did the last error happen, and how do I fix it?',
  'Summarise the DataFrames in memory',
  'Plot the numeric columns of a DataFrame'
];

/**
 * Draw the empty chat of `model` into `empty` (hidden once there are messages); a suggestion
 * clicked is given to `suggest`.
 */
export function drawEmpty(
  empty: HTMLElement,
  model: ChatModel,
  suggest: (text: string) => void
): void {
  empty.textContent = '';
  if (model.messages.length) {
    empty.hidden = true;
    return;
  }
  empty.hidden = false;
  if (!model.notebook) {
    empty.appendChild(
      element(
        'p',
        '',
        {},
        'Open a notebook to chat about it: the chat follows the active notebook.'
      )
    );
    return;
  }
  if (model.chatOff) {
    return; // the server's notices above say so; nothing here can be sent
  }
  if (model.state === 'loading') {
    empty.appendChild(
      element('p', '', { role: 'status' }, 'Loading the chat…')
    );
    return;
  }
  empty.appendChild(
    element('p', 'jp-Chapyter-chatEmptyTitle', {}, 'Ask about this notebook')
  );
  // Which model answers, and what that means, before the suggestions: "Try:" stays
  // right above them.
  const info = model.modelInfo();
  if (info?.notice) {
    const notice = element('div', 'jp-Chapyter-chatNotice', { role: 'note' });
    notice.appendChild(element('p', '', {}, info.notice));
    if (info.review_first) {
      notice.appendChild(element('p', '', {}, REVIEW_NOTE));
    }
    empty.appendChild(notice);
  }
  empty.appendChild(
    element(
      'p',
      '',
      {},
      'The chat sees the active cell and its neighbours, the selected text, the last error ' +
        "and the kernel's variables. Code in answers can be inserted below the active cell" +
        (info?.review_first ? '.' : ' and run.')
    )
  );
  empty.appendChild(
    element('p', 'jp-Chapyter-chatTry', { id: TRY_ID }, 'Try:')
  );
  const list = element('ul', 'jp-Chapyter-chatSuggestions', {
    'aria-labelledby': TRY_ID
  });
  for (const text of SUGGESTIONS) {
    const item = element('li', '');
    const suggestion = element(
      'button',
      'jp-Chapyter-chatSuggestion',
      { type: 'button', title: 'Put this in the input' },
      text
    );
    suggestion.addEventListener('click', () => suggest(text));
    item.appendChild(suggestion);
    list.appendChild(item);
  }
  empty.appendChild(list);
}
