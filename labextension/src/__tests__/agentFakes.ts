/** The fakes the agent's tests share: a notebook with a kernel, a server, a turn's events. */

import { cellName } from '../cellNames';
import { ChatEvent } from '../common/events';
import { AgentTurn } from '../agent/runner';
import {
  IAgentClient,
  IAgentRequest,
  INotebookDriver,
  IRunOutcome,
  IStepOrigin,
  IStepResultBody,
  ITrialBody,
  ITrialDecision,
  TrialOutcome
} from '../agent/tokens';
import { ChatRequestError } from '../chat/tokens';

/** A notebook of cell ids; runs answer from `outcomes` (by code). */
export class FakeNotebook implements INotebookDriver {
  cells: string[] = ['a', 'b', 'c'];
  active = 0;
  inserted: { id: string; code: string; origin: IStepOrigin }[] = [];
  ran: string[] = [];
  interrupts = 0;
  removals: string[][] = [];
  noKernel: string | null = null;
  /** Resolves the run under way (to test Stop while a cell runs). */
  release: (() => void) | null = null;
  holdRuns = false;

  cannotRun(): string | null {
    return this.noKernel;
  }

  insert(code: string, origin: IStepOrigin, afterId: string | null): string {
    const id = `new${this.inserted.length + 1}`;
    const after = afterId ? this.cells.indexOf(afterId) : -1;
    const index = after >= 0 ? after + 1 : this.active + 1;
    this.cells.splice(index, 0, id);
    this.inserted.push({ id, code, origin });
    return id;
  }

  async run(cellId: string): Promise<IRunOutcome> {
    this.ran.push(cellId);
    if (this.holdRuns) {
      await new Promise<void>(resolve => (this.release = resolve));
    }
    const code = this.inserted.find(c => c.id === cellId)!.code;
    const outputs = code.includes('boom')
      ? [{ output_type: 'error', ename: 'NameError', evalue: 'boom' }]
      : [{ output_type: 'stream', name: 'stdout', text: '42\n' }];
    return {
      ran: true,
      result: {
        cell_id: cellId,
        execution_count: this.ran.length,
        outputs,
        figures: [],
        images: []
      }
    };
  }

  async readCell(cell: string): Promise<string> {
    return `cell ${cell}`;
  }

  /** Trial expressions evaluated, guard expressions armed, in order. */
  trials: string[] = [];
  armed: string[] = [];
  /** What the kernel gives for a trial (a thrown error: the request itself failed). */
  trialOutcome: TrialOutcome | Error = { report: { status: 'ran' } };
  armWorks = true;

  async trial(expression: string): Promise<TrialOutcome> {
    this.trials.push(expression);
    if (this.trialOutcome instanceof Error) {
      throw this.trialOutcome;
    }
    return this.trialOutcome;
  }

  async arm(expression: string): Promise<boolean> {
    this.armed.push(expression);
    return this.armWorks;
  }

  evaluated: string[] = [];

  async evaluate(expression: string): Promise<string> {
    this.evaluated.push(expression);
    return 'x (int): 42';
  }

