/**
 * Agent mode as the chat sees it ({@link IChatTurnHook}): whether messages go as agent turns,
 * with which approval policy, and the live {@link AgentTurn} of each reply (for the step
 * views' Run / Edit / Skip and "Undo this turn"). No DOM: the notebook side is injected.
 */

import { ISignal, Signal } from '@lumino/signaling';

import type { ChatEvent } from '../common/events';
import type { IChatMessage, IChatRequest, IChatTurnHook } from '../chat/tokens';
import { AgentTurn } from './runner';
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
    const turn = new AgentTurn({
      client: this._options.client,
      notebook,
      describeModel: this._options.describeModel,
      onChange: redraw
    });
    this._turns.set(reply, turn);
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
   * Remove the cells a reply's turn inserted from `notebook`, in one undo step: those of the
   * live turn, or those its stored steps name. How many were still there. A reply that came
   * with the notebook's file removes nothing: the cells it names are the file's word.
   */
  undo(reply: IChatMessage, notebook: string): number {
    const turn = this._turns.get(reply);
    if (turn) {
      return turn.undo();
    }
    if (reply.imported) {
      return 0;
    }
    const ids = (reply.steps ?? []).map(s => s.cell_id).filter(id => !!id);
    const removed = this._options.notebook(notebook)?.remove(ids) ?? 0;
    this._undone.add(reply);
    return removed;
  }

  /** Whether the cells of a reply's turn were removed with "Undo this turn". */
  isUndone(reply: IChatMessage): boolean {
    return this._turns.get(reply)?.undone ?? this._undone.has(reply);
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
  private _undone = new WeakSet<IChatMessage>();
  private _changed = new Signal<this, void>(this);
  private _cellsChanged = new Signal<this, void>(this);
}
