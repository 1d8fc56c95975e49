/**
 * The chat input's popup menu, without DOM: which typed token opens it (`/` at the start of
 * the input, `@` at a word start), which items match what is typed (and in which order), and
 * the text once an item replaces the token. Pure.
 */

/** The token being typed that opened the menu. */
export interface IMenuTrigger {
  /** `/` (a slash command) or `@` (a mention). */
  char: '/' | '@';
  /** Offset of the trigger character in the text. */
  start: number;
  /** What is typed after it, up to the caret. */
  query: string;
}

/** One choice of the menu. */
export interface IMenuItem {
  /** Unique among the items shown. */
  id: string;
  /** What the row says, and what is matched against the query. */
  label: string;
  /** A second, dimmer line part: a type and shape, a description. */
  detail?: string;
  /** The text that replaces the typed token (the trigger character included). */
  insert: string;
  /** Keep the menu open after picking (a directory: its files are listed next). */
  keepOpen?: boolean;
}

/**
 * The trigger before `caret` in `text`, or null: `/` only as the first character of the
 * input (a command), `@` at the start or after whitespace; no whitespace in between.
 */
export function findTrigger(text: string, caret: number): IMenuTrigger | null {
  const before = text.slice(0, caret);
  const match = /(^|\s)([@/])(\S*)$/.exec(before);
  if (!match) {
    return null;
  }
  const char = match[2] as '/' | '@';
  const start = before.length - match[3].length - 1;
  if (char === '/' && start !== 0) {
    return null;
  }
  return { char, start, query: match[3] };
}

/**
 * The items that match `query` (case-insensitive), best first: the label starting with it,
 * then a word of it starting with it, then containing it; the given order within each.
 */
export function rankItems(
  items: readonly IMenuItem[],
  query: string,
  limit = 50
): IMenuItem[] {
  const q = query.toLowerCase();
  const scored: { item: IMenuItem; rank: number; index: number }[] = [];
  items.forEach((item, index) => {
    const label = item.label.toLowerCase();
    let rank = -1;
    if (label.startsWith(q)) {
      rank = 0;
    } else if (label.split(/[\s_./[\]-]+/).some(word => word.startsWith(q))) {
      rank = 1;
    } else if (label.includes(q)) {
      rank = 2;
    }
    if (rank >= 0) {
      scored.push({ item, rank, index });
    }
  });
  scored.sort((a, b) => a.rank - b.rank || a.index - b.index);
  return scored.slice(0, limit).map(entry => entry.item);
}

/**
 * `text` with the token of `trigger` (up to `caret`) replaced by `insert`, and a space after
 * it unless the menu stays open or one follows; the new text and caret.
 */
export function replaceToken(
  text: string,
  trigger: IMenuTrigger,
  caret: number,
  insert: string,
  keepOpen = false
): { text: string; caret: number } {
  const after = text.slice(caret);
  const space = keepOpen || after.startsWith(' ') ? '' : ' ';
  const head = text.slice(0, trigger.start) + insert + space;
  return { text: head + after, caret: head.length };
}

/** The next active row after pressing ArrowDown (+1) or ArrowUp (-1), wrapping around. */
export function moveActive(
  active: number,
  count: number,
  step: 1 | -1
): number {
  if (count <= 0) {
    return -1;
  }
  return (((active + step) % count) + count) % count;
}
