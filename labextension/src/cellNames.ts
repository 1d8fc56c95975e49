/**
 * How the UI names a cell: by its place in the notebook as an ordinal ("the 5th cell"), so
 * it is never taken for the execution count JupyterLab shows beside it (`[15]`). Pure.
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

/** The cell at 1-based `position`: "the 5th cell". */
export function cellName(position: number): string {
  return `the ${ordinal(position)} cell`;
}
