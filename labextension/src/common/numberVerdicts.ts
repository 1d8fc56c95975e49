/**
 * The server's checked numbers of an agent answer (`chapyter_ext.numbers`): each number of the
 * final answer, found or not in what the turn saw. Read from the agent's `done` event and from
 * a stored message the same way; malformed verdicts are dropped (a mark is never worth an
 * error).
 */

/** Where a found number was seen. */
export interface INumberSource {
  /** "output" (a cell's output), "variable" (a summary sent as context) or "tool". */
  kind: string;
  /** How a person finds it again: "cell [4] output", "df summary". */
  label: string;
  /** The line around the number there. */
  excerpt: string;
}

/** The verdict on one number of an answer. */
export interface INumberVerdict {
  /** The number as written in the answer's Markdown. */
  text: string;
  /** Where it starts in the Markdown (a Python index: code points). */
  start: number;
  /** Where it ends. */
  end: number;
  /** The value it states (a percent as written). */
  value: number;
  /** found, not_found (not found in this turn's outputs) or trivial (left unmarked). */
  status: 'found' | 'not_found' | 'trivial';
  /** Found: up to three sources. */
  where: INumberSource[];
}

const STATUSES = ['found', 'not_found', 'trivial'];

function source(value: unknown): INumberSource | null {
  if (!value || typeof value !== 'object') {
    return null;
  }
  const v = value as { [key: string]: unknown };
  if (typeof v.label !== 'string') {
    return null;
  }
  return {
    kind: typeof v.kind === 'string' ? v.kind : '',
    label: v.label,
    excerpt: typeof v.excerpt === 'string' ? v.excerpt : ''
  };
}

/** The readable verdicts of `value` (a `done` event's or a stored message's `numbers`). */
export function numberVerdicts(value: unknown): INumberVerdict[] {
  if (!Array.isArray(value)) {
    return [];
  }
  const verdicts: INumberVerdict[] = [];
  for (const item of value) {
    if (!item || typeof item !== 'object') {
      continue;
    }
    const v = item as { [key: string]: unknown };
    if (
      typeof v.text !== 'string' ||
      !v.text ||
      typeof v.start !== 'number' ||
      typeof v.end !== 'number' ||
      !STATUSES.includes(v.status as string)
    ) {
      continue;
    }
    const where = Array.isArray(v.where) ? v.where : [];
    verdicts.push({
      text: v.text,
      start: v.start,
      end: v.end,
      value: typeof v.value === 'number' ? v.value : 0,
      status: v.status as INumberVerdict['status'],
      where: where
        .map(source)
        .filter((s): s is INumberSource => s !== null)
        .slice(0, 3)
    });
  }
  return verdicts;
}
