/**
 * What the chat tells the model about the notebook, as text within a budget, and the chip
 * that shows it. Pure functions over a snapshot the plugin takes (`notebookContext.ts`).
 */

import { IChatContext } from './tokens';

/** A cell, as the context shows it. */
export interface ICellSnapshot {
  /** Position in the notebook, from 0. */
  index: number;
  /** "code", "markdown" or "raw". */
  type: string;
  /** Its source. */
  source: string;
}

/** The most recent error output of the notebook. */
export interface IErrorSnapshot {
  /** Position of the cell that shows it, from 0. */
  cellIndex: number;
  /** Exception class name. */
  ename: string;
  /** Exception message. */
  evalue: string;
  /** Traceback lines, as the kernel sent them (ANSI colours included). */
  traceback: string[];
}

/** One variable as `chapyter_ext.context.describe_variables` summarises it. */
export interface IVariableSummary {
  /** Its name. */
  name: string;
  /** Its type's name. */
  type: string;
  /** A short, redacted summary of its value. */
  summary: string;
}

/** What the plugin saw of the notebook when asked. */
export interface INotebookSnapshot {
  /** Contents path of the notebook. */
  path: string;
  /** Number of cells. */
  cellCount: number;
  /** The active cell, if any. */
  active: ICellSnapshot | null;
  /** Cells above the active one, nearest last. */
  above: ICellSnapshot[];
  /** Cells below the active one, nearest first. */
  below: ICellSnapshot[];
  /** Text selected in the active cell's editor ('' when none). */
  selection: string;
  /** The last error, if one is shown. */
  lastError: IErrorSnapshot | null;
  /** The kernel's variables, most recent first; null when they could not be read. */
  variables: IVariableSummary[] | null;
  /** The kernel's language, for code fences ('' when unknown). */
  language: string;
}

/** A code or markdown cell's outputs, as far as finding the last error goes. */
export interface ICellOutputs {
  /** Position of the cell, from 0. */
  index: number;
  /** Its execution count (null when never run). */
  executionCount: number | null;
  /** Its outputs in nbformat shape. */
  outputs: { output_type: string; [key: string]: unknown }[];
}

const ANSI = /\u001b\[[0-9;?]*[A-Za-z]|\u001b\][^\u0007]*\u0007/g;

/** Text without ANSI colour codes. */
export function stripAnsi(text: string): string {
  return text.replace(ANSI, '');
}

