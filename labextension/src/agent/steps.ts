/**
 * The steps of an agent turn under its answer in the chat: each compact (what it did, one
 * line of outcome, a "5th cell" link that scrolls to the cell and selects it, the code folded
 * away), a step waiting for approval with its code and Run / Edit / Skip, and "Undo this
 * turn". The step waiting for approval is drawn in {@link StepsView.pending}, which the
 * message puts after the answer's text: text streaming in above never pushes its buttons
 * out of view. Nodes are kept per step and updated in place, so an edit in progress survives
 * the redraws of a streaming answer. The code shown for approval is the string Run runs (as
 * the cell will hold it, invisible characters shown), or the editor's text after Edit.
 */

import { ordinal } from '../cellNames';
import { button, element } from '../common/dom';
import { cellCode } from '../contract';
import { invisibleWarning, showCode } from '../untrusted/render';
import type { IStepRecord } from '../common/events';
import type { IChatMessage } from '../chat/tokens';
import { AgentController } from './controller';
import { IAgentStep } from './tokens';
import { TrialDetails, trialSection } from './trialView';

/** What the steps view needs from the panel. */
export interface IStepsHost {
  /** Agent mode. */
  readonly agent: AgentController;
  /** Path of the notebook the chat is about. */
  notebookPath(): string | null;
}

/** A step as drawn: a live one, or one the history recorded. */
type ShownStep = IAgentStep | (IStepRecord & { recorded: true });

