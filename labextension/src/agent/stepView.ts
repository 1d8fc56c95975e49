/**
 * One step of an agent turn on screen: compact (what it did, one line of outcome, a "5th
 * cell" link that scrolls to the cell and selects it, the code or arguments and the result
 * folded away), or waiting for approval with its code (or an MCP call's arguments) and Run /
 * Edit / Skip, drawn in its host's `pending` box. A step recorded in a chat that came with
 * the notebook's file is drawn as the file says it, marked "from the file": headed by its
 * kind, its title and outcome quoted as the file's words, no link to a cell (its id is never
 * looked up), no trial or approval taken as this server's word.
 */

import { button, element } from '../common/dom';
import { cellCode } from '../contract';
import { invisibleWarning, showCode } from '../untrusted/render';
import type { IStepRecord } from '../common/events';
import { Decision, IAgentStep } from './tokens';
import { TrialDetails, trialSection } from './trialView';

/** The mark of a step recorded in a chat that came with the notebook's file. */
export const STEP_FROM_FILE = 'from the file';

/** A recorded call's arguments (JSON text) indented for reading; as recorded otherwise. */
export function prettyArguments(text: string): string {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}

/** What a step's view needs from the view of its turn. */
export interface IStepViewHost {
  /** Where the step waiting for approval is drawn (after the answer's text). */
  readonly pending: HTMLElement;
  /** Scroll to a cell of the chat's notebook and select it. */
  reveal(cellId: string): void;
  /** A cell of the chat's notebook as JupyterLab shows it ("cell [4]"), '' when gone. */
  name(cellId: string): string;
  /** Answer a step that waits for approval. */
  decide(stepId: string, decision: Decision): void;
  /** What undoing to before step `step` (0-based) will and will not restore, one line. */
  previewTo(step: number): Promise<string>;
  /** Remove the cells of steps `step` on and put the variables back as before it. */
  undoTo(step: number): void;
}

/** A step as drawn: a live one, or one the history recorded. */
export type ShownStep = IAgentStep | (IStepRecord & { recorded: true });

/**
 * What a step from the notebook's file says of itself (its title and outcome), quoted as the
 * file's words: never drawn as a status of ours ("Approved by you" is what the file says).
 */
export function fileSays(step: IStepRecord): string {
  const said = [step.title, step.outcome]
    .map(text => text.trim())
    .filter((text, i, all) => text && all.indexOf(text) === i);
  return said.length ? `The file says: “${said.join(' — ')}”` : '';
}

function title(step: ShownStep, index: number, fromFile: boolean): string {
  const n = `Step ${index + 1}`;
  if ('recorded' in step && fromFile) {
    // The kind of step, from its fields; the file's own title is only quoted (fileSays).
    const kind =
      step.code || !step.tool || step.tool === 'run_code' ? 'code' : step.tool;
    return `${n} · ${kind}`;
  }
  if ('recorded' in step) {
    const said = step.title || (step.code ? 'ran code' : '');
    return said ? `${n} · ${said}` : n;
  }
  if (step.op === 'call') {
    // A server's tool: what it is, then where it stands.
    const state: { [key: string]: string } = {
      approval: 'wants to call',
      running: 'calling',
      skipped: 'skipped',
      failed: 'failed',
      stopped: 'stopped'
    };
    const where = state[step.state];
    return `${n} · ${step.title || step.label}${where ? ` (${where})` : ''}`;
  }
  if (step.op !== 'run_cell') {
    return `${n} · ${step.title || step.label}`;
  }
  switch (step.state) {
    case 'trying':
      return `${n} · trying it first`;
    case 'approval':
      return `${n} · wants to run code`;
    case 'running':
      return `${n} · running`;
    case 'skipped':
      return `${n} · skipped`;
    case 'failed':
      return `${n} · could not run`;
    case 'stopped':
      return `${n} · stopped`;
    default:
      return `${n} · ran code`;
  }
}

/** One step on screen. */
export class StepView {
  /** A step's view, drawn by {@link StepView.update}. */
  constructor(private _host: IStepViewHost) {
    this.node = element('div', 'jp-Chapyter-agentStep', { role: 'group' });
    const line = element('div', 'jp-Chapyter-agentStepLine');
    this._title = element('span', 'jp-Chapyter-agentStepTitle');
    this._link = element('button', 'jp-Chapyter-agentCellLink', {
      type: 'button'
    });
    this._link.addEventListener('click', () => {
      if (this._cellId) {
        this._host.reveal(this._cellId);
      }
    });
    this._origin = element(
      'span',
      'jp-Chapyter-agentStepOrigin',
      {
        title:
          'Recorded in the notebook file, not run here: its cell, approval and trial are ' +
          'what the file says, and nothing in it is acted on'
      },
      STEP_FROM_FILE
    );
    this._undo = element(
      'button',
      'jp-Chapyter-agentStepUndo',
      { type: 'button' },
      'Undo from here'
    );
    this._undo.addEventListener('click', () => this._host.undoTo(this._index));
    // What it will restore, asked when the pointer or the keyboard gets there.
    for (const event of ['pointerenter', 'focus']) {
      this._undo.addEventListener(event, () => {
        const index = this._index;
        void this._host.previewTo(index).then(said => {
          if (index === this._index && said) {
            this._undo.title = `${this._undoTitle()}. ${said}`;
          }
        });
      });
    }
    line.append(this._title, this._link, this._origin, this._undo);
    this._outcome = element('div', 'jp-Chapyter-agentStepOutcome');
    this._code = element('details', 'jp-Chapyter-agentStepCode');
    this._codeSummary = element('summary', '', {}, 'Code');
    this._pre = element('pre', '');
    this._code.append(this._codeSummary, this._pre);
    this._result = element('details', 'jp-Chapyter-agentStepResult');
    this._resultPre = element('pre', '', { 'aria-label': 'Result' });
    this._result.append(element('summary', '', {}, 'Result'), this._resultPre);
    this._approval = element('div', 'jp-Chapyter-agentApproval', {
      role: 'group'
    });
    this.node.append(
      line,
      this._outcome,
      this._code,
      this._trial.node,
      this._result
    );
  }

