/**
 * The card an outside agent's acting call shows in the AI Chat of its notebook: who asks
 * ("claude-code wants to run this cell"), why the policy asks, exactly the code that would
 * run (or the line diff of an edit), Approve / Reject (Escape rejects), then Stop while it
 * runs and one line when it ends. Shown through {@link IChatExtension.showCard}.
 */

import { checkIcon, closeIcon, stopIcon } from '@jupyterlab/ui-components';

import { button, element } from '../common/dom';
import { lineDiff } from '../common/lineDiff';
import { invisibleWarning, showCode } from '../untrusted/render';
import type { IApprovalCard, IApprovalRequest } from './calls';

/** The card: its node, and the {@link IApprovalCard} the calls drive. */
export class OutsideCard implements IApprovalCard {
  /** Draw `request`; `stop` ends the running call; `done` removes the card. */
  constructor(
    request: IApprovalRequest,
    private _stop: () => void,
    private _done: () => void = () => undefined
  ) {
    const node = this.node;
    node.setAttribute('aria-label', request.title);
    node.dataset.callId = request.call.callId;
    node.append(
      element('div', 'jp-Chapyter-outsideTitle', {}, request.title),
      element(
        'div',
        'jp-Chapyter-outsideNotebook',
        {},
        `In ${request.call.notebook}`
      )
    );
    const why = [...request.reasons, ...request.concerns];
    if (why.length) {
      const list = element('ul', 'jp-Chapyter-outsideReasons', {
        'aria-label': 'Why it asks'
      });
      for (const line of why) {
        list.appendChild(element('li', '', {}, line));
      }
      node.appendChild(list);
    }
    let invisible = false;
    if (request.code !== null) {
      const code = element('pre', 'jp-Chapyter-outsideCode', {
        'aria-label': 'The code that would run'
      });
      invisible = showCode(code, request.code);
      node.appendChild(code);
    }
    if (request.diff) {
      const diff = element('pre', 'jp-Chapyter-reviewDiff', {
        'aria-label': 'Changes'
      });
      for (const line of lineDiff(request.diff.before, request.diff.after)) {
        const sign =
          line.kind === 'added' ? '+ ' : line.kind === 'removed' ? '- ' : '  ';
        const row = element('div', `jp-Chapyter-diffLine jp-mod-${line.kind}`);
        invisible = showCode(row, sign + line.text) || invisible;
        diff.appendChild(row);
      }
      node.appendChild(diff);
    }
    if (invisible) {
      node.appendChild(invisibleWarning());
    }
    this._approve = button(
      'jp-Chapyter-outsideApprove',
      'Approve',
      'Approve',
      checkIcon,
      `Let ${request.title.split(' wants')[0]} do it`
    );
    this._reject = button(
      'jp-Chapyter-outsideReject',
      'Reject',
      'Reject',
      closeIcon,
      'Refuse: nothing runs or changes'
    );
    this._stopButton = button(
      'jp-Chapyter-outsideStop',
      'Stop',
      'Stop',
      stopIcon,
      'Stop the running cell and end the call'
    );
    this._stopButton.hidden = true;
    this._dismiss = button(
      'jp-Chapyter-outsideDismiss',
      'Dismiss',
      'Dismiss',
      null
    );
    this._dismiss.hidden = true;
    const bar = element('div', 'jp-Chapyter-outsideActions', {
      role: 'group',
      'aria-label': 'Answer'
    });
    bar.append(this._approve, this._reject, this._stopButton, this._dismiss);
    node.append(this._status, bar);
    this.answer = new Promise<boolean>(resolve => (this._resolve = resolve));
    this._approve.addEventListener('click', () => this._answer(true));
    this._reject.addEventListener('click', () => this._answer(false));
    this._stopButton.addEventListener('click', () => {
      this._stopButton.disabled = true;
      this._status.textContent = 'Stopping…';
      this._stop();
    });
    this._dismiss.addEventListener('click', () => this._done());
    node.addEventListener('keydown', event => {
      if (event.key === 'Escape' && !this._answered) {
        event.stopPropagation();
        this._answer(false);
      }
    });
  }

  /** The card's node. */
  readonly node = element('section', 'jp-Chapyter-outsideCard', {
    role: 'group'
  });

  /** true: approved; false: rejected. */
  readonly answer: Promise<boolean>;

  /** Put the keyboard on Approve. */
  focus(): void {
    this._approve.focus();
  }

  running(): void {
    this._settle();
    this._status.textContent = 'Running…';
    this._stopButton.hidden = false;
  }

  finish(line: string): void {
    this._settle();
    this._stopButton.hidden = true;
    this._status.textContent = line;
    this._dismiss.hidden = false;
    this.node.classList.add('jp-mod-finished');
  }

  cancel(reason: string): void {
    this._answer(false);
    this.finish(`Cancelled${reason ? `: ${reason}` : ''}.`);
    this.node.classList.add('jp-mod-cancelled');
    this._done();
  }

  private _answer(approved: boolean): void {
    if (this._answered) {
      return;
    }
    this._answered = true;
    this._settle();
    this._status.textContent = approved ? 'Approved.' : 'Rejected.';
    this._resolve(approved);
  }

  private _settle(): void {
    this._approve.hidden = true;
    this._reject.hidden = true;
  }

  private _answered = false;
  private _resolve: (approved: boolean) => void = () => undefined;
  private _status = element('div', 'jp-Chapyter-outsideStatus', {
    role: 'status'
  });
  private _approve: HTMLButtonElement;
  private _reject: HTMLButtonElement;
  private _stopButton: HTMLButtonElement;
  private _dismiss: HTMLButtonElement;
}
