/**
 * The buttons under each code block of a rendered answer: Insert below, Insert and run, Copy
 * (and Apply to cell N). They are given the block's source from the Markdown lexer, never
 * read from the page, so they act on exactly the code shown. Every block drawn as code,
 * fenced or indented, goes through the server's guard rails: a block they refused (its
 * verdict), a block of Markdown list lines (`- 12.` parses, yet it is prose), and an indented
 * block without a verdict get Copy only, with one line saying why. They only report what was
 * asked; the message view decides what that does.
 */

import { addBelowIcon, copyIcon, runIcon } from '@jupyterlab/ui-components';

import { button, element } from '../common/dom';
import { markdownList } from '../untrusted/markdown';

/** Why the bundled model's code is not offered to run at once, as every feature says it. */
export const REVIEW_HOLD = 'waits for your review (setting: Local review)';
/** Why lines of a Markdown list are not offered, in the server's words (`LIST_PROBLEM`). */
export const LIST_PROBLEM = 'it is a Markdown list, not code';
/** Why a block drawn as code that the server gave no verdict is not offered. */
export const UNCHECKED_PROBLEM = 'it was not checked';

/** A code block's verdict. */
export interface ICodeVerdict {
  /** Whether it may be offered to insert and run. */
  runnable: boolean;
  /** Why not, in a few words ("" when it may). */
  problem: string;
}

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
  /**
   * The server's verdict on `code` (null: none, e.g. an older answer); `fenced` false for an
   * indented block.
   */
  verdict?(code: string, fenced: boolean): ICodeVerdict | null;
}

/**
 * What a code block may be offered as: refused for lines of a Markdown list whatever the
 * server said (an older answer or a chat from a file has no verdicts), else the server's
 * verdict; an indented block without one is refused (it may be prose the lexer drew as code).
 */
export function blockVerdict(
  code: string,
  fenced: boolean,
  handlers: ICodeBlockHandlers
): ICodeVerdict | null {
  if (markdownList(code)) {
    return { runnable: false, problem: LIST_PROBLEM };
  }
  const verdict = handlers.verdict?.(code, fenced) ?? null;
  if (!verdict && !fenced) {
    return { runnable: false, problem: UNCHECKED_PROBLEM };
  }
  return verdict;
}

/**
 * The bar of buttons under a code block whose source is `code` (`fenced` false: indented);
 * null for blank code.
 */
export function codeButtons(
  code: string,
  handlers: ICodeBlockHandlers,
  fenced = true
): HTMLElement | null {
  if (!code.trim()) {
    return null;
  }
  const bar = element('div', 'jp-Chapyter-codeActions', {
    role: 'group',
    'aria-label': 'Code actions'
  });
  const verdict = blockVerdict(code, fenced, handlers);
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
