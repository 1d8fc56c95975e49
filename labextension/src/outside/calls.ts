/**
 * An outside agent's calls carried out in this page, without DOM: each `call` is answered in
 * the notebook it names (or `not_open`), reads at once, acting calls after the server's
 * decision ("run"; "try": a trial in the kernel judged by the server, then run under its
 * guard or ask; "ask": a card in the AI Chat), with a kernel snapshot before every run for
 * `undo`. The notebooks, the server and the cards are injected, so it is tested in node.
 */

import type { TrialOutcome } from '../common/kernelTrial';
import type { IRestoreAnswer, ITakeAnswer } from '../common/kernelUndo';
import {
  approvalTitle,
  clientName,
  IOutsideCall,
  IOutsideResultBody,
  IOutsideTrialDecision,
  IReadCell,
  notOpenMessage,
  resultBody,
  stringArg
} from './wire';

/** A ran cell: its result, or why it did not run. */
export type RunOutcome =
  | { ran: true; result: { [key: string]: unknown } }
  | { ran: false; reason: string };

/** One open notebook as an outside call uses it. */
export interface IOutsideNotebook {
  readonly path: string;
  /** Why code cannot run now (no kernel, closed), or null. */
  cannotRun(): string | null;
  /** The kernel's name ('' without one) and the number of cells. */
  describe(): { path: string; kernel: string; cells: number };
  cells(start: unknown, end: unknown): IReadCell[];
  /** The chat's variable summaries; null when the kernel cannot tell. */
  variables(names?: string[]): Promise<{ [key: string]: unknown }[] | null>;
  /** The cell's source and its name as JupyterLab shows it, or null when there is none. */
  source(cellId: string): { source: string; name: string } | null;
  /** Insert a code cell holding `code` below `belowId` (or at the end); its id. */
  insert(code: string, client: string, callId: string, belowId: string): string;
  setSource(cellId: string, source: string): void;
  run(cellId: string): Promise<RunOutcome>;
  remove(cellIds: string[]): number;
  trial(expression: string): Promise<TrialOutcome>;
  arm(guard: string): Promise<boolean>;
  interrupt(): Promise<void>;
  take(turn: string): Promise<ITakeAnswer>;
  restore(turn: string): Promise<IRestoreAnswer>;
}

/** The notebooks open in this page. */
export interface IOutsideNotebooks {
  find(path: string): IOutsideNotebook | null;
  all(): IOutsideNotebook[];
}

/** The server's routes the page answers through. */
export interface IOutsideClient {
  trial(
    body: { call_id: string } & TrialOutcome
  ): Promise<IOutsideTrialDecision>;
  result(body: IOutsideResultBody): Promise<void>;
  stop(body: { client?: string }): Promise<void>;
}

/** What the card shows and asks. */
export interface IApprovalRequest {
  call: IOutsideCall;
  title: string;
  /** The exact code that would run, or null. */
  code: string | null;
  /** An edit: the cell's source now and after. */
  diff: { before: string; after: string } | null;
  reasons: string[];
  concerns: string[];
}

/** A card in the chat: the user's answer, then what became of the call. */
export interface IApprovalCard {
  /** true: approved; false: rejected. */
  readonly answer: Promise<boolean>;
  /** The call runs (the card offers Stop). */
  running(): void;
  /** The call ended: one line. */
  finish(line: string): void;
  /** The server gave up on the call: the card goes. */
  cancel(reason: string): void;
}

/** Shows cards; `stop` is what the card's Stop does. */
export type CardFactory = (
  request: IApprovalRequest,
  stop: () => void
) => IApprovalCard;

/** One run an outside agent made, for `undo`. */
interface IOutsideRun {
  turn: string;
  cellIds: string[];
  snapshot: boolean;
}

/** A call under way. */
interface IActiveCall {
  call: IOutsideCall;
  card: IApprovalCard | null;
  notebook: IOutsideNotebook | null;
  cancelled: boolean;
  running: boolean;
}

const message = (error: unknown): string =>
  String((error as Error)?.message ?? error).split('\n')[0];

/** Carries out the calls of every outside agent in this page. */
export class OutsideCalls {
  /** Over the page's notebooks, the server and the chat's cards. */
  constructor(
    private _notebooks: IOutsideNotebooks,
    private _client: IOutsideClient,
    private _cards: CardFactory
  ) {}

  /** The calls under way, by id. */
  get active(): ReadonlyMap<string, IActiveCall> {
    return this._active;
  }

