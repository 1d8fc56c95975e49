/**
 * A line diff of two texts (longest common subsequence of lines), as Fix's review and an
 * outside agent's edit show it.
 */

/** One line of a diff: kept, removed (old only) or added (new only). */
export interface IDiffLine {
  /** "same", "removed" or "added". */
  kind: 'same' | 'removed' | 'added';
  /** The line's text, without its newline. */
  text: string;
}

function splitLines(text: string): string[] {
  return text === '' ? [] : text.replace(/\n$/, '').split('\n');
}

/** A line diff of `before` and `after` (longest common subsequence of lines). */
export function lineDiff(before: string, after: string): IDiffLine[] {
  const a = splitLines(before);
  const b = splitLines(after);
  const rows = a.length + 1;
  const cols = b.length + 1;
  // lcs[i][j]: length of the LCS of a[i:] and b[j:].
  const lcs: number[][] = Array.from({ length: rows }, () =>
    new Array<number>(cols).fill(0)
  );
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length - 1; j >= 0; j--) {
      lcs[i][j] =
        a[i] === b[j]
          ? lcs[i + 1][j + 1] + 1
          : Math.max(lcs[i + 1][j], lcs[i][j + 1]);
    }
  }
  const out: IDiffLine[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    if (a[i] === b[j]) {
      out.push({ kind: 'same', text: a[i] });
      i++;
      j++;
    } else if (lcs[i + 1][j] >= lcs[i][j + 1]) {
      out.push({ kind: 'removed', text: a[i++] });
    } else {
      out.push({ kind: 'added', text: b[j++] });
    }
  }
  while (i < a.length) {
    out.push({ kind: 'removed', text: a[i++] });
  }
  while (j < b.length) {
    out.push({ kind: 'added', text: b[j++] });
  }
  return out;
}
