/**
 * One agent turn in the browser, without DOM: it reads the turn's typed events, and for each
 * `step` waits for the user's approval when the policy asks, inserts the code as a real cell
 * in the turn's notebook, runs it through the notebook's kernel, and posts what the cell left
 * to the server (`agent/result`), which then asks the model again. The notebook and the
 * server are injected ({@link INotebookDriver}, {@link IAgentClient}), so it is tested in node.
 */

import type { ChatEvent, IStepEvent } from '../common/events';
import { isBadRequest, localOutcome, message, oneLine } from './outcome';
import type { TurnSnapshots } from './snapshots';
import {
  Decision,
  IAgentClient,
  IAgentStep,
  INotebookDriver,
  IStepResultBody,
  TrialOutcome
} from './tokens';

export { localOutcome, oneLine } from './outcome';

/** Options of {@link AgentTurn}. */
export interface IAgentTurnOptions {
  /** The server. */
  client: IAgentClient;
  /** The notebook the turn began in. */
  notebook: INotebookDriver;
  /** The model id and endpoint host of a model name, for the cells' provenance. */
  describeModel?: (name: string) => { model: string; endpoint?: string };
  /** A step changed (state, cell, outcome): redraw. */
  onChange?: () => void;
  /** The kernel's snapshots before each step that runs code (none: Undo removes cells). */
  snapshots?: TurnSnapshots;
}

/** One agent turn: its steps, run as the events ask. */
export class AgentTurn {
  /** Run a turn over `options.notebook`. */
  constructor(private _options: IAgentTurnOptions) {}

  /** The steps so far, in order. */
  readonly steps: IAgentStep[] = [];

  /** The turn's id (the reply's message id), once `start` named it. */
  messageId = '';
  /** The chat's id, once `start` named it. */
  chatId = '';
  /** The model name answering. */
  modelName = '';
  /** The policy the server applies. */
  policy = '';

  /** Whether Stop ended the turn. */
  get stopped(): boolean {
    return this._stopped;
  }

  /** Whether "Undo this turn" removed its cells. */
  get undone(): boolean {
    return this._undone;
  }

  /** Ids of the cells the turn inserted, in order. */
  get cellIds(): readonly string[] {
    return this._cellIds;
  }

  /**
   * The turn's events for the chat to apply, in order; each `step` is performed after the
   * chat saw it and before the next event is read (the server waits for its result).
   */
  async *run(events: AsyncIterable<ChatEvent>): AsyncGenerator<ChatEvent> {
    const iterator = events[Symbol.asyncIterator]();
    let next = iterator.next();
    for (;;) {
      const item = await next;
      if (item.done) {
        this._settleServerSteps();
        return;
      }
      const event = item.value;
      if (event.type === 'done' || event.type === 'error') {
        this._settleServerSteps();
      }
      // Read ahead: while a step waits for approval the server may end the turn (its time
      // cap), and the approval must not wait for an answer nobody reads.
      next = iterator.next();
      next.catch(() => undefined);
      switch (event.type) {
        case 'start':
          this.messageId = event.messageId;
          this.chatId = event.chatId;
          this.modelName = event.model;
          this.policy = event.policy ?? '';
          break;
        case 'step': {
          const step = this._add(event);
          yield event;
          await this._perform(step, next);
          for (const notice of this._notices.splice(0)) {
            yield notice;
          }
          continue;
        }
        case 'step_done': {
          const step = this.steps.find(s => s.id === event.stepId);
          if (step && event.outcome) {
            step.outcome = oneLine(event.outcome);
            if (step.runs === 'server') {
              // The server carried it out: its result is all the chat learns.
              step.result = event.result;
              step.state =
                event.status === 'skipped'
                  ? 'skipped'
                  : event.status === 'error'
                    ? 'failed'
                    : 'ran';
            }
            this._changed();
          }
          break;
        }
      }
      yield event;
    }
  }

  /** The turn ended: a server step still shown as calling will get no result now. */
  private _settleServerSteps(): void {
    for (const step of this.steps) {
      if (step.op === 'call' && step.state === 'running') {
        this._set(step, 'stopped', 'Not finished: the turn ended.');
      }
    }
  }

  /** Answer a step waiting for approval: run (the code, maybe edited) or skip. */
  decide(stepId: string, decision: Decision): boolean {
    const pending = this._pending.get(stepId);
    if (!pending) {
      return false;
    }
    this._pending.delete(stepId);
    pending(decision);
    return true;
  }

  /** Stop: no further step runs; a running cell is interrupted. */
  stop(): void {
    if (this._stopped) {
      return;
    }
    this._stopped = true;
    for (const [id, pending] of this._pending) {
      this._pending.delete(id);
      pending(null);
    }
    if (this._running) {
      void this._options.notebook.interrupt().catch(error => {
        console.warn('chapyter-ext: could not interrupt the kernel', error);
      });
    }
    this._changed();
  }

