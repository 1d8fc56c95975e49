/**
 * What a step's confined trial saw, drawn for the approval card (why it asks, what it would
 * show and change) and for a step that ran (a folded "Trial" line under it). Text nodes only:
 * the lines come from the kernel and the model's code, so nothing in them becomes markup.
 */

import { element } from '../common/dom';

/** What is drawn of a trial. */
export interface ITrialLines {
  /** Why it asks ("tried to write out.csv"); empty when the trial cleared the step. */
  concerns: string[];
  /** What it would show and change ("prints: 42"). */
  preview: string[];
}

function list(className: string, label: string, lines: string[]): HTMLElement {
  const node = element('ul', className, { 'aria-label': label });
  for (const line of lines) {
    node.appendChild(element('li', '', {}, line));
  }
  return node;
}

/**
 * The approval card's trial section: what the trial tried (the reason it asks) and what it
 * would show, so approving is an informed click. Null when there is nothing to say.
 */
export function trialSection(trial: ITrialLines): HTMLElement | null {
  if (!trial.concerns.length && !trial.preview.length) {
    return null;
  }
  const box = element('div', 'jp-Chapyter-agentTrial', {
    role: 'group',
    'aria-label': 'What its trial did'
  });
  box.appendChild(
    element(
      'div',
      'jp-Chapyter-agentTrialTitle',
      {},
      'Tried first in a confined copy of the kernel (nothing left it):'
    )
  );
  if (trial.concerns.length) {
    box.appendChild(
      list(
        'jp-Chapyter-agentTrialConcerns',
        'What the trial tried',
        trial.concerns
      )
    );
  }
  if (trial.preview.length) {
    box.appendChild(
      element('div', 'jp-Chapyter-agentTrialLead', {}, 'It would:')
    );
    box.appendChild(
      list(
        'jp-Chapyter-agentTrialPreview',
        'What it would show and change',
        trial.preview
      )
    );
  }
  return box;
}

/** A step's folded "Trial" line: what its trial saw, once it ran or was skipped. */
export class TrialDetails {
  /** The folded element (hidden while there is no trial). */
  readonly node: HTMLDetailsElement;

  constructor() {
    this.node = element(
      'details',
      'jp-Chapyter-agentStepTrial'
    ) as HTMLDetailsElement;
    this._summary = element('summary', '', {}, 'Trial');
    this._body = element('div', '');
    this.node.append(this._summary, this._body);
    this.node.hidden = true;
  }

  /**
   * Show `trial` (null: none was made). `origin` says whose word it is when it is not this
   * server's ("from the file"): then whether it ran unasked is not said.
   */
  update(trial: ITrialLines | null, origin: string | null = null): void {
    this.node.hidden = !trial;
    if (!trial) {
      return;
    }
    const key = JSON.stringify([trial, origin]);
    if (key === this._shown) {
      return;
    }
    this._shown = key;
    this._summary.textContent = origin
      ? `Trial (${origin})`
      : trial.concerns.length
        ? `Trial: ${trial.concerns[0]}${trial.concerns.length > 1 ? ' …' : ''}`
        : 'Trial: tried nothing, ran unasked';
    this._body.replaceChildren(
      ...(trial.concerns.length
        ? [
            list(
              'jp-Chapyter-agentTrialConcerns',
              'What the trial tried',
              trial.concerns
            )
          ]
        : []),
      ...(trial.preview.length
        ? [
            list(
              'jp-Chapyter-agentTrialPreview',
              'What it showed',
              trial.preview
            )
          ]
        : [])
    );
  }

  private _summary: HTMLElement;
  private _body: HTMLElement;
  private _shown = '';
}
