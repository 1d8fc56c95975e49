/**
 * How the UI and the prompts name a cell: as JupyterLab shows it. A cell with an execution
 * count that no other cell of the notebook shows is "cell [4]", the `[4]:` beside it; any
 * other cell (never run, markdown, or a count shown twice after a restart) is named by its
 * place from the top, "the 5th cell". The server names cells the same way
 * (`chapyter_ext/context/cell_names.py`), both tested against `tests/vectors/cell_names.json`.
 * Pure.
 */

/** `n` as an English ordinal: 1st, 2nd, 3rd, 4th, 11th, 12th, 13th, 21st, 102nd. */
export function ordinal(n: number): string {
  const tens = n % 100;
  if (tens >= 11 && tens <= 13) {
    return `${n}th`;
  }
  const suffix = { 1: 'st', 2: 'nd', 3: 'rd' }[n % 10] ?? 'th';
  return `${n}${suffix}`;
}

/**
 * The cell at 1-based `position` whose prompt shows `prompt` (null: none, or not its own):
 * "cell [4]", else "the 5th cell".
 */
export function cellName(
  position: number,
  prompt: number | null = null
): string {
  return prompt === null ? `the ${ordinal(position)} cell` : `cell [${prompt}]`;
}

/**
 * The prompt of each cell that names it ({@link cellName}): its execution count when no other
 * cell shows the same one, else null.
 */
export function ownPrompts(
  counts: readonly (number | null | undefined)[]
): (number | null)[] {
  const seen = new Map<number, number>();
  for (const count of counts) {
    if (typeof count === 'number') {
      seen.set(count, (seen.get(count) ?? 0) + 1);
    }
  }
  return counts.map(count =>
    typeof count === 'number' && seen.get(count) === 1 ? count : null
  );
}

/** What {@link cellNameIn} reads of a notebook's cells. */
export interface INamedCell {
  /** "code", "markdown" or "raw". */
  readonly type: string;
  /** A code cell's execution count (absent on other cells). */
  readonly executionCount?: number | null;
}

/** The name of the cell at 0-based `index` among `cells` ({@link cellName}). */
export function cellNameIn(
  cells: readonly INamedCell[],
  index: number
): string {
  const counts = cells.map(cell =>
    cell.type === 'code' ? (cell.executionCount ?? null) : null
  );
  return cellName(index + 1, ownPrompts(counts)[index] ?? null);
}
