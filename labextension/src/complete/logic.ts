/**
 * Inline completion's pure parts: what a request carries, when to ask, the events of a
 * streamed suggestion, one request in flight per editor, and failures reported once. No DOM,
 * no JupyterLab: tested with jest.
 */

import type { IServerSentEvent } from '../common/sse';

/** The provider's identifier in JupyterLab's inline completer settings. */
export const PROVIDER_ID = '@chapyter-ext/inline-completion';

/** Characters of the cell sent before and after the cursor; cells above and their size. */
export const LIMITS = {
  prefixChars: 6000,
  suffixChars: 2000,
  cellsAbove: 10,
  cellsAboveChars: 8000
};

/** One variable of the kernel, as the chat's `describe_variables` summary gives it. */
export interface IVariable {
  /** Its name. */
  name: string;
  /** Its type's name. */
  type: string;
  /** A short summary (a DataFrame's columns, a list's length). */
  summary: string;
}

/** The body of `POST chapyter-ext/complete`. */
export interface ICompletionBody {
  /** The cell's text before the cursor. */
  prefix: string;
  /** The cell's text after the cursor. */
  suffix: string;
  /** Code of the cells above, nearest last. */
  cells_above: string[];
  /** The kernel's variables, or null when unknown. */
  variables: IVariable[] | null;
  /** The kernel's language. */
  language: string;
  /** Identifies the editor: the server cancels an older request with the same one. */
  editor: string;
}

/** What the request is made of, as the plugin reads it from the notebook. */
export interface IRequestParts {
  /** The active cell's text. */
  text: string;
  /** The cursor's offset in it. */
  offset: number;
  /** The code cells above, in notebook order. */
  cellsAbove: string[];
  /** The kernel's variables, or null. */
  variables: IVariable[] | null;
  /** The kernel's language ('' when unknown). */
  language: string;
  /** The editor's id. */
  editor: string;
}

/** The request body: the text around the cursor and the nearest cells above, bounded. */
export function composeRequest(
  parts: IRequestParts,
  limits = LIMITS
): ICompletionBody {
  const offset = Math.max(0, Math.min(parts.offset, parts.text.length));
  const cells: string[] = [];
  let used = 0;
  for (let i = parts.cellsAbove.length - 1; i >= 0; i--) {
    const cell = parts.cellsAbove[i];
    if (!cell.trim()) {
      continue;
    }
    if (cells.length >= limits.cellsAbove) {
      break;
    }
    if (used + cell.length > limits.cellsAboveChars) {
      if (!cells.length) {
        cells.unshift(cell.slice(-limits.cellsAboveChars));
      }
      break;
    }
    cells.unshift(cell);
    used += cell.length;
  }
  return {
    prefix: parts.text.slice(Math.max(0, offset - limits.prefixChars), offset),
    suffix: parts.text.slice(offset, offset + limits.suffixChars),
    cells_above: cells,
    variables: parts.variables,
    language: parts.language,
    editor: parts.editor
  };
}

/** How suggestions are asked for: as the user types, or only on Alt+\ (on demand). */
export type TriggerMode = 'automatic' | 'onDemand';

/** Whether to ask the server: an automatic trigger is skipped in on-demand mode. */
export function shouldRequest(automatic: boolean, mode: TriggerMode): boolean {
  return !automatic || mode !== 'onDemand';
}

/** One event of a streamed suggestion. */
export type CompletionEvent =
  | { type: 'token'; text: string }
  | { type: 'done'; text: string }
  | { type: 'error'; kind: string; message: string };

/** The typed event of a server-sent event; null for events this client does not know. */
export function parseCompletionEvent(
  event: IServerSentEvent
): CompletionEvent | null {
  let data: Record<string, unknown>;
  try {
    data = JSON.parse(event.data);
  } catch {
    return {
      type: 'error',
      kind: 'bad_response',
      message: 'The server sent an event that is not JSON.'
    };
  }
  switch (event.event) {
    case 'token':
      return { type: 'token', text: String(data.text ?? '') };
    case 'done':
      return { type: 'done', text: String(data.text ?? '') };
    case 'error':
      return {
        type: 'error',
        kind: String(data.kind ?? 'error'),
        message: String(data.message ?? 'Inline completion failed.')
      };
    default:
      return null;
  }
}

/**
 * At most one request in flight per editor: starting one aborts the one before it.
 */
export class InFlight {
  /** A signal for a new request of `editor`, aborting the one before it. */
  start(editor: string): AbortController {
    this.abort(editor);
    const controller = new AbortController();
    this._controllers.set(editor, controller);
    return controller;
  }

  /** Abort the request of `editor`, if any (the user typed on). */
  abort(editor: string): boolean {
    const controller = this._controllers.get(editor);
    this._controllers.delete(editor);
    if (controller && !controller.signal.aborted) {
      controller.abort();
      return true;
    }
    return false;
  }

  /** The request of `editor` ended on its own. */
  finish(editor: string, controller: AbortController): void {
    if (this._controllers.get(editor) === controller) {
      this._controllers.delete(editor);
    }
  }

  /** How many requests are in flight. */
  get size(): number {
    return this._controllers.size;
  }

  private _controllers = new Map<string, AbortController>();
}

/** Whether completion works, as a status item shows it. */
export interface ICompletionStatus {
  /** True while the last request failed. */
  failing: boolean;
  /** The last failure's one line ('' when working). */
  message: string;
}

/** The error kind of a server whose administrator turned inline completion off. */
export const DISABLED = 'disabled';

/**
 * Failures of inline completion: silent in the editor, logged once per streak of one kind,
 * and a status that says so until a request succeeds.
 */
export class FailureTracker {
  /**
   * @param log - Where the one line goes (console.warn in the plugin).
   * @param onChange - Called when the status changes.
   */
  constructor(
    private _log: (line: string) => void,
    private _onChange: (status: ICompletionStatus) => void = () => undefined
  ) {}

  /** The current status. */
  get status(): ICompletionStatus {
    return { failing: this._kind !== null, message: this._message };
  }

  /** Whether the server said inline completion is turned off (kind "disabled"): stop asking. */
  get disabled(): boolean {
    return this._kind === DISABLED;
  }

  /** A request failed; logged only when the kind differs from the last failure's. */
  failed(kind: string, message: string): void {
    if (this._kind !== kind) {
      this._log(`chapyter-ext: inline completion failed (${kind}): ${message}`);
    }
    const changed = this._kind !== kind || this._message !== message;
    this._kind = kind;
    this._message = message;
    if (changed) {
      this._onChange(this.status);
    }
  }

  /** A request succeeded. */
  succeeded(): void {
    if (this._kind !== null) {
      this._kind = null;
      this._message = '';
      this._onChange(this.status);
    }
  }

  private _kind: string | null = null;
  private _message = '';
}