  /** The step's node. */
  readonly node: HTMLElement;

  /**
   * Draw `step`, the `index`th of its turn; `imported`: its message came with the notebook's
   * file, so a recorded step is drawn as the file's word, never acted on; `undoable`: it
   * offers "Undo to before step N".
   */
  update(
    step: ShownStep,
    index: number,
    imported = false,
    { undoable = false }: { undoable?: boolean } = {}
  ): void {
    if (this._index !== index) {
      this._index = index;
      this._undo.setAttribute(
        'aria-label',
        `Undo from here, to before step ${index + 1}`
      );
      this._undo.title = this._undoTitle();
    }
    this._undo.hidden = !undoable;
    const live = !('recorded' in step);
    const fromFile = !live && imported;
    const state = live ? step.state : fromFile ? 'imported' : 'ran';
    this.node.className = `jp-Chapyter-agentStep jp-mod-${state}`;
    this.node.setAttribute(
      'aria-label',
      fromFile ? `Step ${index + 1}, ${STEP_FROM_FILE}` : `Step ${index + 1}`
    );
    this._title.textContent = title(step, index, fromFile);
    this._origin.hidden = !fromFile;
    const outcome =
      'recorded' in step && fromFile ? fileSays(step) : step.outcome;
    this._outcome.textContent = outcome;
    this._outcome.title = outcome;
    this._outcome.hidden = !outcome;
    // A cell the file names is never looked up, linked to or acted on.
    this._cellId = live ? step.cellId : fromFile ? null : step.cell_id || null;
    const name = this._cellId ? this._host.name(this._cellId) : '';
    this._link.hidden = !this._cellId;
    this._link.disabled = !name;
    // As JupyterLab shows it: "cell [4]" beside `[4]:`, else "the 5th cell" (cellNames.ts).
    this._link.textContent = name || 'cell removed';
    this._link.title = name
      ? `Scroll to ${name} of the notebook and select it`
      : 'The cell is no longer in the notebook';
    const approval = live && state === 'approval';
    // The code it ran, or the arguments a recorded call was made with.
    const code = step.code
      ? cellCode(step.code)
      : live
        ? ''
        : prettyArguments(step.arguments ?? '');
    this._codeSummary.textContent = step.code ? 'Code' : 'Arguments';
    this._code.hidden = !code || approval;
    if (this._shownCode !== code) {
      this._shownCode = code;
      showCode(this._pre, code);
    }
    this._trial.update(
      approval || (live && step.state === 'trying')
        ? null
        : live
          ? step.tried
            ? step
            : null
          : (step.trial ?? null),
      fromFile ? STEP_FROM_FILE : null
    );
    const result = live ? step.result : step.result || null;
    this._result.hidden = !result;
    if (result !== null && this._shownResult !== result) {
      this._shownResult = result;
      showCode(this._resultPre, result);
    }
    if (approval && live) {
      if (step.op === 'call') {
        this._drawCallApproval(step, index);
      } else {
        this._drawApproval(step, index);
      }
      // After the answer's text: streaming text never pushes the buttons out of view.
      if (this._approval.parentElement !== this._host.pending) {
        this._host.pending.appendChild(this._approval);
      }
    } else {
      if (this._approvalFor) {
        this._approvalFor = null;
        this._approval.textContent = '';
      }
      this._approval.remove();
    }
    this._approval.hidden = !approval;
  }

  private _undoTitle(): string {
    return (
      `Undo to before step ${this._index + 1}: remove the cells of this step and the ` +
      'next ones, and put the variables back as they were before it'
    );
  }

  /** Take the step's approval box off the page (the view is going away). */
  dispose(): void {
    this._approval.remove();
  }

