/**
 * Shapes of agent mode (the chat runs code in the notebook): the server calls, one step's
 * state, and what the runner needs from the notebook. Pure declarations, so the runner and
 * its tests load no JupyterLab runtime code.
 */

import type { ChatEvent, IStepEvent } from '../common/events';
import type { TrialOutcome } from '../common/kernelTrial';
import type { IAgentCodeOrigin } from '../contract/metadata';
import type { IChatRequest } from '../chat/tokens';

/** When an agent turn asks before running code. */
export type AgentPolicy = 'ask' | 'risky' | 'never';

/** The policies, in the order the panel offers them, with their labels. */
export const AGENT_POLICIES: { value: AgentPolicy; label: string }[] = [
  { value: 'ask', label: 'Ask before every run' },
  { value: 'risky', label: 'Ask for risky code' },
  { value: 'never', label: 'Never ask' }
];

/** Whether `value` names a policy. */
export function isAgentPolicy(value: unknown): value is AgentPolicy {
  return AGENT_POLICIES.some(p => p.value === value);
}

/** Whether `policy` asks less than `floor` (the list runs from strictest to loosest). */
export function looserThan(policy: AgentPolicy, floor: AgentPolicy): boolean {
  const rank = (p: AgentPolicy) => AGENT_POLICIES.findIndex(q => q.value === p);
  return rank(policy) > rank(floor);
}

/** The body of `POST chapyter-ext/agent`: a chat request and the approval policy. */
export interface IAgentRequest extends IChatRequest {
  /** The approval policy of this turn. */
  policy?: AgentPolicy;
}

/** What a code step left in its cell: the `result` of `POST agent/result`. */
export interface IRunResult {
  /** The cell the code ran in. */
  cell_id: string;
  /** Its execution count (null when the kernel gave none). */
  execution_count: number | null;
  /** Its nbformat outputs. */
  outputs: { [key: string]: unknown }[];
  /** Digests of the matplotlib figures the run drew (`chapyter_ext.context.figures`). */
  figures: { [key: string]: unknown }[];
  /** The PNG images of its outputs, base64. */
  images: string[];
}

/** The body of `POST chapyter-ext/agent/result`. */
export interface IStepResultBody {
  /** The turn (the reply's message id). */
  message_id: string;
  /** The step. */
  step_id: string;
  /**
   * Kernel steps: "ran" (even with an error in the cell), "skipped" (the user said no),
   * "failed_to_run". Server steps that asked: "approved" or "skipped".
   */
  status: 'ran' | 'skipped' | 'failed_to_run' | 'approved';
  /** What a code step left in its cell. */
  result?: IRunResult;
  /** What a read gave (read_cell, list_variables), or why a step failed to run. */
  text?: string;
}

export type { TrialOutcome } from '../common/kernelTrial';

/** The body of `POST chapyter-ext/agent/trial`. */
export type ITrialBody = { message_id: string; step_id: string } & TrialOutcome;

/** The server's decision once it read a step's trial. */
export interface ITrialDecision {
  /** Whether the step waits for Run / Edit / Skip. */
  needs_approval: boolean;
  /** What the static analysis found (shown when it asks). */
  reasons: string[];
  /** What the trial tried or showed that makes it ask ("tried to write out.csv"). */
  concerns: string[];
  /** What the trial would show and change ("prints: 42"). */
  preview: string[];
  /** The expression that arms the kernel's guard before the step runs unasked (or null). */
  guard: string | null;
  /** Why this kernel makes no trials, said once per chat (or null). */
  notice: string | null;
}

/** The agent's server calls (`agent/client.ts`; tests pass a fake). */
export interface IAgentClient {
  /** `POST agent`, streamed: the turn's typed events. */
  agent(
    request: IAgentRequest,
    signal: AbortSignal
  ): Promise<AsyncIterable<ChatEvent>>;
  /** `POST agent/result`. */
  result(body: IStepResultBody): Promise<void>;
  /** `POST agent/trial`: a step's trial report; the server's decision. */
  trial(body: ITrialBody): Promise<ITrialDecision>;
}