  /** Expressions read from the kernel (Undo's snapshots), in order. */
  reads: string[] = [];
  /** What the kernel answers a read; by default a kernel that keeps every snapshot. */
  kernel: (expression: string) => unknown = expression => {
    const fn = /\.(\w+)\(get_ipython\(\)/.exec(expression)?.[1];
    switch (fn) {
      case 'take':
        return { ok: true, why: null };
      case 'preview':
        return {
          available: true,
          why: null,
          restore: ['x'],
          remove: ['y'],
          cannot: [],
          line: 'Undo brings back x and removes y.'
        };
      case 'restore':
        return {
          ok: true,
          restored: ['x'],
          removed: ['y'],
          cannot: [],
          line: 'Brought back x, removed y.'
        };
      default:
        return { ok: true };
    }
  };

  async readJSON(expression: string): Promise<unknown> {
    this.reads.push(expression);
    return this.kernel(expression);
  }

  async interrupt(): Promise<void> {
    this.interrupts++;
    this.release?.();
  }

  remove(ids: string[]): number {
    this.removals.push(ids);
    const present = ids.filter(id => this.cells.includes(id));
    this.cells = this.cells.filter(id => !ids.includes(id));
    return present.length;
  }

  has(id: string): boolean {
    return this.cells.includes(id);
  }

  name(id: string): string {
    const index = this.cells.indexOf(id);
    return index < 0 ? '' : cellName(index + 1);
  }

  reveal(): void {
    // nothing to show in node
  }
}

export class FakeClient implements IAgentClient {
  results: IStepResultBody[] = [];
  requests: IAgentRequest[] = [];
  events: ChatEvent[] = [];
  refuse: ChatRequestError | null = null;

  /** The turn the events go to (for the gate in {@link serverEvents}). */
  turn: () => AgentTurn | null = () => null;

  async agent(request: IAgentRequest): Promise<AsyncIterable<ChatEvent>> {
    this.requests.push(request);
    return serverEvents(this.events, this, this.turn);
  }

  trials: ITrialBody[] = [];
  decision: ITrialDecision = {
    needs_approval: false,
    reasons: [],
    concerns: [],
    preview: ['prints: 42'],
    guard: 'arm(code)',
    notice: null
  };

  async trial(body: ITrialBody): Promise<ITrialDecision> {
    this.trials.push(body);
    return this.decision;
  }

  async result(body: IStepResultBody): Promise<void> {
    this.results.push(body);
    if (this.refuse && body.status === 'ran') {
      throw this.refuse;
    }
  }
}

export const start: ChatEvent = {
  type: 'start',
  chatId: 'chat1',
  messageId: 'turn1',
  model: 'fake',
  policy: 'never'
};

export function step(
  id: string,
  code: string,
  needsApproval = false,
  trial = ''
): ChatEvent {
  return {
    type: 'step',
    stepId: id,
    kind: 'run_code',
    op: 'run_cell',
    runs: 'kernel',
    title: 'ran code',
    label: 'run code',
    server: '',
    expression: '',
    arguments: null,
    code,
    purpose: '',
    cell: '',
    needsApproval,
    reasons: [],
    trial
  };
}

export const done: ChatEvent = {
  type: 'done',
  messageId: 'turn1',
  text: 'The value is 42.',
  status: 'complete'
};

/**
 * The events as the server sends them: after a `step`, nothing until the step's result was
 * posted (or the turn was stopped), unless `eager`.
 */
export async function* serverEvents(
  events: ChatEvent[],
  client: FakeClient,
  turn: () => AgentTurn | null,
  eager = false
): AsyncGenerator<ChatEvent> {
  for (const event of events) {
    yield event;
    // A server step that does not ask posts nothing: the server goes on by itself.
    const posts =
      event.type === 'step' && (event.op !== 'call' || event.needsApproval);
    if (posts && !eager) {
      while (
        !client.results.some(r => r.step_id === event.stepId) &&
        !turn()?.stopped
      ) {
        await new Promise(resolve => setTimeout(resolve, 1));
      }
    }
  }
}

export async function collect(
  turn: AgentTurn,
  events: ChatEvent[],
  eager = false
): Promise<ChatEvent[]> {
  const seen: ChatEvent[] = [];
  const client = (turn as any)._options.client as FakeClient;
  const source = serverEvents(events, client, () => turn, eager);
  for await (const event of turn.run(source)) {
    seen.push(event);
  }
  return seen;
}

/** Wait until `check` holds (the turn runs in the background). */
export async function until(check: () => boolean): Promise<void> {
  for (let i = 0; i < 100 && !check(); i++) {
    await new Promise(resolve => setTimeout(resolve, 1));
  }
  expect(check()).toBe(true);
}
