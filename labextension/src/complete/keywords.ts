/**
 * Keyword arguments of a suggestion, held against what their callees accept: a suggestion
 * whose call passes a keyword the callee does not take (`sales.sort_values(by_region=...)`)
 * is cut before the line holding it (a first line: no suggestion at all). The callees'
 * signatures come from the kernel (`kernelNames.ts`, `chapyter_ext.context.signatures`);
 * what cannot be read there is unknown, and kept. Pure: no DOM, no JupyterLab.
 */

/** What a callee accepts as keywords; null when unknown (the suggestion is kept). */
export type Accepted = { any: true } | { names: string[] } | null;

/** One keyword argument of the suggestion. */
export interface IKeywordUse {
  /** The dotted name called (`sales.sort_values`); null when not a plain dotted name. */
  callee: string | null;
  /** The keyword. */
  keyword: string;
  /** Where the keyword starts in the suggestion. */
  at: number;
}

/** A dotted name the kernel can look up statically (ASCII, as its reader accepts). */
const DOTTED = /^[A-Za-z_]\w*(?:\.[A-Za-z_]\w*){0,7}$/;
const NAME_CHAR = /\w/;
const STRING_PREFIX = /^[rRbBuUfF]{1,2}$/;
const NOT_CALLS = new Set(['def', 'class', 'lambda']);
const OPENERS = '([{';
const CLOSERS = ')]}';

interface IFrame {
  bracket: string;
  callee: string | null;
  /** In a lambda's parameters (until its `:`). */
  lambda: boolean;
}

/** Skip a string literal whose quote is at `i`; the index after it (or the text's end). */
function skipString(code: string, i: number): number {
  const quote = code[i];
  const triple = code.startsWith(quote.repeat(3), i);
  const close = triple ? quote.repeat(3) : quote;
  let j = i + close.length;
  while (j < code.length) {
    if (code[j] === '\\') {
      j += 2;
    } else if (code.startsWith(close, j)) {
      return j + close.length;
    } else if (!triple && code[j] === '\n') {
      return j;
    } else {
      j++;
    }
  }
  return code.length;
}

/** The dotted name that ends right before `end` in `code`, and what comes before it. */
function nameBefore(
  code: string,
  end: number
): { name: string; before: string } {
  let j = end;
  while (j > 0 && (code[j - 1] === ' ' || code[j - 1] === '\t')) {
    j--;
  }
  const stop = j;
  while (j > 0 && (NAME_CHAR.test(code[j - 1]) || code[j - 1] === '.')) {
    j--;
  }
  const name = code.slice(j, stop);
  let k = j;
  while (k > 0 && (code[k - 1] === ' ' || code[k - 1] === '\t')) {
    k--;
  }
  // The word before (`def`, `class`) or the character before (`)` of a call's result).
  let w = k;
  while (w > 0 && NAME_CHAR.test(code[w - 1])) {
    w--;
  }
  return { name, before: w < k ? code.slice(w, k) : (code[k - 1] ?? '') };
}

function calleeOf(code: string, paren: number): string | null | false {
  const { name, before } = nameBefore(code, paren);
  if (NOT_CALLS.has(before)) {
    return false; // a definition's parameters, not a call's arguments
  }
  if (!name || before === ')' || before === ']' || before === '.') {
    return null; // a call's result, a subscript: nothing to look up statically
  }
  return DOTTED.test(name) ? name : null;
}

/** What {@link scanKeywords} found. */
export interface IScan {
  /** The keyword arguments. */
  uses: IKeywordUse[];
  /** The dotted names of the calls still open at the end. */
  open: string[];
  /** Where a name that may still become a keyword ends the code (-1: none). */
  tail: number;
}

/**
 * The keyword arguments written at or after `start` in `code` (the cell before the cursor
 * and the suggestion), each with its callee; also the calls still open at `code`'s end.
 */
export function scanKeywords(code: string, start: number): IScan {
  const frames: IFrame[] = [];
  const uses: IKeywordUse[] = [];
  let tail = -1;
  let last = ''; // the last significant character outside names
  for (let i = 0; i < code.length;) {
    const c = code[i];
    if (c === '#') {
      const end = code.indexOf('\n', i);
      i = end < 0 ? code.length : end;
      continue;
    }
    if (c === '"' || c === "'") {
      i = skipString(code, i);
      last = 's';
      continue;
    }
    if (NAME_CHAR.test(c)) {
      let j = i;
      while (j < code.length && NAME_CHAR.test(code[j])) {
        j++;
      }
      const word = code.slice(i, j);
      if (STRING_PREFIX.test(word) && (code[j] === '"' || code[j] === "'")) {
        i = skipString(code, j); // a prefixed string: f"...", rb'...'
        last = 's';
        continue;
      }
      const frame = frames[frames.length - 1];
      if (frame && word === 'lambda') {
        frame.lambda = true;
      }
      let k = j;
      while (code[k] === ' ' || code[k] === '\t') {
        k++;
      }
      const argument =
        frame?.bracket === '(' &&
        !frame.lambda &&
        (last === '(' || last === ',');
      const isKeyword = argument && code[k] === '=' && code[k + 1] !== '=';
      if (argument && k >= code.length) {
        tail = i;
      }
      if (isKeyword && i >= start) {
        uses.push({ callee: frame.callee, keyword: word, at: i - start });
      }
      last = 'n';
      i = j;
      continue;
    }
    if (OPENERS.includes(c)) {
      const callee = c === '(' ? calleeOf(code, i) : null;
      frames.push({
        bracket: callee === false ? 'def' : c,
        callee: callee || null,
        lambda: false
      });
    } else if (CLOSERS.includes(c)) {
      frames.pop();
    } else if (c === ':' && frames.length && frames[frames.length - 1].lambda) {
      frames[frames.length - 1].lambda = false;
    }
    if (!/\s/.test(c)) {
      last = c;
    }
    i++;
  }
  const open = frames
    .filter(f => f.bracket === '(' && f.callee)
    .map(f => f.callee as string);
  return { uses, open, tail };
}

