/**
 * Agent turns' events on the chat's wire (`step`, `step_done`) and the steps a history
 * records, decoded field by field; `events.ts` dispatches to them.
 */

function str(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

/**
 * What the browser does for a step, as the server's tool record says (`op`): run a new cell
 * (`run_cell`), read a cell of the notebook (`read_cell`), evaluate an expression silently in
 * the kernel (`evaluate`), or nothing but show it and maybe ask (`call`: the server calls the
 * tool, an MCP server's). Any other value comes from a newer server.
 */
export type StepOp = 'run_cell' | 'read_cell' | 'evaluate' | 'call' | string;

/** Agent turns: a step of the turn, described by its tool's record on the server. */
export interface IStepEvent {
  /** Discriminant. */
  type: 'step';
  /** The step's id (what `agent/result` takes). */
  stepId: string;
  /** The tool's name (`run_code`, `time__get_current_time`, ...). */
  kind: string;
  /** What the browser does (see {@link StepOp}). */
  op: StepOp;
  /** Where the tool runs: "kernel" (here, through the notebook's kernel) or "server". */
  runs: string;
  /** The step's line in the chat ("read cell 3", "time · get_current_time"). */
  title: string;
  /** The tool's short name for the user. */
  label: string;
  /** The MCP server the tool belongs to ('' for the built-in ones). */
  server: string;
  /** The expression to evaluate (op `evaluate`). */
  expression: string;
  /** The call's arguments, shown for approval (server tools). */
  arguments: { [key: string]: unknown } | null;
  /** The code to run (run_code). */
  code: string;
  /** Why, in the model's words (may be empty). */
  purpose: string;
  /** The cell to read (read_cell): a 1-based position or a cell id. */
  cell: string;
  /** Whether the user must approve the code first (the policy asked for it). */
  needsApproval: boolean;
  /** Why approval is asked (e.g. "writes files"), for policy "risky". */
  reasons: string[];
  /**
   * The expression that tries the code in a confined copy of the kernel first ('' when no
   * trial is asked for): its report goes to `agent/trial`, which decides whether it asks.
   */
  trial: string;
}

/** What a step's confined trial saw, as the history keeps it. */
export interface ITrialRecord {
  /** How the trial ended: "ran", "timeout", "crashed" or "unavailable". */
  status: string;
  /** Why it asked ("tried to write out.csv"); empty when the trial cleared it. */
  concerns: string[];
  /** What it would show and change ("prints: 42", "creates total (int: 42)"). */
  preview: string[];
  /** Whether the step then ran without asking. */
  ran: boolean;
}

/** Agent turns: the server received a step's result; its one-line summary. */
export interface IStepDoneEvent {
  /** Discriminant. */
  type: 'step_done';
  /** The step's id. */
  stepId: string;
  /** One line, e.g. "NameError: name 'x' is not defined" or "printed 3 lines". */
  outcome: string;
  /** "ok", "error", "read" or "skipped" ('' from an older server). */
  status: string;
  /** What the model was told of a server step's result (null for kernel steps). */
  result: string | null;
}

/** A step that ran, as the history (and the `done` event) records it. */
export interface IStepRecord {
  /** The step's id. */
  step_id: string;
  /** The tool ('' in histories older than the tool registry). */
  tool: string;
  /** The step's line in the chat ('' in older histories). */
  title: string;
  /** The code that ran ('' for a read). */
  code: string;
  /** The id of the cell it ran in ('' when none). */
  cell_id: string;
  /** One line. */
  outcome: string;
  /** What its trial saw (null: no trial was made). */
  trial?: ITrialRecord | null;
  /** The MCP server of the tool ('' or absent for the built-in ones). */
  server?: string;
  /** A tool other than run_code: its arguments, as JSON text. */
  arguments?: string;
  /** A tool other than run_code: what the model was told of its result. */
  result?: string;
}

function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.filter(v => typeof v === 'string') : [];
}

/** A recorded trial, or null when `value` is not one. */
export function trialRecord(value: unknown): ITrialRecord | null {
  if (!value || typeof value !== 'object') {
    return null;
  }
  const v = value as { [key: string]: unknown };
  if (typeof v.status !== 'string') {
    return null;
  }
  return {
    status: v.status,
    concerns: strings(v.concerns),
    preview: strings(v.preview),
    ran: v.ran === true
  };
}

/** The op of each built-in tool, for a server that sent kinds only. */
const LEGACY_OPS: { [kind: string]: string } = {
  run_code: 'run_cell',
  read_cell: 'read_cell'
};

/** The step records of a `done` event or a stored message; malformed entries are dropped. */
export function stepRecords(value: unknown): IStepRecord[] {
  if (!Array.isArray(value)) {
    return [];
  }
  return value
    .filter(v => v && typeof v === 'object' && typeof v.step_id === 'string')
    .map(v => ({
      step_id: v.step_id as string,
      tool: str(v.tool),
      title: str(v.title),
      code: str(v.code),
      cell_id: str(v.cell_id),
      outcome: str(v.outcome),
      trial: trialRecord(v.trial),
      ...(v.server ? { server: str(v.server) } : {}),
      ...(v.arguments ? { arguments: str(v.arguments) } : {}),
      ...(v.result ? { result: str(v.result) } : {})
    }));
}

/** A `step` event's data, typed; null when it lacks what a step needs. */
export function stepEvent(d: { [key: string]: unknown }): IStepEvent | null {
  if (typeof d.step_id !== 'string' || typeof d.kind !== 'string' || !d.kind) {
    return null;
  }
  return {
    type: 'step',
    stepId: d.step_id,
    kind: d.kind,
    // A server from before the tool registry sent no op: its kinds say.
    op: typeof d.op === 'string' ? d.op : (LEGACY_OPS[d.kind] ?? ''),
    runs: str(d.runs) || 'kernel',
    title: str(d.title),
    label: str(d.label) || d.kind,
    server: str(d.server),
    expression: str(d.expression),
    arguments:
      d.arguments &&
      typeof d.arguments === 'object' &&
      !Array.isArray(d.arguments)
        ? (d.arguments as { [key: string]: unknown })
        : null,
    code: str(d.code),
    purpose: str(d.purpose),
    cell: str(d.cell),
    needsApproval: d.needs_approval === true,
    reasons: strings(d.reasons),
    trial: str(d.trial)
  };
}

/** A `step_done` event's data, typed; null without a step id. */
export function stepDoneEvent(d: {
  [key: string]: unknown;
}): IStepDoneEvent | null {
  return typeof d.step_id === 'string'
    ? {
        type: 'step_done',
        stepId: d.step_id,
        outcome: str(d.outcome),
        status: str(d.status),
        result: typeof d.result === 'string' ? d.result : null
      }
    : null;
}
