/**
 * Agent mode as the chat sees it ({@link IChatTurnHook}): whether messages go as agent turns,
 * with which approval policy, and the live {@link AgentTurn} of each reply (for the step
 * views' Run / Edit / Skip and "Undo this turn"). No DOM: the notebook side is injected.
 */

import { ISignal, Signal } from '@lumino/signaling';

import type { ChatEvent } from '../common/events';
import type { IChatMessage, IChatRequest, IChatTurnHook } from '../chat/tokens';
import { IRestoreAnswer, IUndoPreview, KernelUndo } from '../common/kernelUndo';
import { AgentTurn } from './runner';
import { TurnSnapshots } from './snapshots';
import {
  AgentPolicy,
  Decision,
  IAgentClient,
  INotebookDriver,
  isAgentPolicy,
  looserThan
} from './tokens';

/** Options of {@link AgentController}. */
export interface IAgentControllerOptions {
  /** The server. */
  client: IAgentClient;
  /** The driver of a notebook (by path), or null when it is not open. */
  notebook: (path: string) => INotebookDriver | null;
  /** The model id and endpoint host of a model name, for the cells' provenance. */
  describeModel?: (name: string) => { model: string; endpoint?: string };
}

/** Agent mode: the toggle, the policy, and the turns. */
export class AgentController implements IChatTurnHook {
  /** Control agent turns over a client and the notebooks. */
  constructor(private _options: IAgentControllerOptions) {}

  /** The toggle or the policy changed. */
  get changed(): ISignal<this, void> {
    return this._changed;
  }

  /** Whether messages go as agent turns (the panel's Agent toggle). */
  get enabled(): boolean {
    return this._enabled;
  }
  set enabled(value: boolean) {
    if (value !== this._enabled) {
      this._enabled = value;
      this._changed.emit();
    }
  }

  /**
   * Whether the server offers agent mode (`GET config`'s `features.agent`): off, the toggle
   * is greyed and no message goes as an agent turn, whatever {@link enabled} says.
   */
  get available(): boolean {
    return this._available;
  }

  /** What the server said of agent mode (`Chapyter.agent`, `Chapyter.chat`). */
  setServerAvailable(value: boolean): void {
    if (value !== this._available) {
      this._available = value;
      this._changed.emit();
    }
  }

  /**
   * The policy turns use: the chosen one, else the server's default, else "ask"; never
   * looser than the administrator's lock.
   */
  get policy(): AgentPolicy {
    const chosen = this._policy ?? this._serverPolicy ?? 'ask';
    const floor = this._floor;
    return floor && looserThan(chosen, floor) ? floor : chosen;
  }

  /** The loosest policy the administrator allows (`GET config`'s `agent.policy_floor`). */
  get policyFloor(): AgentPolicy | null {
    return this._floor;
  }
  set policy(value: AgentPolicy) {
    if (value !== this._policy) {
      this._policy = value;
      this._changed.emit();
    }
  }

  /** The policy chosen in the panel or the settings ('' for the server's default). */
  get policySetting(): string {
    return this._policy ?? '';
  }

  /** Choose the policy from a setting ('' for the server's default). */
  setPolicySetting(value: string): void {
    const next = isAgentPolicy(value) ? value : null;
    if (next !== this._policy) {
      this._policy = next;
      this._changed.emit();
    }
  }

  /**
   * The server's default policy (`GET config`'s `agent.policy`) and the administrator's
   * lock (`agent.policy_floor`), if any.
   */
  setServerPolicy(value: unknown, floor?: unknown): void {
    const next = isAgentPolicy(value) ? value : null;
    const nextFloor = isAgentPolicy(floor) ? floor : null;
    if (next !== this._serverPolicy || nextFloor !== this._floor) {
      this._serverPolicy = next;
      this._floor = nextFloor;
      this._changed.emit();
    }
  }

  /** The tools' labels and the MCP servers the server offers (`GET config`'s `agent`). */
  get tools(): { labels: string[]; servers: string[] } {
    return this._tools;
  }

  /** What the server said of its tools and MCP servers; malformed entries are dropped. */
  setServerTools(tools: unknown, servers: unknown): void {
    const named = (value: unknown): { name: string; label?: unknown }[] =>
      Array.isArray(value)
        ? value.filter(v => v && typeof v.name === 'string')
        : [];
    this._tools = {
      labels: named(tools).map(t =>
        typeof t.label === 'string' ? t.label : t.name
      ),
      servers: named(servers).map(s => s.name)
    };
    this._changed.emit();
  }

  /** A notebook's cells changed (or finished loading): cell links may have moved. */
  get cellsChanged(): ISignal<this, void> {
    return this._cellsChanged;
  }

  /** Say that a notebook's cells changed (the plugin follows every notebook). */
  notifyCells(): void {
    this._cellsChanged.emit();
  }

  /** The live turn of a reply, if it ran in this tab. */
  turn(reply: IChatMessage): AgentTurn | null {
    return this._turns.get(reply) ?? null;
  }