/** Names the cell itself binds: the kernel's value of those may be about to change. */
export function boundInCell(cell: string): Set<string> {
  const bound = new Set<string>();
  const patterns = [
    /\b(?:def|class|as|import|for|global|nonlocal)\s+([A-Za-z_]\w*)/g,
    /^[ \t]*([A-Za-z_]\w*)\s*(?::[^=\n]*)?=(?!=)/gm,
    /\b([A-Za-z_]\w*)\s*:=/g
  ];
  for (const pattern of patterns) {
    for (const match of cell.matchAll(pattern)) {
      bound.add(match[1]);
    }
  }
  return bound;
}

/** How much of a suggestion may be shown, given what is known of its callees. */
export interface IGateResult {
  /** Characters of the suggestion that may be shown now. */
  visible: number;
  /** Callees whose signature is needed before more can be shown. */
  pending: string[];
  /** A keyword the callee does not accept was found: the suggestion ends at `visible`. */
  rejected: string | null;
}

/**
 * Holds a growing suggestion back at its first keyword whose callee is not known yet, and
 * cuts it before the line of the first keyword its callee does not accept.
 */
export class KeywordGate {
  /**
   * @param prefix - The cell before the cursor.
   * @param suffix - The cell after the cursor.
   */
  constructor(
    private _prefix: string,
    private _suffix: string
  ) {}

  /** The calls open at the cursor: their signatures may be read before the suggestion comes. */
  openCallees(): string[] {
    const bound = boundInCell(this._prefix + this._suffix);
    return scanKeywords(this._prefix, this._prefix.length).open.filter(
      callee => !bound.has(callee.split('.')[0])
    );
  }

  /**
   * Judge `text` (the suggestion so far; `final` once it is whole) with `known` (a callee's
   * verdict, undefined while not read).
   */
  judge(
    text: string,
    known: (callee: string) => Accepted | undefined,
    final: boolean
  ): IGateResult {
    const code = this._prefix + text;
    const bound = boundInCell(code + this._suffix);
    const { uses, tail } = scanKeywords(code, this._prefix.length);
    const pending: string[] = [];
    let hold = text.length;
    if (!final && tail >= this._prefix.length) {
      hold = tail - this._prefix.length; // a name still growing may become a keyword
    }
    for (const use of uses) {
      const callee = use.callee;
      if (!callee || bound.has(callee.split('.')[0])) {
        continue;
      }
      const verdict = known(callee);
      if (verdict === undefined) {
        if (!pending.includes(callee)) {
          pending.push(callee);
        }
        hold = Math.min(hold, use.at);
        continue;
      }
      if (use.at >= hold || verdict === null || 'any' in verdict) {
        continue;
      }
      if (!verdict.names.includes(use.keyword)) {
        // Before the line's newline; a first line: nothing.
        const line = Math.max(text.lastIndexOf('\n', use.at - 1), 0);
        return {
          visible: Math.min(hold, line),
          pending: [],
          rejected: `${callee}(${use.keyword}=...)`
        };
      }
    }
    return { visible: hold, pending, rejected: null };
  }
}

/**
 * The callees' verdicts of one kernel, read in one request per batch and kept (a bounded
 * cache, oldest out first) until a cell runs there.
 */
export class KeywordCache {
  /**
   * @param _read - Reads the verdicts of `callees` in the kernel (null: it cannot tell).
   * @param _limit - Callees kept.
   */
  constructor(
    private _read: (
      callees: string[]
    ) => Promise<Record<string, Accepted> | null>,
    private _limit = 256
  ) {}

  /** The verdicts of `callees`: from the cache, the rest read in one request. */
  async get(callees: string[]): Promise<Map<string, Accepted>> {
    const missing = callees.filter(c => !this._entries.has(c));
    if (missing.length) {
      const reading = this._read(missing).then(
        found => found,
        () => null
      );
      for (const callee of missing) {
        this._entries.set(
          callee,
          reading.then(found => {
            if (!found || !(callee in found)) {
              this._entries.delete(callee); // not answered: ask again next time
              return null;
            }
            return found[callee];
          })
        );
      }
      while (this._entries.size > this._limit) {
        this._entries.delete(this._entries.keys().next().value as string);
      }
    }
    const result = new Map<string, Accepted>();
    for (const callee of callees) {
      const entry = this._entries.get(callee);
      result.set(callee, entry ? await entry : null);
    }
    return result;
  }

  /** A cell ran: what a name holds may have changed. */
  clear(): void {
    this._entries.clear();
  }

  /** How many callees are kept (for tests). */
  get size(): number {
    return this._entries.size;
  }

  private _entries = new Map<string, Promise<Accepted>>();
}
