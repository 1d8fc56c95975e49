/**
 * The notebook snapshot the chat sends as its context, and the pure parts of collecting it.
 *
 * The browser only collects: the server turns the snapshot into text with the same assembler
 * and the same budget (`Chapyter.context_budget`) as `%%ai` (`chapyter_ext/context/notebook.py`),
 * and `POST chapyter-ext/context` returns that text and the chip's summary. The field names are
 * the wire's (snake_case), so the snapshot is sent as it is.
 */

import { ownPrompts } from '../cellNames';

/** A cell, as the snapshot carries it. */
export interface ICellSnapshot {
  /** Position in the notebook, from 0. */
  index: number;
  /** "code", "markdown" or "raw". */
  type: string;
  /** Its source. */
  source: string;
  /**
   * The execution count JupyterLab shows beside it (`[4]:`) when no other cell shows the
   * same, else null: the server names it "cell [4]" then, as the UI does (cellNames.ts).
   */
  prompt?: number | null;
}

/** The most recent error output of the notebook. */
export interface IErrorSnapshot {
  /** Position of the cell that shows it, from 0. */
  cell_index: number;
  /** That cell's own execution count ({@link ICellSnapshot.prompt}), else null. */
  cell_prompt?: number | null;
  /** Exception class name. */
  ename: string;
  /** Exception message. */
  evalue: string;
  /** Traceback lines, as the kernel sent them (the server removes the ANSI colours). */
  traceback: string[];
}

/**
 * The facts a table or container carries besides its summary (columns, keys, labels), in
 * the shape `chapyter_ext.context.facts.VarFacts.to_json` writes; the server validates them.
 */
export interface IVariableFacts {
  /** Its head line ("5,000 rows × 12 columns"). */
  head?: string;
  /** One entry per column or key: label, kind, text, note, labels, sampled rows. */
  facts?: unknown[];
  /** "columns", "keys", "items" or "values". */
  noun?: string;
  /** How many columns or keys there are in all. */
  total?: number;
  /** A preview of the first rows. */
  tail?: string;
  /** Kinds of the columns left out, counted. */
  rest_kinds?: { [kind: string]: number };
}

/** One variable as `chapyter_ext.context.describe_variables` summarises it. */
export interface IVariableSummary extends IVariableFacts {
  /** Its name. */
  name: string;
  /** Its type's name. */
  type: string;
  /** A short, redacted summary of its value. */
  summary: string;
}

/** What the plugin saw of the notebook when asked: the body the server assembles. */
export interface INotebookSnapshot {
  /** Contents path of the notebook. */
  path: string;
  /** Number of cells. */
  cell_count: number;
  /** The active cell, if any. */
  active: ICellSnapshot | null;
  /** Cells above the active one, nearest last. */
  above: ICellSnapshot[];
  /** Cells below the active one, nearest first. */
  below: ICellSnapshot[];
  /** Text selected in the active cell's editor ('' when none). */
  selection: string;
  /** The last error, if one is shown. */
  last_error: IErrorSnapshot | null;
  /** The kernel's variables, most recent first; null when they could not be read. */
  variables: IVariableSummary[] | null;
  /** The kernel's language ('' when unknown). */
  language: string;
}

/** The body of `POST chapyter-ext/context`: what the server makes of a snapshot. */
export interface IContextPreview {
  /** The context text the model gets (assembled and redacted by the server). */
  text: string;
  /** The chip, e.g. "data.ipynb · 4th cell · 12 variables · last error". */
  summary: string;
  /** Length of `text`. */
  chars: number;
  /**
   * The project rules (AGENTS.md, .chapyter/rules.md) the server adds to the system prompt
   * for this notebook, nearest last; absent from older servers.
   */
  rules?: { path: string; chars: number }[];
}

/** What the chat will tell the model about the notebook, and how to say it in a chip. */
export interface IChatContext extends IContextPreview {
  /** The snapshot a message sends as `context` (the server assembles it again). */
  snapshot: INotebookSnapshot;
}

/** A code cell's outputs, as far as finding the last error goes. */
export interface ICellOutputs {
  /** Position of the cell, from 0. */
  index: number;
  /** Its execution count (null when never run). */
  executionCount: number | null;
  /** Its outputs in nbformat shape. */
  outputs: { output_type: string; [key: string]: unknown }[];
}

/** The optional keys of a variable that carry its facts from the kernel to the server. */
const FACT_KEYS = [
  'head',
  'facts',
  'noun',
  'total',
  'tail',
  'rest_kinds'
] as const;

/**
 * The facts `describe_variables` attached to a variable (columns, keys, labels), passed on
 * unchanged for the server to choose from by relevance; the server validates them.
 */
export function variableFacts(raw: { [key: string]: unknown }): IVariableFacts {
  const out: { [key: string]: unknown } = {};
  for (const key of FACT_KEYS) {
    if (raw[key] !== undefined) {
      out[key] = raw[key];
    }
  }
  return out as IVariableFacts;
}

/**
 * Errors of chapyter-ext itself (a failed `%%ai`): the user's code did not fail, so they are
 * never the notebook's last error (the kernel side skips them too).
 */
export const OWN_ERROR_NAMES: readonly string[] = ['ChapyterError'];

/** The error shown by the cell run last, or null; chapyter-ext's own errors are skipped. */
export function findLastError(
  cells: readonly ICellOutputs[],
  // Each cell's own prompt, when `cells` are not the whole notebook (cellIndex.ts).
  prompts: readonly (number | null)[] = ownPrompts(
    cells.map(cell => cell.executionCount)
  )
): IErrorSnapshot | null {
  let best: IErrorSnapshot | null = null;
  let bestCount = -Infinity;
  for (const [at, cell] of cells.entries()) {
    for (const output of cell.outputs) {
      if (output.output_type !== 'error') {
        continue;
      }
      const ename = String(output.ename ?? 'Error');
      if (OWN_ERROR_NAMES.includes(ename)) {
        continue;
      }
      const count = cell.executionCount ?? -1;
      if (count >= bestCount) {
        bestCount = count;
        best = {
          cell_index: cell.index,
          cell_prompt: prompts[at],
          ename,
          evalue: String(output.evalue ?? ''),
          traceback: Array.isArray(output.traceback)
            ? output.traceback.map(String)
            : []
        };
      }
    }
  }
  return best;
}

/**
 * The user expression that reads the variables; it binds no name in the user's namespace.
 * `budget` is the server's `context_budget` (the kernel's default when unknown).
 */
export function variablesExpression(budget: number | null): string {
  const limit =
    budget !== null && Number.isFinite(budget) && budget > 0
      ? `, budget=${Math.floor(budget)}`
      : '';
  return (
    "__import__('IPython').display.JSON(__import__('chapyter_ext.context', " +
    "fromlist=['describe_variables']).describe_variables(get_ipython().user_ns, " +
    `get_ipython().user_ns_hidden${limit}))`
  );
}

/**
 * The context for a snapshot: the server's text and chip (`POST context`), with the snapshot
 * a message sends. When the server cannot say, the chip says so; the snapshot still goes.
 */
export async function previewContext(
  snapshot: INotebookSnapshot,
  preview: (snapshot: INotebookSnapshot) => Promise<IContextPreview>
): Promise<IChatContext> {
  try {
    const { text, summary, chars, rules } = await preview(snapshot);
    return { text, summary, chars, rules: rules ?? [], snapshot };
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    return {
      text: '',
      summary: `Context preview unavailable: ${reason}`,
      chars: 0,
      snapshot
    };
  }
}
