/**
 * What a message's @-mentions send besides their names, added just before it is sent: a
 * mentioned cell's source and outputs as text (read from the notebook, named as JupyterLab
 * shows it now), and the summary of a mentioned variable the snapshot lacks (read through the
 * notebook's kernel by the same silent read as the snapshot's variables: nothing the user
 * sees runs, nothing is bound). Files are read by the server. The pure parts are tested in
 * node; {@link notebookMentionDetails} reads JupyterLab.
 */

import type { ICodeCellModel } from '@jupyterlab/cells';
import type { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';
import type { Kernel } from '@jupyterlab/services';

import { cellNameIn } from '../cellNames';
import { readVariableList } from '../common/kernelRead';
import {
  INotebookSnapshot,
  IVariableSummary,
  variableFacts
} from '../common/snapshot';
import type { MentionDetails } from './modelOptions';
import type { IChatMention } from './tokens';

/** A mention as a request sends it (`mentions` of `POST chat` and `agent`). */
export interface IMentionSent extends IChatMention {
  /** A variable's summary read through the kernel (the snapshot had none for it). */
  variable?: IVariableSummary;
  /** A cell's source. */
  source?: string;
  /** A cell's outputs as text. */
  outputs?: string;
}

/** The most of a cell's source, and of its outputs, that is sent (the server's bound). */
export const MAX_CELL_TEXT = 20000;

/** How long a mentioned variable's read may wait for a busy kernel, in ms. */
const READ_TIMEOUT_MS = 3000;

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;
// Terminal colours in tracebacks.
// eslint-disable-next-line no-control-regex
const ANSI = /\u001b\[[0-9;]*[A-Za-z]/g;

/** An nbformat output, as far as its text goes. */
export interface IOutputLike {
  /** "stream", "execute_result", "display_data" or "error". */
  output_type: string;
  [key: string]: unknown;
}

function joined(value: unknown): string {
  return Array.isArray(value) ? value.join('') : String(value ?? '');
}

/** A cell's outputs as the model reads them: text, results' text, errors; images named. */
export function outputsText(outputs: readonly IOutputLike[]): string {
  const parts: string[] = [];
  for (const output of outputs) {
    if (output.output_type === 'stream') {
      parts.push(joined(output.text));
    } else if (output.output_type === 'error') {
      const trace = Array.isArray(output.traceback) ? output.traceback : [];
      const last = trace.length ? String(trace[trace.length - 1]) : '';
      parts.push(
        `${String(output.ename)}: ${String(output.evalue)}` +
          (last ? `\n${last.replace(ANSI, '')}` : '')
      );
    } else {
      const data = (output.data ?? {}) as { [mime: string]: unknown };
      if (data['text/plain'] !== undefined) {
        parts.push(joined(data['text/plain']));
      } else {
        const mime = Object.keys(data)[0];
        parts.push(mime ? `[${mime} output]` : '');
      }
    }
  }
  return parts
    .map(part => part.replace(/\n+$/, ''))
    .filter(Boolean)
    .join('\n')
    .slice(0, MAX_CELL_TEXT);
}

/**
 * The user expression that reads the summaries of `names` only (as
 * `variablesExpression` reads them all); it binds no name in the user's namespace.
 */
export function mentionedVariablesExpression(names: readonly string[]): string {
  const safe = names.filter(name => IDENTIFIER.test(name));
  return (
    "__import__('IPython').display.JSON(__import__('chapyter_ext.context', " +
    "fromlist=['describe_variables']).describe_variables(dict((n, " +
    `get_ipython().user_ns[n]) for n in ${JSON.stringify(safe)} ` +
    'if n in get_ipython().user_ns), get_ipython().user_ns_hidden))'
  );
}

/** The variables mentioned that `snapshot` has no summary of (all of them without one). */
export function variablesToRead(
  mentions: readonly IChatMention[],
  snapshot: INotebookSnapshot | null
): string[] {
  const known = new Set(
    (snapshot?.variables ?? [])
      .filter(variable => variable.summary)
      .map(variable => variable.name)
  );
  return mentions
    .filter(m => m.kind === 'variable' && m.name && !known.has(m.name))
    .map(m => m.name as string);
}

/** One cell as the mentions read it. */
interface ICellRead {
  readonly type: string;
  readonly executionCount?: number | null;
  readonly id: string;
  readonly source: string;
  readonly outputs: readonly IOutputLike[];
}

/**
 * `mentions` with what they send: each cell's text (and its name now, "cell [4]"), found in
 * `cells` by id; each variable summary in `read`. Cells not found keep their names only.
 */
export function withDetails(
  mentions: readonly IChatMention[],
  cells: readonly ICellRead[],
  read: readonly IVariableSummary[]
): IMentionSent[] {
  return mentions.map(mention => {
    const sent: IMentionSent = { ...mention };
    if (mention.kind === 'cell') {
      const index = cells.findIndex(cell => cell.id === mention.cellId);
      if (index >= 0) {
        const cell = cells[index];
        sent.label = cellNameIn(cells, index);
        sent.source = cell.source.slice(0, MAX_CELL_TEXT);
        const outputs = outputsText(cell.outputs);
        if (outputs) {
          sent.outputs = outputs;
        }
      }
    } else if (mention.kind === 'variable') {
      const variable = read.find(v => v.name === mention.name);
      if (variable) {
        sent.variable = variable;
      }
    }
    return sent;
  });
}

function cellsOf(panel: NotebookPanel): ICellRead[] {
  return panel.content.widgets.map(widget => {
    const model = widget.model;
    const code = model.type === 'code' ? (model as ICodeCellModel) : null;
    return {
      id: model.id,
      type: model.type,
      executionCount: code ? code.executionCount : null,
      source: model.sharedModel.getSource(),
      outputs: code ? (code.outputs.toJSON() as IOutputLike[]) : []
    };
  });
}

async function readMentioned(
  kernel: Kernel.IKernelConnection,
  names: string[]
): Promise<IVariableSummary[]> {
  const timeout = new Promise<null>(resolve =>
    setTimeout(() => resolve(null), READ_TIMEOUT_MS)
  );
  const read = readVariableList(
    kernel,
    mentionedVariablesExpression(names),
    variableFacts
  ).catch(() => null);
  return (await Promise.race([read, timeout])) ?? [];
}

/** The details of mentions in the notebooks of `tracker` (the one holding each cell). */
export function notebookMentionDetails(
  tracker: INotebookTracker
): MentionDetails {
  return async (mentions, snapshot) => {
    const panels: NotebookPanel[] = [];
    tracker.forEach(panel => panels.push(panel));
    const current =
      panels.find(panel => panel.context.path === snapshot?.path) ??
      tracker.currentWidget;
    const cells = panels.flatMap(cellsOf);
    const names = variablesToRead(mentions, snapshot);
    const kernel = current?.sessionContext.session?.kernel;
    const read =
      names.length && kernel ? await readMentioned(kernel, names) : [];
    return withDetails(mentions, cells, read);
  };
}