  /** Carry out `call` and post its result (never rejects). */
  async handle(call: IOutsideCall): Promise<IOutsideResultBody | null> {
    const entry: IActiveCall = {
      call,
      card: null,
      notebook: null,
      cancelled: false,
      running: false
    };
    this._active.set(call.callId, entry);
    let body: IOutsideResultBody;
    try {
      body = await this._carryOut(entry);
    } catch (error) {
      body = resultBody(call.callId, 'error', null, message(error));
    } finally {
      this._active.delete(call.callId);
    }
    if (entry.cancelled) {
      return null;
    }
    entry.card?.finish(finishLine(body));
    try {
      await this._client.result(body);
    } catch (error) {
      console.warn('chapyter-ext: could not send an outside result', error);
    }
    return body;
  }

  /** The server gave up on a call: its card goes, a running cell is interrupted. */
  cancel(callId: string, reason: string): boolean {
    const entry = this._active.get(callId);
    if (!entry) {
      return false;
    }
    entry.cancelled = true;
    entry.card?.cancel(reason);
    if (entry.running) {
      void entry.notebook?.interrupt().catch(() => undefined);
    }
    return true;
  }

  /** Stop in the chat: the client's running call ends (the server ends its wait). */
  stop(callId: string): void {
    const entry = this._active.get(callId);
    if (!entry) {
      return;
    }
    if (entry.running) {
      void entry.notebook?.interrupt().catch(() => undefined);
    }
    void this._client.stop({ client: entry.call.client }).catch(error => {
      console.warn('chapyter-ext: could not stop an outside call', error);
    });
  }

  private async _carryOut(entry: IActiveCall): Promise<IOutsideResultBody> {
    const call = entry.call;
    const id = call.callId;
    if (call.tool === 'list_notebooks') {
      const notebooks = this._notebooks.all().map(n => n.describe());
      return resultBody(id, 'ok', { notebooks });
    }
    const notebook = this._notebooks.find(call.notebook);
    if (!notebook) {
      return resultBody(id, 'not_open', null, notOpenMessage(call.notebook));
    }
    entry.notebook = notebook;
    switch (call.tool) {
      case 'read_cells':
        return resultBody(id, 'ok', {
          cells: notebook.cells(call.arguments.start, call.arguments.end)
        });
      case 'list_variables':
      case 'describe_variable':
        return this._variables(call, notebook);
      case 'run_code':
      case 'run_cell':
      case 'edit_cell':
      case 'undo':
        return this._act(entry, notebook);
      default:
        return resultBody(
          id,
          'error',
          null,
          `This page cannot carry out "${call.tool}": reload it.`
        );
    }
  }

  private async _variables(
    call: IOutsideCall,
    notebook: IOutsideNotebook
  ): Promise<IOutsideResultBody> {
    const name = stringArg(call, 'name');
    const found = await notebook.variables(
      call.tool === 'describe_variable' ? [name] : undefined
    );
    if (found === null) {
      return resultBody(
        call.callId,
        'error',
        null,
        'The kernel could not answer (no kernel, or no chapyter-ext in its environment).'
      );
    }
    if (call.tool === 'list_variables') {
      return resultBody(call.callId, 'ok', { variables: found });
    }
    const variable = found.find(v => v.name === name);
    return variable
      ? resultBody(call.callId, 'ok', { variable })
      : resultBody(
          call.callId,
          'error',
          null,
          `No variable ${name} in the kernel.`
        );
  }

  private async _act(
    entry: IActiveCall,
    notebook: IOutsideNotebook
  ): Promise<IOutsideResultBody> {
    const call = entry.call;
    const id = call.callId;
    const request = this._request(call, notebook);
    if (typeof request === 'string') {
      return resultBody(id, 'error', null, request);
    }
    const runs = call.tool === 'run_code' || call.tool === 'run_cell';
    const why = runs || call.tool === 'undo' ? notebook.cannotRun() : null;
    if (why) {
      return resultBody(id, 'error', null, why);
    }
    let ask = call.decision !== 'run';
    if (call.decision === 'try' && call.trial && runs) {
      const decided = await this._try(call, notebook);
      if (entry.cancelled) {
        return resultBody(id, 'refused', null, 'Cancelled.');
      }
      request.reasons = decided.reasons.length
        ? decided.reasons
        : request.reasons;
      request.concerns = decided.concerns;
      ask = decided.needs_approval;
      if (!ask && decided.guard && !(await notebook.arm(decided.guard))) {
        ask = true;
        request.concerns = [
          ...request.concerns,
          'the kernel could not arm the guard'
        ];
      }
    }
    if (ask) {
      entry.card = this._cards(request, () => this.stop(id));
      const approved = await entry.card.answer;
      if (entry.cancelled) {
        return resultBody(id, 'refused', null, 'Cancelled.');
      }
      if (!approved) {
        return resultBody(
          id,
          'refused',
          null,
          'The user rejected it in JupyterLab.'
        );
      }
    }
    entry.running = true;
    entry.card?.running();
    try {
      return await this._perform(call, notebook);
    } finally {
      entry.running = false;
    }
  }

