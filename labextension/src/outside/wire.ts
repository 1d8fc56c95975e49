/**
 * An outside agent's calls as the server relays them (`GET outside/events`) and the answers
 * the page posts back (`outside/trial`, `outside/result`, `outside/stop`): the events read
 * and checked, the result bodies built, and what a card says. Pure: no DOM, no JupyterLab.
 */

import { outputImages, outputText } from '../common/cellOutputs';
import { variablesExpression } from '../common/snapshot';
import { generatedMetadata } from '../contract';

/** The tools whose calls change the notebook or the kernel. */
export const ACTING_TOOLS = ['run_code', 'edit_cell', 'run_cell', 'undo'];

/** The server's decision for an acting call. */
export type OutsideDecision = 'run' | 'try' | 'ask';

/** One `call` event. */
export interface IOutsideCall {
  callId: string;
  /** The MCP client's name and version, e.g. "claude-code 1.2". */
  client: string;
  tool: string;
  arguments: { [key: string]: unknown };
  /** The notebook's contents path ('' for any page: `list_notebooks`). */
  notebook: string;
  acts: boolean;
  /** null for reads. */
  decision: OutsideDecision | null;
  reasons: string[];
  /** The trial's expression, or null. */
  trial: string | null;
  /** The exact code that would run (acting tools), or null. */
  code: string | null;
}

/** One `cancel` event. */
export interface IOutsideCancel {
  callId: string;
  reason: string;
}

/** How a call ended. */
export type OutsideStatus = 'ok' | 'refused' | 'error' | 'not_open';

/** The body of `POST outside/result`. */
export interface IOutsideResultBody {
  call_id: string;
  status: OutsideStatus;
  result: { [key: string]: unknown } | null;
  message: string;
}

/** The server's answer to `POST outside/trial`. */
export interface IOutsideTrialDecision {
  needs_approval: boolean;
  reasons: string[];
  concerns: string[];
  preview: string[];
  guard: string | null;
}

function strings(value: unknown): string[] {
  return Array.isArray(value)
    ? value.filter((v): v is string => typeof v === 'string')
    : [];
}

function parse(data: string): { [key: string]: unknown } | null {
  try {
    const value = JSON.parse(data);
    return value && typeof value === 'object' && !Array.isArray(value)
      ? value
      : null;
  } catch {
    return null;
  }
}

/** A `call` event's data checked; null when it is not one (the page ignores it). */
export function readCall(data: string): IOutsideCall | null {
  const raw = parse(data);
  if (!raw || typeof raw.call_id !== 'string' || !raw.call_id) {
    return null;
  }
  if (typeof raw.tool !== 'string') {
    return null;
  }
  const decision = ['run', 'try', 'ask'].includes(raw.decision as string)
    ? (raw.decision as OutsideDecision)
    : null;
  const args =
    raw.arguments && typeof raw.arguments === 'object'
      ? (raw.arguments as { [key: string]: unknown })
      : {};
  return {
    callId: raw.call_id,
    client:
      typeof raw.client === 'string' && raw.client
        ? raw.client
        : 'An outside agent',
    tool: raw.tool,
    arguments: args,
    notebook: typeof raw.notebook === 'string' ? raw.notebook : '',
    acts: raw.acts === true || ACTING_TOOLS.includes(raw.tool),
    decision,
    reasons: strings(raw.reasons),
    trial: typeof raw.trial === 'string' && raw.trial ? raw.trial : null,
    code: typeof raw.code === 'string' ? raw.code : null
  };
}

/** A `cancel` event's data checked, or null. */
export function readCancel(data: string): IOutsideCancel | null {
  const raw = parse(data);
  if (!raw || typeof raw.call_id !== 'string' || !raw.call_id) {
    return null;
  }
  return {
    callId: raw.call_id,
    reason: typeof raw.reason === 'string' ? raw.reason : ''
  };
}

/** The server's trial decision checked (anything odd: ask). */
export function readTrialDecision(value: unknown): IOutsideTrialDecision {
  const raw = (value && typeof value === 'object' ? value : {}) as {
    [key: string]: unknown;
  };
  return {
    needs_approval: raw.needs_approval !== false,
    reasons: strings(raw.reasons),
    concerns: strings(raw.concerns),
    preview: strings(raw.preview),
    guard: typeof raw.guard === 'string' && raw.guard ? raw.guard : null
  };
}

/** The client's name without its version: "claude-code 1.2" -> "claude-code". */
export function clientName(client: string): string {
  const parts = client.trim().split(/\s+/);
  if (parts.length > 1 && /^v?\d/.test(parts[parts.length - 1])) {
    parts.pop();
  }
  return parts.join(' ') || 'An outside agent';
}

