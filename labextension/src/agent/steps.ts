/**
 * The steps of an agent turn under its answer in the chat (each drawn by {@link StepView})
 * and "Undo this turn". The step waiting for approval is drawn in {@link StepsView.pending},
 * which the message puts after the answer's text: text streaming in above never pushes its
 * buttons out of view. Nodes are kept per step and updated in place, so an edit in progress
 * survives the redraws of a streaming answer. An answer that came with the notebook's file
 * has no Undo: the cells its steps name are the file's word, never removed or looked up.
 */

import { button, element } from '../common/dom';
import type { IChatMessage } from '../chat/tokens';
import { AgentController } from './controller';
import { ShownStep, StepView } from './stepView';
import { Decision } from './tokens';

/** What the steps view needs from the panel. */
export interface IStepsHost {
  /** Agent mode. */
  readonly agent: AgentController;
  /** Path of the notebook the chat is about. */
  notebookPath(): string | null;
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
    const imported = !!this.message.imported;
    steps.forEach((step, index) =>
      this._views[index].update(step, index, imported)
    );
    const cells = turn
      ? turn.cellIds.length
      : imported
        ? 0
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
  decide(stepId: string, decision: Decision): void {
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
