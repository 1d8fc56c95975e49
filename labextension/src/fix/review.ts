/**
 * A proposed change shown IN the target cell, above its editor: the line diff, the
 * explanation, and Accept / Accept and run / Reject. Accept replaces the code in one undo
 * step (same cell id) and records the provenance; Reject leaves the cell as it was. The
 * diff is drawn from `proposedSource` (proposal.ts), the very string Accept puts in the
 * cell, with invisible and direction-changing characters shown.
 */

import { Cell } from '@jupyterlab/cells';
import { checkIcon, closeIcon, runIcon } from '@jupyterlab/ui-components';
import { PanelLayout, Widget } from '@lumino/widgets';

import { button, element } from '../common/dom';
import { invisibleWarning, showCode } from '../untrusted/render';
import { IFixProposal } from './client';
import { proposalDiff } from './proposal';

// Accept applies through the same module the diff is drawn from.
export { applyProposal } from './proposal';

/** What the user chose. */
export type ReviewChoice = 'accept' | 'run' | 'reject';

/** The cells (by model id) with an open proposal or a request under way. */
const busyCells = new Set<string>();

/** Whether a proposal is open (or being asked) for the cell; a second one is refused. */
export function isBusy(cellId: string): boolean {
  return busyCells.has(cellId);
}

/** Mark the cell busy; false when it already was. */
export function claim(cellId: string): boolean {
  if (busyCells.has(cellId)) {
    return false;
  }
  busyCells.add(cellId);
  return true;
}

/** The cell is free again. */
export function release(cellId: string): void {
  busyCells.delete(cellId);
}

/** The review widget inserted above a cell's editor. */
export class DiffReview extends Widget {
  /** Show `proposal` against `before` (the cell's code when it was asked). */
  constructor(
    readonly proposal: IFixProposal,
    readonly before: string,
    private _choose: (choice: ReviewChoice) => void
  ) {
    super();
    this.addClass('jp-Chapyter-review');
    this.node.setAttribute('role', 'region');
    this.node.setAttribute(
      'aria-label',
      proposal.kind === 'fix' ? 'Proposed fix' : 'Proposed edit'
    );
    const title = element(
      'div',
      'jp-Chapyter-reviewTitle',
      {},
      proposal.kind === 'fix' ? 'Proposed fix' : 'Proposed edit'
    );
    const diff = element('pre', 'jp-Chapyter-reviewDiff', {
      'aria-label': 'Changes'
    });
    let invisible = false;
    for (const line of proposalDiff(before, proposal)) {
      const sign =
        line.kind === 'added' ? '+ ' : line.kind === 'removed' ? '- ' : '  ';
      const row = element('div', `jp-Chapyter-diffLine jp-mod-${line.kind}`);
      invisible = showCode(row, sign + line.text) || invisible;
      diff.appendChild(row);
    }
    const explanation = element(
      'div',
      'jp-Chapyter-reviewExplanation',
      {},
      proposal.explanation
    );
    this._status = element('div', 'jp-Chapyter-reviewStatus', {
      role: 'status'
    });
    const bar = element('div', 'jp-Chapyter-reviewActions', {
      role: 'group',
      'aria-label': 'Review the change'
    });
    const accept = button(
      'jp-Chapyter-reviewAccept',
      'Accept',
      'Accept',
      checkIcon,
      'Replace the cell code with the proposal'
    );
    const run = button(
      'jp-Chapyter-reviewRun',
      'Accept and run',
      'Accept and run',
      runIcon,
      'Replace the cell code with the proposal and run it'
    );
    const reject = button(
      'jp-Chapyter-reviewReject',
      'Reject',
      'Reject',
      closeIcon,
      'Leave the cell as it is'
    );
    accept.addEventListener('click', () => this._choose('accept'));
    run.addEventListener('click', () => this._choose('run'));
    reject.addEventListener('click', () => this._choose('reject'));
    this.node.addEventListener('keydown', event => {
      if (event.key === 'Escape') {
        event.stopPropagation();
        this._choose('reject');
      }
    });
    // Code held back (review first, the run policy) is accepted, read, then run by the user.
    const hold = proposal.hold ?? null;
    bar.append(accept, ...(hold ? [] : [run]), reject);
    this.node.append(title);
    if (invisible) {
      this.node.appendChild(invisibleWarning());
    }
    this.node.append(diff, explanation, this._status, bar);
    if (hold) {
      bar.appendChild(
        element(
          'span',
          'jp-Chapyter-reviewHold',
          {},
          `Not offered to run: ${hold}.`
        )
      );
    }
    this._first = accept;
  }

  /** Show one line under the diff (a refusal or a failure). */
  setStatus(text: string): void {
    this._status.textContent = text;
  }

  /** Put the keyboard on Accept. */
  focus(): void {
    this._first.focus();
  }

  private _status: HTMLElement;
  private _first: HTMLButtonElement;
}

/** Insert `review` above the editor of `cell`. */
export function insertAboveEditor(cell: Cell, review: Widget): void {
  const layout = cell.layout as PanelLayout;
  const input = cell.inputArea?.parent ?? null;
  const at = input ? layout.widgets.indexOf(input) : -1;
  layout.insertWidget(at >= 0 ? at : 0, review);
}