/** Where one step of a turn stands. */
export type StepState =
  | 'trying' // its trial runs in a confined copy of the kernel
  | 'approval' // waiting for Run / Edit / Skip
  | 'running' // its cell is inserted and running (or a read is under way)
  | 'ran' // the result went to the server
  | 'skipped' // the user said Skip
  | 'failed' // it could not run (no kernel, the cell was deleted, ...)
  | 'stopped'; // Stop ended the turn before it ran

/** One step of a turn, as the chat shows it. */
export interface IAgentStep extends Omit<IStepEvent, 'type' | 'stepId'> {
  /** The server's id. */
  id: string;
  /** What the model was told of a server step's result, once it came. */
  result: string | null;
  /** Where it stands. */
  state: StepState;
  /** The id of the cell it ran in, once inserted. */
  cellId: string | null;
  /** One line: the server's summary once it has one, else ours. */
  outcome: string;
  /** What its trial tried or showed that makes it ask (empty: none, or no trial). */
  concerns: string[];
  /** What its trial would show and change. */
  preview: string[];
  /** Whether a trial was made and answered. */
  tried: boolean;
}

/** The user's answer to a step that waits for approval. */
export type Decision = { run: true; code: string } | { run: false };

/** Where a step's code came from, for the cell's `chapyter` metadata. */
export type IStepOrigin = IAgentCodeOrigin;

/** What a step did in the notebook, as the driver reports it. */
export interface IRunOutcome {
  /** Whether the code ran (an error in the cell counts as ran). */
  ran: boolean;
  /** What it left (when it ran). */
  result?: IRunResult;
  /** Why it did not run, one line. */
  reason?: string;
}

/**
 * What the runner needs of the turn's notebook (`agent/notebook.ts` over JupyterLab; tests
 * pass a fake). The notebook is the one the turn began in, even if another becomes active.
 */
export interface INotebookDriver {
  /** Why code cannot run now (no notebook, no kernel), one line; null when it can. */
  cannotRun(): string | null;
  /**
   * Insert a code cell holding `code` after the cell `afterId` (null or gone: below the
   * active cell), complete in one step; its id.
   */
  insert(code: string, origin: IStepOrigin, afterId: string | null): string;
  /** Run the cell through the notebook's own kernel connection; what it left. */
  run(cellId: string): Promise<IRunOutcome>;
  /**
   * Evaluate a step's trial `expression` silently in the kernel (nothing shown, no history):
   * its report, or the error that kept it from starting.
   */
  trial(expression: string): Promise<TrialOutcome>;
  /**
   * Evaluate the guard's `expression` silently, so the next run of the step's code is
   * guarded; whether the kernel armed it.
   */
  arm(expression: string): Promise<boolean>;
  /** The outputs of an existing cell (a 1-based position or an id) as text for the model. */
  readCell(cell: string): Promise<string>;
  /**
   * Evaluate `expression` silently in the kernel (no cell, no history); its value is
   * `{"text": ...}` as JSON: that text.
   */
  evaluate(expression: string): Promise<string>;
  /**
   * Evaluate `expression` silently in the kernel; the `application/json` value it shows, null
   * when the kernel cannot tell (the kernel's snapshots for Undo are read so).
   */
  readJSON(expression: string): Promise<unknown>;
  /** Interrupt the kernel (a step's cell is running). */
  interrupt(): Promise<void>;
  /** Delete these cells in one undo step; how many were there. */
  remove(cellIds: string[]): number;
  /** Whether the cell still exists. */
  has(cellId: string): boolean;
  /** The cell as JupyterLab shows it ("cell [4]", "the 5th cell": cellNames.ts), '' when gone. */
  name(cellId: string): string;
  /** Scroll to the cell and select it. */
  reveal(cellId: string): void;
}
