/**
 * Undo that restores the kernel, from the browser: the four entry points of
 * `chapyter_ext.snapshot.kernel` (take, preview, restore, release), called as user expressions
 * of a silent request through the notebook's own kernel connection, their answers read back
 * and checked. The agent's turns and Fix's **Accept and run** use the same calls. The
 * expression strings are those of the kernel module's `expression()` helper.
 */

/** The kernel module holding the entry points. */
export const UNDO_MODULE = 'chapyter_ext.snapshot.kernel';

/** Why a kernel gives no answer at all (no chapyter-ext in its environment, an old one). */
export const NO_UNDO_IN_KERNEL =
  "the kernel's environment has no chapyter-ext, or an older one";

/** A name that will not come back, and why. */
export interface ICannotRestore {
  /** The variable. */
  name: string;
  /** One line. */
  why: string;
}

/** What `take` answered: whether a snapshot was kept, else why not. */
export interface ITakeAnswer {
  /** Whether the kernel keeps the state from before the step. */
  ok: boolean;
  /** One line when it does not. */
  why: string | null;
}

/** What Undo would do, before it is clicked (`preview`). */
export interface IUndoPreview {
  /** Whether a snapshot of that point is kept. */
  available: boolean;
  /** Why not, when it is not. */
  why: string | null;
  /** Names changed, rebound or deleted since, that will come back. */
  restore: string[];
  /** Names created since, that will be removed. */
  remove: string[];
  /** What will not come back. */
  cannot: ICannotRestore[];
  /** One line: what Undo will and will not restore. */
  line: string;
}

/** What `restore` did. */
export interface IRestoreAnswer {
  /** Whether the kernel's variables were put back. */
  ok: boolean;
  /** Names put back. */
  restored: string[];
  /** Names removed. */
  removed: string[];
  /** What did not come back. */
  cannot: ICannotRestore[];
  /** One line: what was and was not restored. */
  line: string;
}

/**
 * `text` as a Python string literal of the same value: Python's own `repr` for printable
 * ASCII (so ids come out exactly as the kernel module's `expression()` writes them),
 * escapes for everything else.
 */
export function pythonString(text: string): string {
  const quote = text.includes("'") && !text.includes('"') ? '"' : "'";
  let out = quote;
  for (const char of text) {
    const code = char.codePointAt(0)!;
    if (char === '\\' || char === quote) {
      out += `\\${char}`;
    } else if (char === '\n') {
      out += '\\n';
    } else if (char === '\r') {
      out += '\\r';
    } else if (char === '\t') {
      out += '\\t';
    } else if (code >= 0x20 && code < 0x7f) {
      out += char;
    } else if (code < 0x100) {
      out += `\\x${code.toString(16).padStart(2, '0')}`;
    } else if (code < 0x10000) {
      out += `\\u${code.toString(16).padStart(4, '0')}`;
    } else {
      out += `\\U${code.toString(16).padStart(8, '0')}`;
    }
  }
  return out + quote;
}

/** The user expression calling `fn` of the kernel module with the shell and `args`. */
export function undoExpression(
  fn: 'take' | 'preview' | 'restore' | 'release',
  turn: string,
  step?: number
): string {
  const args = [pythonString(turn)];
  if (step !== undefined) {
    args.push(String(Math.max(0, Math.floor(step))));
  }
  return (
    `__import__('${UNDO_MODULE}', fromlist=['${fn}'])` +
    `.${fn}(get_ipython(), ${args.join(', ')})`
  );
}

/** Reads one expression's JSON value silently; null when the kernel cannot tell. */
export type KernelJSONRead = (expression: string) => Promise<unknown>;

function strings(value: unknown): string[] {
  return Array.isArray(value)
    ? value.filter((v): v is string => typeof v === 'string')
    : [];
}

function cannotList(value: unknown): ICannotRestore[] {
  return Array.isArray(value)
    ? value
        .filter(v => v && typeof v === 'object' && typeof v.name === 'string')
        .map(v => ({ name: String(v.name), why: String(v.why ?? '') }))
    : [];
}

function record(value: unknown): { [key: string]: unknown } | null {
  return value && typeof value === 'object' && !Array.isArray(value)
    ? (value as { [key: string]: unknown })
    : null;
}

function text(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

/** `take`'s answer checked (anything else: no snapshot, and why). */
export function takeAnswer(value: unknown): ITakeAnswer {
  const answer = record(value);
  if (!answer || typeof answer.ok !== 'boolean') {
    return { ok: false, why: NO_UNDO_IN_KERNEL };
  }
  return answer.ok
    ? { ok: true, why: null }
    : { ok: false, why: text(answer.why) || 'no reason given' };
}

/** `preview`'s answer checked. */
export function previewAnswer(value: unknown): IUndoPreview {
  const answer = record(value);
  if (!answer || typeof answer.available !== 'boolean') {
    return {
      available: false,
      why: NO_UNDO_IN_KERNEL,
      restore: [],
      remove: [],
      cannot: [],
      line: `Undo removes the cells only: ${NO_UNDO_IN_KERNEL}.`
    };
  }
  const why = text(answer.why) || null;
  const said = text(answer.line);
  return {
    available: answer.available,
    why,
    restore: strings(answer.restore),
    remove: strings(answer.remove),
    cannot: cannotList(answer.cannot),
    line: answer.available
      ? said || 'Undo restores the variables as they were.'
      : `Undo removes the cells only: ${(why || said || 'no snapshot').replace(/\.$/, '')}.`
  };
}

/** `restore`'s answer checked. */
export function restoreAnswer(value: unknown): IRestoreAnswer {
  const answer = record(value);
  if (!answer || typeof answer.ok !== 'boolean') {
    return {
      ok: false,
      restored: [],
      removed: [],
      cannot: [],
      line: `The variables were not restored: ${NO_UNDO_IN_KERNEL}.`
    };
  }
  return {
    ok: answer.ok,
    restored: strings(answer.restored),
    removed: strings(answer.removed),
    cannot: cannotList(answer.cannot),
    line:
      text(answer.line) ||
      (answer.ok
        ? 'The variables are as they were.'
        : 'The variables were not restored.')
  };
}

/** The kernel's snapshots over one way of reading it (a kernel connection, a fake). */
export class KernelUndo {
  /** Call the entry points through `read`. */
  constructor(private _read: KernelJSONRead) {}

  /** Keep the state from before step `step` of `turn`. */
  async take(turn: string, step: number): Promise<ITakeAnswer> {
    return takeAnswer(await this._ask(undoExpression('take', turn, step)));
  }

  /** What undoing to before step `step` of `turn` would and would not restore. */
  async preview(turn: string, step: number): Promise<IUndoPreview> {
    return previewAnswer(
      await this._ask(undoExpression('preview', turn, step))
    );
  }

  /** Put the variables back as they were before step `step` of `turn`. */
  async restore(turn: string, step: number): Promise<IRestoreAnswer> {
    return restoreAnswer(
      await this._ask(undoExpression('restore', turn, step))
    );
  }

  /** Drop the snapshots of `turn`. */
  async release(turn: string): Promise<void> {
    await this._ask(undoExpression('release', turn));
  }

  private async _ask(expression: string): Promise<unknown> {
    try {
      return await this._read(expression);
    } catch {
      return null; // no kernel, a closed connection: the same as no answer
    }
  }
}