  /**
   * Start the approval box of `step` (the `index`th): what it wants, its lead line (the
   * model's purpose, or the server and tool of a call) and the policy's reasons. False when
   * it is already drawn for this step.
   */
  private _startApproval(
    step: IAgentStep,
    index: number,
    wants: string,
    lead: string
  ): boolean {
    if (this._approvalFor === step.id) {
      return false;
    }
    this._approvalFor = step.id;
    const box = this._approval;
    box.textContent = '';
    box.setAttribute('aria-label', `Step ${index + 1} waits for approval`);
    box.appendChild(
      element(
        'div',
        'jp-Chapyter-agentApprovalTitle',
        {},
        `Step ${index + 1} ${wants}:`
      )
    );
    if (lead) {
      box.appendChild(element('div', 'jp-Chapyter-agentPurpose', {}, lead));
    }
    if (step.reasons.length) {
      const list = element('ul', 'jp-Chapyter-agentReasons', {
        'aria-label': 'Why approval is asked'
      });
      for (const reason of step.reasons) {
        list.appendChild(element('li', '', {}, reason));
      }
      box.appendChild(list);
    }
    const trial = step.tried ? trialSection(step) : null;
    if (trial) {
      box.appendChild(trial);
    }
    return true;
  }

  /** The one string the step shows and runs (invisible characters marked), in the box. */
  private _proposed(label: string, text: string): HTMLElement {
    const pre = element('pre', 'jp-Chapyter-agentProposed', {
      'aria-label': label
    });
    if (showCode(pre, text)) {
      this._approval.appendChild(invisibleWarning());
    }
    return pre;
  }

  /** The Run and Skip buttons (with `extra` between them) deciding `step`. */
  private _decisionButtons(
    step: IAgentStep,
    titles: { run: string; skip: string },
    code: () => string,
    extra: HTMLElement[] = []
  ): { group: HTMLElement; run: HTMLButtonElement } {
    const group = element('div', 'jp-Chapyter-agentButtons', {
      role: 'group',
      'aria-label': 'Approve the step'
    });
    const run = button(
      'jp-Chapyter-agentRun jp-mod-accept',
      'Run',
      'Run',
      null,
      titles.run
    );
    const skip = button(
      'jp-Chapyter-agentSkip',
      'Skip',
      'Skip',
      null,
      titles.skip
    );
    run.addEventListener('click', () =>
      this._host.decide(step.id, { run: true, code: code() })
    );
    skip.addEventListener('click', () =>
      this._host.decide(step.id, { run: false })
    );
    group.append(run, ...extra, skip);
    return { group, run };
  }

  private _drawApproval(step: IAgentStep, index: number): void {
    if (
      !this._startApproval(step, index, 'wants to run this code', step.purpose)
    ) {
      return;
    }
    // The one string shown and run: as the cell will hold it.
    const code = cellCode(step.code);
    const pre = this._proposed('Proposed code', code);
    const editor = element('textarea', 'jp-Chapyter-agentEditor', {
      'aria-label': 'Code to run',
      rows: String(Math.min(12, code.split('\n').length + 1)),
      spellcheck: 'false'
    });
    editor.value = code;
    editor.hidden = true;
    const edit = button(
      'jp-Chapyter-agentEdit',
      'Edit',
      'Edit',
      null,
      'Change the code before it runs'
    );
    const { group, run } = this._decisionButtons(
      step,
      {
        run: 'Insert this code as a cell below and run it',
        skip: 'Do not run it; the model is told it was skipped'
      },
      () => (editor.hidden ? code : editor.value),
      [edit]
    );
    edit.addEventListener('click', () => {
      editor.hidden = false;
      pre.hidden = true;
      edit.disabled = true;
      editor.focus();
    });
    editor.addEventListener('keydown', event => {
      // Ctrl/Cmd+Enter runs the edited code, as in a cell.
      if (event.key === 'Enter' && (event.ctrlKey || event.metaKey)) {
        event.preventDefault();
        event.stopPropagation();
        run.click();
      }
    });
    this._approval.append(pre, editor, group);
  }

  /** A server tool's call waiting for Run / Skip: the server, the tool, the arguments. */
  private _drawCallApproval(step: IAgentStep, index: number): void {
    const where = step.server
      ? `MCP server “${step.server}” · tool “${step.label.split(' · ').pop()}”`
      : `Tool “${step.label}”`;
    if (!this._startApproval(step, index, 'wants to call a tool', where)) {
      return;
    }
    // Exactly what the server will send: the arguments as JSON.
    const pre = this._proposed(
      'Arguments',
      JSON.stringify(step.arguments ?? {}, null, 2)
    );
    const { group } = this._decisionButtons(
      step,
      {
        run: 'Let the server call this tool with these arguments',
        skip: 'Do not call it; the model is told it was skipped'
      },
      () => ''
    );
    this._approval.append(pre, group);
  }

  private _trial = new TrialDetails();
  private _undo: HTMLButtonElement;
  private _index = -1;
  private _shownResult: string | null = null;
  private _result: HTMLDetailsElement;
  private _resultPre: HTMLElement;
  private _title: HTMLElement;
  private _origin: HTMLElement;
  private _codeSummary: HTMLElement;
  private _link: HTMLButtonElement;
  private _outcome: HTMLElement;
  private _code: HTMLDetailsElement;
  private _pre: HTMLElement;
  private _approval: HTMLElement;
  private _cellId: string | null = null;
  private _shownCode: string | null = null;
  private _approvalFor: string | null = null;
}
