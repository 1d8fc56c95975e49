/**
 * The pure logic of Fix / Edit with AI: the failing name of an error, the earlier cells that
 * define it, a line diff of a proposal, and how alike two pieces of code are. No DOM.
 */

import { IDiffLine, lineDiff } from '../common/lineDiff';

// The diff moved to shared code (an outside agent's edit shows one too); Fix keeps its names.
export { lineDiff };
export type { IDiffLine };

/** One code cell, as the finder reads the notebook. */
export interface ICellCode {
  /** The cell's id. */
  id: string;
  /** Its index in the notebook. */
  index: number;
  /** Its code. */
  source: string;
}

/** The error output of a failing cell (nbformat `error` output). */
export interface IErrorInfo {
  /** Exception class, e.g. "NameError". */
  ename: string;
  /** Its message. */
  evalue: string;
  /** The traceback lines (may hold ANSI colours). */
  traceback: string[];
}

/** How many earlier cells the finder sends at most. */
export const MAX_RELATED = 2;

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * The name or column an error is about: `x` for `NameError: name 'x' is not defined`, `col`
 * for `KeyError: 'col'`, the attribute's owner is not guessed. Null when there is none.
 */
export function failingName(
  error: IErrorInfo
): { kind: 'name' | 'column'; name: string } | null {
  if (error.ename === 'NameError' || error.ename === 'UnboundLocalError') {
    const match = /name '([A-Za-z_][A-Za-z0-9_]*)'/.exec(error.evalue);
    return match ? { kind: 'name', name: match[1] } : null;
  }
  if (error.ename === 'KeyError') {
    const match = /^\s*["'](.+)["']\s*$/.exec(error.evalue);
    return match ? { kind: 'column', name: match[1] } : null;
  }
  return null;
}

/** Whether `source` assigns (or imports, defines) the name `name`. */
export function assigns(source: string, name: string): boolean {
  const n = escapeRegExp(name);
  const assignment = /^\s*([^=\n#'"]+?)\s*(?:[-+*/%&|^@]|\/\/|\*\*)?=(?!=)/gm;
  let match: RegExpExecArray | null;
  while ((match = assignment.exec(source)) !== null) {
    if (new RegExp(`(^|[\\s,(])${n}($|[\\s,)])`).test(match[1])) {
      return true;
    }
  }
  const patterns = [
    new RegExp(`^\\s*(?:async\\s+)?(?:def|class)\\s+${n}\\b`, 'm'),
    new RegExp(`^\\s*(?:from\\s+\\S+\\s+)?import\\s+.*\\b${n}\\b`, 'm'),
    new RegExp(`\\bas\\s+${n}\\b`, 'm'),
    new RegExp(`^\\s*for\\s+[\\w\\s,()]*\\b${n}\\b[\\w\\s,()]*\\s+in\\b`, 'm')
  ];
  return patterns.some(p => p.test(source));
}

/** Whether `source` mentions the column `name` as a string literal. */
export function mentionsColumn(source: string, name: string): boolean {
  const n = escapeRegExp(name);
  return new RegExp(`["']${n}["']`).test(source);
}

/**
 * The earlier cells that define the failing name (NameError: the last earlier cell assigning
 * it) or column (KeyError: the last earlier cell mentioning it, else the last one creating a
 * frame the failing cell uses). At most {@link MAX_RELATED}, nearest first.
 */
export function findDefiningCells(
  cells: readonly ICellCode[],
  failing: ICellCode,
  error: IErrorInfo
): ICellCode[] {
  const target = failingName(error);
  if (!target) {
    return [];
  }
  const earlier = cells.filter(c => c.index < failing.index).reverse();
  if (target.kind === 'name') {
    const found = earlier.find(c => assigns(c.source, target.name));
    return found ? [found] : [];
  }
  const found: ICellCode[] = [];
  const mention = earlier.find(c => mentionsColumn(c.source, target.name));
  if (mention) {
    found.push(mention);
  }
  // The frame indexed in the failing cell (`df['col']`): where it was made.
  const frames = new Set<string>();
  const indexing = /([A-Za-z_][A-Za-z0-9_]*)\s*\[\s*["']/g;
  let match: RegExpExecArray | null;
  while ((match = indexing.exec(failing.source)) !== null) {
    frames.add(match[1]);
  }
  for (const frame of frames) {
    const maker = earlier.find(c => assigns(c.source, frame));
    if (maker && !found.includes(maker)) {
      found.push(maker);
    }
  }
  return found.slice(0, MAX_RELATED);
}

/**
 * How alike two pieces of code are, 0..1: the share of their non-blank, trimmed lines they
 * have in common (2 * common / (lines of a + lines of b)).
 */
export function lineSimilarity(a: string, b: string): number {
  const norm = (text: string) =>
    text
      .split('\n')
      .map(line => line.trim())
      .filter(line => line !== '');
  const left = norm(a);
  const right = norm(b);
  if (left.length + right.length === 0) {
    return 0;
  }
  const diff = lineDiff(left.join('\n'), right.join('\n'));
  const common = diff.filter(line => line.kind === 'same').length;
  return (2 * common) / (left.length + right.length);
}

/** The similarity from which a chat code block offers "Apply to cell N". */
export const APPLY_SIMILARITY = 0.5;

/**
 * The cell a chat code block modifies: the active cell if alike enough, else the most alike
 * cell at or above {@link APPLY_SIMILARITY}; null when none is (or the code is identical).
 */
export function similarCell(
  cells: readonly ICellCode[],
  code: string,
  activeIndex = -1
): ICellCode | null {
  let best: ICellCode | null = null;
  let bestScore = APPLY_SIMILARITY;
  for (const cell of cells) {
    if (cell.source.trim() === code.trim()) {
      continue;
    }
    const score = lineSimilarity(cell.source, code);
    const bonus = cell.index === activeIndex ? 0.001 : 0;
    if (score + bonus >= bestScore + (best ? 0.0005 : 0)) {
      best = cell;
      bestScore = score + bonus;
    }
  }
  return best;
}
