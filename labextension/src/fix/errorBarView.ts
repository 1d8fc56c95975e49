/**
 * The bar under a failing cell (Fix / Explain, or "Ask again"), without the notebook: what
 * it offers for which error, and the busy Fix where the click was. `errorBar.ts` places it.
 */

import type { LabIcon } from '@jupyterlab/ui-components';
import { Widget } from '@lumino/widgets';

import { button, element } from '../common/dom';
import { OWN_ERROR_NAMES } from '../common/snapshot';
import type { IErrorInfo } from './logic';

/** The Fix button's text while its proposal is being asked for. */
export const FIXING = 'Fixing…';

/**
 * What a bar offers: Fix and Explain for an error of the user's code; "Ask again" for
 * chapyter-ext's own one-line failure of a `%%ai` cell (the model call failed: there is no
 * code to fix, and asking again is what helps).
 */
export type ErrorBarKind = 'code' | 'own';

/** The kind of bar an error gets ({@link ErrorBarKind}). */
export function errorBarKind(error: IErrorInfo): ErrorBarKind {
  return OWN_ERROR_NAMES.includes(error.ename) ? 'own' : 'code';
}

/** The bar under one failing cell. */
export class ErrorBar extends Widget {
  /** A bar of Fix / Explain (or Ask again) with a line for status and failures. */
  constructor(
    readonly kind: ErrorBarKind,
    actions: { fix(): void; explain(): void; askAgain(): void },
    icons: LabIcon[]
  ) {
    super();
    this.addClass('jp-Chapyter-errorActions');
    this.node.setAttribute('role', 'group');
    this.node.setAttribute('aria-label', 'AI actions for this error');
    this._status = element('span', 'jp-Chapyter-errorStatus', {
      role: 'status'
    });
    if (kind === 'own') {
      const again = button(
        'jp-Chapyter-errorAskAgain',
        'Ask again',
        'Ask again',
        icons[2] ?? null,
        'Run this %%ai cell again: ask the model once more'
      );
      again.addEventListener('click', () => actions.askAgain());
      this.node.append(again, this._status);
      return;
    }
    const fix = button(
      'jp-Chapyter-errorFix',
      'Fix',
      'Fix',
      icons[0] ?? null,
      'Ask the model for a corrected version of this cell'
    );
    const explain = button(
      'jp-Chapyter-errorExplain',
      'Explain',
      'Explain',
      icons[1] ?? null,
      'Explain this error in the AI Chat'
    );
    fix.addEventListener('click', () => {
      // A second click while it is asked would only be refused.
      if (fix.getAttribute('aria-busy') !== 'true') {
        actions.fix();
      }
    });
    explain.addEventListener('click', () => actions.explain());
    this._fix = fix;
    this.node.append(fix, explain, this._status);
  }

  /** Show one line next to the buttons (empty: nothing). */
  setStatus(text: string, failed = false): void {
    this._status.textContent = text;
    this._status.classList.toggle('jp-mod-error', failed);
  }

  /**
   * Show on the Fix button itself, where the click was, that a proposal is being asked for
   * ("Fixing…", `aria-busy`); false puts it back.
   */
  setBusy(busy: boolean): void {
    const fix = this._fix;
    if (!fix) {
      return;
    }
    fix.setAttribute('aria-busy', String(busy));
    fix.setAttribute('aria-label', busy ? FIXING : 'Fix');
    fix.classList.toggle('jp-mod-busy', busy);
    const text = fix.querySelector('.jp-Chapyter-chatButtonText');
    if (text) {
      text.textContent = busy ? FIXING : 'Fix';
    }
  }

  private _status: HTMLElement;
  private _fix: HTMLButtonElement | null = null;
}