function title(step: ShownStep, index: number): string {
  const n = `Step ${index + 1}`;
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
class StepView {
  constructor(private _host: StepsView) {
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
    line.append(this._title, this._link);
    this._outcome = element('div', 'jp-Chapyter-agentStepOutcome');
    this._code = element('details', 'jp-Chapyter-agentStepCode');
    const summary = element('summary', '', {}, 'Code');
    this._pre = element('pre', '');
    this._code.append(summary, this._pre);
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

  readonly node: HTMLElement;

  update(step: ShownStep, index: number): void {
    const live = !('recorded' in step);
    const state = live ? step.state : 'ran';
    this.node.className = `jp-Chapyter-agentStep jp-mod-${state}`;
    this.node.setAttribute('aria-label', `Step ${index + 1}`);
    this._title.textContent = title(step, index);
    this._outcome.textContent = step.outcome;
    this._outcome.title = step.outcome;
    this._outcome.hidden = !step.outcome;
    this._cellId = live ? step.cellId : step.cell_id || null;
    const position = this._cellId ? this._host.position(this._cellId) : 0;
    this._link.hidden = !this._cellId;
    this._link.disabled = position === 0;
    // A place, not an execution count: "3rd cell" next to JupyterLab's "[15]".
    this._link.textContent = position
      ? `${ordinal(position)} cell`
      : 'cell removed';
    this._link.title = position
      ? `Scroll to the ${ordinal(position)} cell of the notebook (counted from the top) and select it`
      : 'The cell is no longer in the notebook';
    const approval = live && state === 'approval';
    this._code.hidden = !step.code || approval;
    const code = cellCode(step.code);
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
          : (step.trial ?? null)
    );
    const result = live ? step.result : null;
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
  private _shownResult: string | null = null;
  private _result: HTMLDetailsElement;
  private _resultPre: HTMLElement;
  private _title: HTMLElement;
  private _link: HTMLButtonElement;
  private _outcome: HTMLElement;
  private _code: HTMLDetailsElement;
  private _pre: HTMLElement;
  private _approval: HTMLElement;
  private _cellId: string | null = null;
  private _shownCode: string | null = null;
  private _approvalFor: string | null = null;
}

/** The steps of one answer, and its "Undo this turn". */
export class StepsView {
  /** Show the steps of `message`. */
  constructor(
    readonly message: IChatMessage,
    private _host: IStepsHost
  ) {
    this.node = element('div', 'jp-Chapyter-agentSteps', {
      'aria-label': 'Steps'
    });
    this._list = element('div', 'jp-Chapyter-agentStepList');
    this._footer = element('div', 'jp-Chapyter-agentTurnFooter');
    this._undo = button(
      'jp-Chapyter-agentUndo',
      'Undo this turn',
      'Undo this turn',
      null,
      'Remove the cells this turn added (one notebook undo step)'
    );
    this._undo.addEventListener('click', () => this._onUndo());
    this._undoNote = element('span', 'jp-Chapyter-agentUndoNote', {
      role: 'status'
    });
    this._footer.append(this._undo, this._undoNote);
    this.node.append(this._list, this._footer);
    this.pending = element('div', 'jp-Chapyter-agentPending');
    _host.agent.cellsChanged.connect(this._onCellsChanged, this);
    this.update();
  }

  /** Stop following the notebook's cells. */
  dispose(): void {
    cancelAnimationFrame(this._frame);
    this._host.agent.cellsChanged.disconnect(this._onCellsChanged, this);
    for (const view of this._views) {
      view.dispose();
    }
    this.pending.remove();
  }

  /** The view's node. */
  readonly node: HTMLElement;

  /**
   * Where the step waiting for approval is drawn: after the answer's text (the message
   * view places it), so its Run / Edit / Skip stay in view while text streams.
   */
  readonly pending: HTMLElement;

  /** Draw the steps as they are now. */
  update(): void {
    const agent = this._host.agent;
    const turn = agent.turn(this.message);
    const steps: ShownStep[] = turn
      ? turn.steps
      : (this.message.steps ?? []).map(s => ({ ...s, recorded: true }));
    this.node.hidden = !steps.length && !this.message.halt;
    while (this._views.length < steps.length) {
      const view = new StepView(this);
      this._views.push(view);
      this._list.appendChild(view.node);
    }
    steps.forEach((step, index) => this._views[index].update(step, index));
    const cells = turn
      ? turn.cellIds.length
      : steps.filter(s => 'recorded' in s && s.cell_id).length;
    const undone = agent.isUndone(this.message);
    const ended = this.message.status !== 'streaming';
    this._undo.hidden = !cells || undone || !ended;
    // The answer's text already says why a capped turn stopped: say it once.
    const halt = this.message.halt ?? '';
    const haltShown = !!halt && !this.message.content.includes(halt);
    this._undoNote.hidden = !undone && !haltShown;
    this._undoNote.textContent = undone
      ? this._undoText
      : haltShown
        ? halt
        : '';
  }

  /** Whether a step waits for the user's Run / Edit / Skip. */
  get waiting(): boolean {
    return !!this._host.agent
      .turn(this.message)
      ?.steps.some(s => s.state === 'approval');
  }

  /** Scroll to a cell of the chat's notebook and select it. */
  reveal(cellId: string): void {
    const path = this._host.notebookPath();
    if (path) {
      this._host.agent.notebook(path)?.reveal(cellId);
    }
  }

  /** A cell's 1-based position in the chat's notebook, 0 when gone. */
  position(cellId: string): number {
    const path = this._host.notebookPath();
    return path ? (this._host.agent.notebook(path)?.position(cellId) ?? 0) : 0;
  }

  /** Answer a step that waits for approval. */
  decide(
    stepId: string,
    decision: { run: true; code: string } | { run: false }
  ) {
    this._host.agent.decide(this.message, stepId, decision);
  }

  private _onCellsChanged(): void {
    // The "Cell N" links, once per frame however many cells changed (a Run All changes many).
    cancelAnimationFrame(this._frame);
    this._frame = requestAnimationFrame(() => this.update());
  }

  private _onUndo(): void {
    const path = this._host.notebookPath();
    if (!path) {
      return;
    }
    const removed = this._host.agent.undo(this.message, path);
    this._undoText =
      removed === 1
        ? 'Removed 1 cell (Ctrl+Z in the notebook brings it back).'
        : `Removed ${removed} cells (Ctrl+Z in the notebook brings them back).`;
    this.update();
  }

  private _list: HTMLElement;
  private _footer: HTMLElement;
  private _undo: HTMLButtonElement;
  private _undoNote: HTMLElement;
  private _undoText = '';
  private _frame = 0;
  private _views: StepView[] = [];
}