  /** What the card shows for `call`, or why the call cannot be carried out. */
  private _request(
    call: IOutsideCall,
    notebook: IOutsideNotebook
  ): IApprovalRequest | string {
    const base = {
      call,
      code: null,
      diff: null,
      reasons: call.reasons,
      concerns: []
    };
    switch (call.tool) {
      case 'run_code': {
        const code = call.code ?? stringArg(call, 'code');
        const below = stringArg(call, 'below_cell_id');
        if (below && !notebook.source(below)) {
          return `No cell ${below} in ${notebook.path}.`;
        }
        return { ...base, title: approvalTitle(call), code };
      }
      case 'run_cell':
      case 'edit_cell': {
        const cell = notebook.source(stringArg(call, 'cell_id'));
        if (!cell) {
          return `No cell ${stringArg(call, 'cell_id')} in ${notebook.path}.`;
        }
        if (
          call.tool === 'run_cell' &&
          call.code !== null &&
          call.code !== cell.source
        ) {
          // What runs must be what the server decided on (and the card shows).
          return `The cell ${cell.name} changed since it was read: call run_cell again.`;
        }
        const title = approvalTitle(call, cell.name);
        return call.tool === 'run_cell'
          ? { ...base, title, code: cell.source }
          : {
              ...base,
              title,
              diff: { before: cell.source, after: editedSource(call) }
            };
      }
      default: {
        const last = this._runs(notebook).slice(-1)[0];
        if (!last) {
          return `${clientName(call.client)} has nothing to undo in ${notebook.path}.`;
        }
        return { ...base, title: approvalTitle(call) };
      }
    }
  }

  private async _try(
    call: IOutsideCall,
    notebook: IOutsideNotebook
  ): Promise<IOutsideTrialDecision> {
    let outcome: TrialOutcome;
    try {
      outcome = await notebook.trial(call.trial!);
    } catch (error) {
      outcome = { failure: { ename: 'Error', evalue: message(error) } };
    }
    try {
      return await this._client.trial({ call_id: call.callId, ...outcome });
    } catch (error) {
      return {
        needs_approval: true,
        reasons: [],
        concerns: [`The trial could not be judged: ${message(error)}`],
        preview: [],
        guard: null
      };
    }
  }

  private async _perform(
    call: IOutsideCall,
    notebook: IOutsideNotebook
  ): Promise<IOutsideResultBody> {
    const id = call.callId;
    const cellId = stringArg(call, 'cell_id');
    switch (call.tool) {
      case 'edit_cell': {
        const source = editedSource(call);
        notebook.setSource(cellId, source);
        return resultBody(id, 'ok', { cell_id: cellId, source });
      }
      case 'undo':
        return this._undo(call, notebook);
      default: {
        const run: IOutsideRun = {
          turn: `outside-${id}`,
          cellIds: [],
          snapshot: false
        };
        run.snapshot = (await notebook.take(run.turn)).ok;
        let target = cellId;
        if (call.tool === 'run_code') {
          const code = call.code ?? stringArg(call, 'code');
          target = notebook.insert(
            code,
            call.client,
            id,
            stringArg(call, 'below_cell_id')
          );
          run.cellIds.push(target);
        }
        this._runs(notebook).push(run);
        const outcome = await notebook.run(target);
        return outcome.ran
          ? resultBody(id, 'ok', outcome.result)
          : resultBody(id, 'error', { cell_id: target }, outcome.reason);
      }
    }
  }

  private async _undo(
    call: IOutsideCall,
    notebook: IOutsideNotebook
  ): Promise<IOutsideResultBody> {
    const run = this._runs(notebook).pop()!;
    const removed = notebook.remove(run.cellIds);
    const restored = run.snapshot ? await notebook.restore(run.turn) : null;
    const line = restored
      ? restored.line
      : 'The variables stay as they are: no snapshot was kept.';
    return resultBody(
      call.callId,
      'ok',
      {
        cells_removed: removed,
        kernel_restored: restored?.ok ?? false,
        restored: restored?.restored ?? [],
        removed: restored?.removed ?? [],
        line
      },
      `Removed ${removed} cell(s). ${line}`
    );
  }

  private _runs(notebook: IOutsideNotebook): IOutsideRun[] {
    let runs = this._history.get(notebook.path);
    if (!runs) {
      runs = [];
      this._history.set(notebook.path, runs);
    }
    return runs;
  }

  private _active = new Map<string, IActiveCall>();
  private _history = new Map<string, IOutsideRun[]>();
}

/** The source an edit puts in the cell: what the server decided on. */
function editedSource(call: IOutsideCall): string {
  return call.code ?? stringArg(call, 'source');
}

/** The card's last line for a result. */
export function finishLine(body: IOutsideResultBody): string {
  switch (body.status) {
    case 'ok':
      return body.message || 'Done.';
    case 'refused':
      return body.message || 'Rejected.';
    default:
      return body.message || 'It did not work.';
  }
}