/** A string argument of a call ('' when absent or not a string). */
export function stringArg(call: IOutsideCall, name: string): string {
  const value = call.arguments[name];
  return typeof value === 'string' ? value : '';
}

/** What the card asks, e.g. "claude-code wants to run this cell". */
export function approvalTitle(call: IOutsideCall, cellName = ''): string {
  const who = clientName(call.client);
  switch (call.tool) {
    case 'run_code':
      return `${who} wants to run this cell`;
    case 'run_cell':
      return `${who} wants to run ${cellName || 'a cell'}`;
    case 'edit_cell':
      return `${who} wants to change ${cellName || 'a cell'}`;
    case 'undo':
      return `${who} wants to undo its last run`;
    default:
      return `${who} wants to use ${call.tool}`;
  }
}

/** The one line `not_open` says. */
export function notOpenMessage(notebook: string): string {
  return notebook
    ? `${notebook} is not open in JupyterLab: open it there to let an outside agent use it.`
    : 'No notebook is open in JupyterLab.';
}

/** A result body. */
export function resultBody(
  callId: string,
  status: OutsideStatus,
  result: { [key: string]: unknown } | null = null,
  message = ''
): IOutsideResultBody {
  return { call_id: callId, status, result, message };
}

/** What a ran cell returns: its id, execution count, outputs as text, PNGs, its error. */
export function cellResult(
  cellId: string,
  executionCount: number | null,
  outputs: { [key: string]: any }[]
): { [key: string]: unknown } {
  const error = outputs.find(output => output.output_type === 'error');
  return {
    cell_id: cellId,
    execution_count: executionCount,
    outputs: outputs
      .filter(
        output =>
          !output.data || Object.keys(output.data).some(m => m !== 'image/png')
      )
      .map(outputText),
    images: outputImages(outputs),
    error: error
      ? { ename: String(error.ename ?? ''), evalue: String(error.evalue ?? '') }
      : null
  };
}

/** One cell as `read_cells` returns it. */
export interface IReadCell {
  id: string;
  index: number;
  type: string;
  source: string;
  execution_count: number | null;
  outputs: string[];
  images: string[];
}

/** A cell model's parts as `read_cells` returns them. */
export function readCell(
  id: string,
  index: number,
  type: string,
  source: string,
  executionCount: number | null,
  outputs: { [key: string]: any }[]
): IReadCell {
  const ran = cellResult(id, executionCount, outputs);
  return {
    id,
    index,
    type,
    source,
    execution_count: executionCount,
    outputs: ran.outputs as string[],
    images: ran.images as string[]
  };
}

/** The cells `start`..`end` (0-based, end excluded, clamped) of `count` cells. */
export function cellRange(
  count: number,
  start: unknown,
  end: unknown
): [number, number] {
  const from =
    typeof start === 'number' && Number.isFinite(start)
      ? Math.max(0, Math.floor(start))
      : 0;
  const to =
    typeof end === 'number' && Number.isFinite(end)
      ? Math.min(count, Math.floor(end))
      : count;
  return [Math.min(from, count), Math.max(Math.min(from, count), to)];
}

/** Python identifiers only, for a variable read by name. */
const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** The summaries of `names` (all variables when absent), binding no name in the kernel. */
export function variablesOf(names?: string[]): string {
  if (!names) {
    return variablesExpression(null);
  }
  const safe = names.filter(name => IDENTIFIER.test(name));
  return (
    "__import__('IPython').display.JSON(__import__('chapyter_ext.context', " +
    "fromlist=['describe_variables']).describe_variables(dict((n, " +
    `get_ipython().user_ns[n]) for n in ${JSON.stringify(safe)} ` +
    'if n in get_ipython().user_ns), get_ipython().user_ns_hidden))'
  );
}

/** The `metadata.chapyter` of a cell an outside agent made. */
export function outsideCellMetadata(
  code: string,
  client: string,
  callId: string
): { [key: string]: unknown } {
  return {
    ...generatedMetadata({ code, source: 'outside', model: client }),
    generated_by: 'outside',
    client,
    tool: 'run_code',
    call_id: callId
  };
}

/** Waits before reconnecting, in ms: doubled after each failure up to the last. */
export const BACKOFF_MS = [1000, 2000, 4000, 8000, 15000, 30000];

/** The wait before attempt `failures` + 1 (a refused route waits the longest). */
export function backoff(failures: number, refused = false): number {
  if (refused) {
    return BACKOFF_MS[BACKOFF_MS.length - 1];
  }
  return BACKOFF_MS[Math.min(failures, BACKOFF_MS.length - 1)];
}