  /** Start the agent turn of `request`; its events, with each step performed. */
  async open(
    request: IChatRequest,
    reply: IChatMessage,
    signal: AbortSignal,
    redraw: () => void
  ): Promise<AsyncIterable<ChatEvent>> {
    const notebook = this._options.notebook(request.notebook);
    if (!notebook) {
      throw new Error(`${request.notebook} is not open in JupyterLab.`);
    }
    const snapshots = new TurnSnapshots(
      new KernelUndo(expression => notebook.readJSON(expression)),
      line => {
        // Once a chat, as the server says "no trial runs here".
        if (!this._toldNoSnapshot.has(turn.chatId)) {
          this._toldNoSnapshot.add(turn.chatId);
          turn.notify(line);
        }
      }
    );
    const turn: AgentTurn = new AgentTurn({
      client: this._options.client,
      notebook,
      describeModel: this._options.describeModel,
      onChange: redraw,
      snapshots
    });
    this._turns.set(reply, turn);
    this._snapshots.set(reply, snapshots);
    signal.addEventListener('abort', () => turn.stop());
    const events = await this._options.client.agent(
      { ...request, policy: this.policy },
      signal
    );
    return turn.run(events);
  }

  /** Stop was pressed for a reply. */
  stop(reply: IChatMessage): void {
    this._turns.get(reply)?.stop();
  }

  /** Answer a step of a reply that waits for approval. */
  decide(reply: IChatMessage, stepId: string, decision: Decision): boolean {
    return this._turns.get(reply)?.decide(stepId, decision) ?? false;
  }

  /**
   * Remove the cells a reply's turn inserted from `notebook` (those of steps `from` on), in
   * one undo step: those of the live turn, or those its stored steps name. How many were
   * still there. A reply that came with the notebook's file removes nothing: the cells it
   * names are the file's word. {@link restore} puts the kernel's variables back.
   */
  undo(reply: IChatMessage, notebook: string, from = 0): number {
    if (reply.imported) {
      return 0;
    }
    const turn = this._turns.get(reply);
    let removed: number;
    if (turn && from === 0) {
      removed = turn.undo();
    } else {
      const ids = (turn ? turn.steps.map(s => s.cellId) : this._stored(reply))
        .slice(from)
        .filter((id): id is string => !!id);
      removed = this._options.notebook(notebook)?.remove(ids) ?? 0;
    }
    const before = this._undoneFrom.get(reply);
    this._undoneFrom.set(
      reply,
      before === undefined ? from : Math.min(before, from)
    );
    return removed;
  }

  /**
   * What undoing a reply's turn to before step `step` would and would not restore in the
   * kernel; null for a reply from the notebook's file (never undone).
   */
  preview(
    reply: IChatMessage,
    notebook: string,
    step = 0
  ): Promise<IUndoPreview> | null {
    const turn = this._turnId(reply);
    const snapshots = this._snapshotsOf(reply, notebook);
    return turn && snapshots ? snapshots.preview(turn, step) : null;
  }

  /** Put the kernel's variables back as they were before step `step` of a reply's turn. */
  restore(
    reply: IChatMessage,
    notebook: string,
    step = 0
  ): Promise<IRestoreAnswer> | null {
    const turn = this._turnId(reply);
    const snapshots = this._snapshotsOf(reply, notebook);
    return turn && snapshots ? snapshots.restore(turn, step) : null;
  }

  /** Whether the cells of a reply's turn were removed with "Undo this turn". */
  isUndone(reply: IChatMessage): boolean {
    return this._turns.get(reply)?.undone || this._undoneFrom.get(reply) === 0;
  }

  /** The first step undone with "Undo to before step N" (or the whole turn), if any. */
  undoneFrom(reply: IChatMessage): number | null {
    return this.isUndone(reply) ? 0 : (this._undoneFrom.get(reply) ?? null);
  }

  private _stored(reply: IChatMessage): string[] {
    return (reply.steps ?? []).map(s => s.cell_id);
  }

  /** The turn's id in the kernel: the reply's message id ('' when it has none). */
  private _turnId(reply: IChatMessage): string {
    if (reply.imported) {
      return '';
    }
    return this._turns.get(reply)?.messageId || reply.id || '';
  }

  /** The snapshots of a reply's turn: the live turn's, or the kernel's word for a stored one. */
  private _snapshotsOf(
    reply: IChatMessage,
    notebook: string
  ): TurnSnapshots | null {
    const live = this._snapshots.get(reply);
    if (live) {
      return live;
    }
    const driver = this._options.notebook(notebook);
    const cells = this._stored(reply)
      .map((id, step) => (id ? step : -1))
      .filter(step => step >= 0);
    return driver
      ? TurnSnapshots.recorded(
          new KernelUndo(expression => driver.readJSON(expression)),
          cells
        )
      : null;
  }

  /** The driver of a notebook, for the views (cell links). */
  notebook(path: string): INotebookDriver | null {
    return this._options.notebook(path);
  }

  private _tools: { labels: string[]; servers: string[] } = {
    labels: [],
    servers: []
  };
  private _enabled = false;
  private _available = true;
  private _policy: AgentPolicy | null = null;
  private _floor: AgentPolicy | null = null;
  private _serverPolicy: AgentPolicy | null = null;
  private _turns = new WeakMap<IChatMessage, AgentTurn>();
  private _undoneFrom = new WeakMap<IChatMessage, number>();
  private _snapshots = new WeakMap<IChatMessage, TurnSnapshots>();
  private _toldNoSnapshot = new Set<string>();
  private _changed = new Signal<this, void>(this);
  private _cellsChanged = new Signal<this, void>(this);
}