  /** Say `line` in the chat once the step under way is done (a `notice` event). */
  notify(line: string): void {
    this._notices.push({ type: 'notice', message: line });
  }

  /** Remove the cells the turn inserted, in one undo step; how many were still there. */
  undo(): number {
    const removed = this._options.notebook.remove([...this._cellIds]);
    this._undone = true;
    this._changed();
    return removed;
  }

  private _add(event: IStepEvent): IAgentStep {
    // The step is the event as the server described it, less the wire's discriminant.
    // eslint-disable-next-line @typescript-eslint/no-unused-vars
    const { type: _type, stepId: id, ...described } = event;
    const step: IAgentStep = {
      ...described,
      id,
      result: null,
      state: 'running',
      cellId: null,
      outcome: '',
      concerns: [],
      preview: [],
      tried: false
    };
    this.steps.push(step);
    return step;
  }

  private async _perform(
    step: IAgentStep,
    next: Promise<unknown>
  ): Promise<void> {
    if (this._stopped) {
      this._set(step, 'stopped', 'Not run: the turn was stopped.');
      return;
    }
    if (step.op === 'call') {
      await this._serverCall(step, next);
      return;
    }
    if (step.op === 'read_cell' || step.op === 'evaluate') {
      await this._read(step);
      return;
    }
    if (step.op !== 'run_cell') {
      const reason = `This version of the chat cannot carry out "${step.label}" steps; reload the page.`;
      this._set(step, 'failed', reason);
      await this._post(step, { status: 'failed_to_run', text: reason });
      return;
    }
    const notebook = this._options.notebook;
    let guard: string | null = null;
    if (step.trial && !notebook.cannotRun()) {
      const tried = await this._try(step);
      if (tried === null) {
        return;
      }
      guard = tried;
    }
    let decision = await this._approve(step, next);
    if (decision === undefined && guard && !(await this._arm(guard))) {
      // Unasked only under the guard: without it, the step asks after all.
      step.needsApproval = true;
      step.concerns = [...step.concerns, 'the kernel could not arm the guard'];
      decision = await this._approve(step, next);
    }
    if (decision === null) {
      return;
    }
    if (decision) {
      if (!decision.run) {
        this._set(step, 'skipped', 'Skipped.');
        await this._post(step, { status: 'skipped' });
        return;
      }
      step.code = decision.code;
    }
    const why = notebook.cannotRun();
    if (why) {
      this._set(step, 'failed', why);
      await this._post(step, { status: 'failed_to_run', text: why });
      return;
    }
    // The state from before the step, for Undo (the snapshot is cheap: a waiting fork).
    await this._options.snapshots?.before(
      this.messageId,
      this.steps.indexOf(step)
    );
    const described = this._options.describeModel?.(this.modelName) ?? {
      model: this.modelName
    };
    let cellId: string;
    try {
      cellId = notebook.insert(
        step.code,
        {
          ...described,
          chatId: this.chatId,
          messageId: this.messageId,
          stepId: step.id
        },
        this._cellIds[this._cellIds.length - 1] ?? null
      );
    } catch (error) {
      const reason = oneLine(`Could not insert the cell: ${message(error)}`);
      this._set(step, 'failed', reason);
      await this._post(step, { status: 'failed_to_run', text: reason });
      return;
    }
    step.cellId = cellId;
    this._cellIds.push(cellId);
    this._set(step, 'running', 'Running…');
    this._running = step;
    let outcome;
    try {
      outcome = await notebook.run(cellId);
    } catch (error) {
      outcome = { ran: false, reason: oneLine(message(error)) };
    } finally {
      this._running = null;
    }
    if (outcome.ran && outcome.result) {
      this._set(
        step,
        'ran',
        this._stopped ? 'Interrupted.' : localOutcome(outcome.result)
      );
      if (!this._stopped) {
        await this._post(step, { status: 'ran', result: outcome.result });
      }
    } else {
      const reason = outcome.reason || 'The cell did not run.';
      this._set(step, 'failed', reason);
      if (!this._stopped) {
        await this._post(step, { status: 'failed_to_run', text: reason });
      }
    }
  }