/** The error shown by the cell run last, or null. */
export function findLastError(
  cells: readonly ICellOutputs[]
): IErrorSnapshot | null {
  let best: IErrorSnapshot | null = null;
  let bestCount = -Infinity;
  for (const cell of cells) {
    for (const output of cell.outputs) {
      if (output.output_type !== 'error') {
        continue;
      }
      const count = cell.executionCount ?? -1;
      if (count >= bestCount) {
        bestCount = count;
        best = {
          cellIndex: cell.index,
          ename: String(output.ename ?? 'Error'),
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

/** The first `limit` characters of `text`, saying how much was cut. */
export function clipHead(text: string, limit: number): string {
  if (text.length <= limit) {
    return text;
  }
  const note = `\n[… ${text.length - limit} more characters]`;
  return text.slice(0, Math.max(0, limit - note.length)) + note;
}

/** The last `limit` characters of `text` (where a traceback's news is). */
export function clipTail(text: string, limit: number): string {
  if (text.length <= limit) {
    return text;
  }
  const note = `[… ${text.length - limit} characters before]\n`;
  return note + text.slice(text.length - Math.max(0, limit - note.length));
}

function basename(path: string): string {
  const parts = path.split('/');
  return parts[parts.length - 1] || path;
}

function plural(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}

function fence(text: string, language: string): string {
  // A fence longer than any backtick run inside, so the cell cannot close it early.
  const longest = Math.max(
    2,
    ...Array.from(text.matchAll(/`+/g), m => m[0].length)
  );
  const ticks = '`'.repeat(longest + 1);
  return `${ticks}${language}\n${text}\n${ticks}`;
}

function cellBlock(
  title: string,
  cell: ICellSnapshot,
  language: string,
  limit: number
): string {
  const lang =
    cell.type === 'code'
      ? language
      : cell.type === 'markdown'
        ? 'markdown'
        : '';
  const head = `${title}:\n`;
  const room = limit - head.length - 16;
  if (room < 40) {
    return '';
  }
  return head + fence(clipHead(cell.source, room), lang);
}

function errorBlock(error: IErrorSnapshot, limit: number): string {
  const head = `Last error (cell ${error.cellIndex + 1}): ${error.ename}: ${error.evalue}`;
  const trace = stripAnsi(error.traceback.join('\n')).trim();
  const line = clipHead(head, Math.min(limit, 400));
  const room = limit - line.length - 1;
  return trace && room > 80 ? `${line}\n${clipTail(trace, room)}` : line;
}

function variablesBlock(variables: IVariableSummary[], limit: number): string {
  const title = 'Kernel variables (most recent first):';
  const lines = [title];
  let used = title.length;
  for (let i = 0; i < variables.length; i++) {
    const v = variables[i];
    const line = `- ${v.name} (${v.type}): ${v.summary.replace(/\n/g, '\n    ')}`;
    const rest = variables.length - i;
    const reserve = rest > 1 ? 40 : 0;
    if (used + 1 + line.length + reserve > limit) {
      lines.push(`- … (${plural(rest, 'more variable')})`);
      break;
    }
    lines.push(line);
    used += line.length + 1;
  }
  return lines.length > 1 ? lines.join('\n') : '';
}

/**
 * The context text: the notebook's name, the selected text, the active cell, the last error,
 * the kernel's variables, then the neighbouring cells, each clipped, most useful first, the
 * whole at most `maxChars` characters.
 */
export function formatContext(
  snapshot: INotebookSnapshot,
  maxChars: number
): string {
  const language = snapshot.language || '';
  const sections: string[] = [];
  let left = maxChars;
  const add = (text: string) => {
    if (text && text.length + 2 <= left) {
      sections.push(text);
      left -= text.length + 2;
    }
  };
  const active = snapshot.active;
  add(
    `Notebook: ${basename(snapshot.path)} (${plural(snapshot.cellCount, 'cell')}` +
      (active ? `; the active cell is cell ${active.index + 1})` : ')')
  );
  if (snapshot.selection.trim() && active) {
    const head = `Selected text (in cell ${active.index + 1}):\n`;
    add(
      head +
        fence(
          clipHead(snapshot.selection, Math.min(1500, left - head.length - 24)),
          ''
        )
    );
  }
  if (active) {
    const title = `Active cell ${active.index + 1} (${active.type})`;
    add(cellBlock(title, active, language, Math.min(2500, left)));
  }
  if (snapshot.lastError) {
    add(errorBlock(snapshot.lastError, Math.min(1500, left - 2)));
  }
  if (snapshot.variables?.length) {
    add(variablesBlock(snapshot.variables, Math.min(2000, left - 2)));
  }
  const neighbours = [
    ...snapshot.above.map(cell => ({ cell, where: 'above' })).reverse(),
    ...snapshot.below.map(cell => ({ cell, where: 'below' }))
  ].sort(
    (a, b) =>
      Math.abs(a.cell.index - (active?.index ?? 0)) -
      Math.abs(b.cell.index - (active?.index ?? 0))
  );
  for (const { cell, where } of neighbours) {
    const title = `Cell ${cell.index + 1} (${cell.type}, ${where} the active cell)`;
    add(cellBlock(title, cell, language, Math.min(1200, left - 2)));
  }
  return sections.join('\n\n');
}

/** The chip, e.g. "data.ipynb · cell 4 · 12 variables · last error". */
export function contextSummary(snapshot: INotebookSnapshot): string {
  const parts = [basename(snapshot.path)];
  if (snapshot.active) {
    parts.push(`cell ${snapshot.active.index + 1}`);
  }
  if (snapshot.selection.trim()) {
    parts.push('selection');
  }
  if (snapshot.variables) {
    parts.push(plural(snapshot.variables.length, 'variable'));
  }
  if (snapshot.lastError) {
    parts.push('last error');
  }
  return parts.join(' · ');
}

/** The context the chat sends for a snapshot. */
export function buildContext(
  snapshot: INotebookSnapshot,
  maxChars: number
): IChatContext {
  return {
    text: formatContext(snapshot, maxChars),
    summary: contextSummary(snapshot)
  };
}
