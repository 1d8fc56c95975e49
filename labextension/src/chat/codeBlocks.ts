/**
 * The buttons under each code block of a rendered answer: Insert below, Insert and run, Copy
 * (and Apply to cell N). They are given the block's source from the Markdown lexer, never
 * read from the page, so they act on exactly the code shown. A block the server's guard
 * rails refused (its verdict) gets Copy only, with one line saying why. They only report
 * what was asked; the message view decides what that does.
 */

import { addBelowIcon, copyIcon, runIcon } from '@jupyterlab/ui-components';

import { button, element } from '../common/dom';

/** Why the bundled model's code is not offered to run at once, as every feature says it. */
export const REVIEW_HOLD = 'waits for your review (setting: Local review)';

/** What the buttons under a code block do. */
export interface ICodeBlockHandlers {
  /** Insert `code` below the active cell, and run it if `run`. */
  insert(code: string, run: boolean): void;
  /** Copy `code` to the clipboard. */
  copy(code: string): void;
  /** An "Apply to cell N" offer when `code` modifies an existing cell, else null. */
  applyOffer?(code: string): { label: string; apply(): void } | null;
  /**
   * Review first: no "Insert and run", and this one line under the buttons says why (the
   * model's code is inserted to be read before it runs).
   */
  reviewNote?: string | null;
  /** The server's verdict on `code` (null: none, e.g. an older answer). */
  verdict?(code: string): { runnable: boolean; problem: string } | null;
}

/** The bar of buttons under a code block whose source is `code`; null for blank code. */
export function codeButtons(
  code: string,
  handlers: ICodeBlockHandlers
): HTMLElement | null {
  if (!code.trim()) {
    return null;
  }
  const bar = element('div', 'jp-Chapyter-codeActions', {
    role: 'group',
    'aria-label': 'Code actions'
  });
  const verdict = handlers.verdict?.(code) ?? null;
  const insert = button(
    'jp-Chapyter-codeAction',
    'Insert below',
    'Insert below',
    addBelowIcon,
    'Insert this code in a new cell below the active cell'
  );
  const run = button(
    'jp-Chapyter-codeAction',
    'Insert and run',
    'Insert and run',
    runIcon,
    'Insert this code below the active cell and run it'
  );
  const copy = button(
    'jp-Chapyter-codeAction',
    'Copy',
    'Copy',
    copyIcon,
    'Copy this code to the clipboard'
  );
  insert.addEventListener('click', () => handlers.insert(code, false));
  run.addEventListener('click', () => handlers.insert(code, true));
  const review = handlers.reviewNote ?? null;
  if (review) {
    insert.title =
      'Insert this code in a new cell below the active cell, to review and run';
  }
  copy.addEventListener('click', () => {
    handlers.copy(code);
    const text = copy.querySelector('.jp-Chapyter-chatButtonText');
    if (text) {
      text.textContent = 'Copied';
      setTimeout(() => (text.textContent = 'Copy'), 1500);
    }
  });
  if (verdict && !verdict.runnable) {
    // Not offered as runnable: it can be copied and read, and the line says why.
    bar.append(
      copy,
      element(
        'span',
        'jp-Chapyter-codeRefusedNote',
        {},
        `Not offered to run: ${verdict.problem || 'it did not pass the checks'}.`
      )
    );
    return bar;
  }
  bar.append(insert, ...(review ? [] : [run]), copy);
  if (review) {
    bar.appendChild(element('span', 'jp-Chapyter-codeReviewNote', {}, review));
  }
  const offer = handlers.applyOffer?.(code);
  if (offer) {
    const apply = button(
      'jp-Chapyter-codeAction jp-Chapyter-codeApply',
      offer.label,
      offer.label,
      null,
      'Show this code as a diff in that cell, to accept or reject'
    );
    apply.addEventListener('click', () => offer.apply());
    bar.prepend(apply);
  }
  return bar;
}
