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

/** The cell a step put in the notebook, if any. */
function cellOf(step: ShownStep): string | null {
  return 'recorded' in step ? step.cell_id || null : step.cellId;
}

const UNDO_TITLE =
  'Remove the cells this turn added (one notebook undo step) and put the variables back';

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
      UNDO_TITLE
    );
    this._undo.addEventListener('click', () => this._onUndo(0));
    // What Undo will restore may change as cells run: asked again when the user gets near.
    for (const event of ['pointerenter', 'focus']) {
      this._undo.addEventListener(event, () => this._preview());
    }
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
    const ended = this.message.status !== 'streaming';
    const undoneFrom = agent.undoneFrom(this.message);
    // "Undo to before step N" on each later step that put a cell, once the turn ended.
    const firstCell = steps.findIndex(cellOf);
    steps.forEach((step, index) =>
      this._views[index].update(step, index, imported, {
        undoable:
          ended &&
          !imported &&
          index > firstCell &&
          !!cellOf(step) &&
          (undoneFrom === null || index < undoneFrom)
      })
    );
    const cells = turn
      ? turn.cellIds.length
      : imported
        ? 0
        : steps.filter(s => 'recorded' in s && s.cell_id).length;
    const undone = agent.isUndone(this.message);
    this._undo.hidden = !cells || undone || !ended;
    if (!this._undo.hidden && turn && !this._previewed) {
      // The live turn ended: what Undo will do, before it is clicked (a turn from the
      // history asks when the pointer or the keyboard reaches the button).
      this._previewed = true;
      this._preview();
    }
    // The answer's text already says why a capped turn stopped: say it once.
    const halt = this.message.halt ?? '';
    const haltShown = !!halt && !this.message.content.includes(halt);
    const previewShown = !this._undo.hidden && !!this._previewLine;
    // After an Undo (of the turn, or to before a step): what it did, until the next one.
    const said = undoneFrom !== null ? this._undoText : '';
    const note =
      said ||
      [haltShown ? halt : '', previewShown ? this._previewLine : '']
        .filter(Boolean)
        .join(' ');
    this._undoNote.hidden = !note;
    this._undoNote.textContent = note;
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

  /** A cell of the chat's notebook as JupyterLab shows it ("cell [4]"), '' when gone. */
  name(cellId: string): string {
    const path = this._host.notebookPath();
    return path ? (this._host.agent.notebook(path)?.name(cellId) ?? '') : '';
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

  /** What undoing to before step `step` will and will not restore, one line ('' unknown). */
  async previewTo(step: number): Promise<string> {
    const path = this._host.notebookPath();
    const preview = path
      ? this._host.agent.preview(this.message, path, step)
      : null;
    return preview ? (await preview).line : '';
  }

  /** Remove the cells of steps `step` on and put the variables back as before it. */
  undoTo(step: number): void {
    this._onUndo(step);
  }

  private _preview(): void {
    if (this._previewing) {
      return;
    }
    this._previewing = true;
    void this.previewTo(0)
      .then(line => {
        this._previewLine = line;
        this._undo.title = line ? `${UNDO_TITLE}. ${line}` : UNDO_TITLE;
        this.update();
      })
      .finally(() => (this._previewing = false));
  }

  private _onUndo(step: number): void {
    const path = this._host.notebookPath();
    if (!path) {
      return;
    }
    const agent = this._host.agent;
    const removed = agent.undo(this.message, path, step);
    const cells =
      removed === 1
        ? 'Removed 1 cell (Ctrl+Z in the notebook brings it back).'
        : `Removed ${removed} cells (Ctrl+Z in the notebook brings them back).`;
    const restoring = agent.restore(this.message, path, step);
    this._said(cells, restoring ? 'Restoring the variables…' : '');
    void restoring
      ?.then(answer => answer.line)
      .catch(error => `The variables were not restored: ${String(error)}`)
      .then(line => this._said(cells, line));
  }

  /** The line after an Undo: the cells removed, then what the kernel said. */
  private _said(cells: string, kernel: string): void {
    this._undoText = kernel ? `${cells} ${kernel}` : cells;
    this._previewLine = '';
    this.update();
  }

  private _list: HTMLElement;
  private _footer: HTMLElement;
  private _undo: HTMLButtonElement;
  private _undoNote: HTMLElement;
  private _undoText = '';
  private _previewLine = '';
  private _previewed = false;
  private _previewing = false;
  private _frame = 0;
  private _views: StepView[] = [];
}