  /**
   * Try the step in a confined copy of the kernel and let the server decide on the report:
   * the step then asks or not, with what the trial saw. The guard to arm when it runs
   * unasked ('' for none), or null when the turn stopped or ended meanwhile.
   */
  private async _try(step: IAgentStep): Promise<string | null> {
    this._set(step, 'trying', 'Trying it in a confined copy of the kernel…');
    let outcome: TrialOutcome;
    try {
      outcome = await this._options.notebook.trial(step.trial);
    } catch (error) {
      outcome = {
        failure: { ename: 'Error', evalue: oneLine(message(error)) }
      };
    }
    if (this._stopped) {
      this._set(step, 'stopped', 'Not run: the turn was stopped.');
      return null;
    }
    try {
      const decided = await this._options.client.trial({
        message_id: this.messageId,
        step_id: step.id,
        ...outcome
      });
      step.needsApproval = decided.needs_approval;
      step.reasons = decided.reasons;
      step.concerns = decided.concerns;
      step.preview = decided.preview;
      step.tried = true;
      this._set(step, 'running', '');
      return decided.needs_approval ? '' : (decided.guard ?? '');
    } catch (error) {
      if ((error as { kind?: unknown } | null)?.kind === 'not_found') {
        this._set(step, 'stopped', 'Not run: the turn ended.');
        return null;
      }
      // No decision: the step asks, as it would have without a trial.
      step.needsApproval = true;
      step.concerns = [
        oneLine(`The trial could not be judged: ${message(error)}`)
      ];
      this._set(step, 'running', '');
      return '';
    }
  }

  /** Arm the kernel's guard for the step about to run unasked; whether it is armed. */
  private async _arm(guard: string): Promise<boolean> {
    try {
      return await this._options.notebook.arm(guard);
    } catch {
      return false;
    }
  }

  /**
   * Wait for Run / Edit / Skip when the step asks: the decision, undefined when it did not
   * ask, or null when the turn stopped or ended first (the step is marked so).
   */
  private async _approve(
    step: IAgentStep,
    next: Promise<unknown>
  ): Promise<Decision | null | undefined> {
    if (!step.needsApproval) {
      return undefined;
    }
    this._set(step, 'approval', '');
    const decision = await Promise.race([
      new Promise<Decision | null>(resolve =>
        this._pending.set(step.id, resolve)
      ),
      next.then(
        () => 'ended' as const,
        () => 'ended' as const
      )
    ]);
    this._pending.delete(step.id);
    if (decision === 'ended') {
      this._set(step, 'stopped', 'Not run: the turn ended.');
      return null;
    }
    if (!decision) {
      this._set(step, 'stopped', 'Not run: the turn was stopped.');
      return null;
    }
    return decision;
  }

  /** A step the server carries out: approve it here if it asks, then wait for its result. */
  private async _serverCall(
    step: IAgentStep,
    next: Promise<unknown>
  ): Promise<void> {
    const decision = await this._approve(step, next);
    if (decision === null) {
      return;
    }
    if (decision && !decision.run) {
      this._set(step, 'skipped', 'Skipped.');
      await this._post(step, { status: 'skipped' });
      return;
    }
    // The result arrives with the step's `step_done`.
    this._set(step, 'running', 'Calling…');
    if (decision) {
      await this._post(step, { status: 'approved' });
    }
  }

  private async _read(step: IAgentStep): Promise<void> {
    const notebook = this._options.notebook;
    this._set(step, 'running', 'Reading…');
    let text: string;
    try {
      text =
        step.op === 'read_cell'
          ? await notebook.readCell(step.cell)
          : await notebook.evaluate(step.expression);
    } catch (error) {
      const reason = oneLine(message(error));
      this._set(step, 'failed', reason);
      await this._post(step, { status: 'failed_to_run', text: reason });
      return;
    }
    this._set(step, 'ran', 'Read.');
    await this._post(step, { status: 'ran', text });
  }

  private async _post(
    step: IAgentStep,
    body: Omit<IStepResultBody, 'message_id' | 'step_id'>
  ): Promise<void> {
    if (this._stopped) {
      return;
    }
    try {
      await this._options.client.result({
        message_id: this.messageId,
        step_id: step.id,
        ...body
      });
    } catch (error) {
      if (body.status === 'ran' && body.result && isBadRequest(error)) {
        // The server refused what the cell left (too large, an odd output): the turn still
        // waits for an answer, so say why it has none rather than leave it hanging.
        const text = oneLine(`The result could not be sent: ${message(error)}`);
        await this._post(step, { status: 'failed_to_run', text });
        return;
      }
      // The turn may have ended meanwhile (Stop, a cap): the stream says how it ended.
      console.warn('chapyter-ext: could not send a step result', error);
      step.outcome = oneLine(`${step.outcome} (not sent: ${message(error)})`);
      this._changed();
    }
  }

  private _set(step: IAgentStep, state: IAgentStep['state'], outcome: string) {
    step.state = state;
    step.outcome = outcome;
    this._changed();
  }

  private _changed(): void {
    this._options.onChange?.();
  }

  private _cellIds: string[] = [];
  private _notices: ChatEvent[] = [];
  private _pending = new Map<string, (decision: Decision | null) => void>();
  private _running: IAgentStep | null = null;
  private _stopped = false;
  private _undone = false;
}
