/**
 * What a chat answer or agent turn used, as the server reports it (`usage` of a `done` event
 * and of stored messages; the history's per-notebook total): token counts, and the cost where
 * the administrator priced the model (`Chapyter.prices`, USD).
 */

/** Tokens used, and their cost when known. */
export interface IUsage {
  /** Tokens sent (prompt and context). */
  prompt_tokens: number;
  /** Tokens of the answer. */
  completion_tokens: number;
  /** Both. */
  total_tokens: number;
  /** USD, when the model has a price. */
  cost?: number;
}

function count(value: unknown): number | null {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0
    ? value
    : null;
}

/** The usage in `value` (wire or history form), or undefined when it is missing or unreadable. */
export function parseUsage(value: unknown): IUsage | undefined {
  if (!value || typeof value !== 'object' || Array.isArray(value)) {
    return undefined;
  }
  const v = value as { [key: string]: unknown };
  const prompt = count(v.prompt_tokens) ?? 0;
  const completion = count(v.completion_tokens) ?? 0;
  const total = count(v.total_tokens) ?? prompt + completion;
  if (!total) {
    return undefined;
  }
  const usage: IUsage = {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: total
  };
  if (typeof v.cost === 'number' && Number.isFinite(v.cost) && v.cost >= 0) {
    usage.cost = v.cost;
  }
  return usage;
}

/** The sum of two usages (either may be absent); the cost sums those that have one. */
export function addUsage(
  a: IUsage | null | undefined,
  b: IUsage | null | undefined
): IUsage | null {
  if (!a || !b) {
    return a ?? b ?? null;
  }
  const sum: IUsage = {
    prompt_tokens: a.prompt_tokens + b.prompt_tokens,
    completion_tokens: a.completion_tokens + b.completion_tokens,
    total_tokens: a.total_tokens + b.total_tokens
  };
  if (a.cost !== undefined || b.cost !== undefined) {
    sum.cost = (a.cost ?? 0) + (b.cost ?? 0);
  }
  return sum;
}

/** One short line, e.g. "1,234 tokens (1,200 in, 34 out), $0.0012". */
export function usageText(usage: IUsage): string {
  const n = (value: number) => value.toLocaleString('en-US');
  const tokens = `${n(usage.total_tokens)} tokens (${n(usage.prompt_tokens)} in, ${n(usage.completion_tokens)} out)`;
  return usage.cost === undefined
    ? tokens
    : `${tokens}, $${usage.cost.toFixed(4)}`;
}
