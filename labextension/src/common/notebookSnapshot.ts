/**
 * Takes the snapshot of the active notebook that the chat (and Fix, through the chat) sends as
 * context: the active cell and its neighbours, the selected text, the last error, and the kernel's variables. Nothing
 * is formatted or cut here: the server assembles the snapshot within its one budget
 * (`Chapyter.context_budget`) and says what the chip shows (`POST chapyter-ext/context`).
 *
 * The variables come from the notebook's own kernel through the one silent read
 * (`kernelRead.ts`), whose user expression calls `chapyter_ext.context.describe_variables`.
 */

import { ICellModel } from '@jupyterlab/cells';
import {
  INotebookModel,
  INotebookTracker,
  NotebookActions,
  NotebookPanel
} from '@jupyterlab/notebook';
import { Kernel } from '@jupyterlab/services';
import { ISignal, Signal } from '@lumino/signaling';

import { CellIndex, snapshotCells } from './cellIndex';
import { readVariableList } from './kernelRead';
import {
  IChatContext,
  IContextPreview,
  INotebookSnapshot,
  IVariableSummary,
  previewContext,
  variableFacts,
  variablesExpression
} from './snapshot';
import { VariablesCache } from './variablesCache';

/** What the snapshot takes from the user's settings. */
export interface ISnapshotSettings {
  /** Cells above and below the active cell that go with it. */
  neighbourCells: number;
  /** Whether the kernel's variables go with the context. */
  includeVariables: boolean;
}

/** The server calls the snapshot needs: its budget, and the text it makes of a snapshot. */
export interface ISnapshotServer {
  /** `GET config` (only `context_budget` is read). */
  config(): Promise<{ context_budget?: number }>;
  /** `POST context`: the text and chip `message` (the draft) would send for `snapshot`. */
  context(
    snapshot: INotebookSnapshot,
    message?: string
  ): Promise<IContextPreview>;
}

/** How long the chat waits for a busy kernel before using what it read last time. */
const VARIABLES_TIMEOUT_MS = 2500;

function selectedText(panel: NotebookPanel): string {
  const editor = panel.content.activeCell?.editor;
  if (!editor) {
    return '';
  }
  const { start, end } = editor.getSelection();
  const from = editor.getOffsetAt(start);
  const to = editor.getOffsetAt(end);
  if (from === to) {
    return '';
  }
  return editor.model.sharedModel
    .getSource()
    .slice(Math.min(from, to), Math.max(from, to));
}

function kernelLanguage(panel: NotebookPanel): string {
  const info = panel.content.model?.getMetadata('language_info') as
    { name?: string } | undefined;
  const spec = panel.content.model?.getMetadata('kernelspec') as
    { language?: string } | undefined;
  return String(info?.name ?? spec?.language ?? '');
}

/** Collects the active notebook's context and says when it may have changed. */
export class NotebookContextCollector {
  /** Follow the notebooks of `tracker`; `client` gives the budget and assembles the text. */
  constructor(
    private _tracker: INotebookTracker,
    private _client: ISnapshotServer,
    settings: ISnapshotSettings = { neighbourCells: 1, includeVariables: true }
  ) {
    this.settings = settings;
    _tracker.currentChanged.connect(this._emit, this);
    _tracker.currentChanged.connect(this._warm, this);
    _tracker.activeCellChanged.connect(this._emit, this);
    NotebookActions.executed.connect(this._onExecuted, this);
    _tracker.widgetAdded.connect((_, panel) => {
      panel.sessionContext.kernelChanged.connect(this._onKernel, this);
      panel.sessionContext.statusChanged.connect(this._onStatus, this);
    });
  }

  /** The user's settings (neighbours, variables on or off). */
  settings: ISnapshotSettings;

  /** Something the context shows may have changed: collect it again. */
  get changed(): ISignal<this, void> {
    return this._changed;
  }

  /**
   * The current notebook's context, or null when no notebook is open: the snapshot a message
   * sends, with the text and chip the server makes of it for `message` (the draft).
   */
  async collect(message = ''): Promise<IChatContext | null> {
    const snapshot = await this.snapshot();
    return snapshot
      ? previewContext(snapshot, s => this._client.context(s, message))
      : null;
  }

  /** What the current notebook and its kernel show now. */
  async snapshot(): Promise<INotebookSnapshot | null> {
    const panel = this._tracker.currentWidget;
    const model = panel?.content.model;
    if (!panel || !model) {
      return null;
    }
    const notebook = panel.content;
    const activeIndex = notebook.activeCell ? notebook.activeCellIndex : -1;
    // The active cell, its neighbours and the last error, read without walking every cell.
    const cells = snapshotCells(
      model,
      this._cellIndex(model),
      activeIndex,
      Math.max(0, this.settings.neighbourCells)
    );
    const language = kernelLanguage(panel);
    return {
      path: panel.context.path,
      cell_count: model.cells.length,
      active: cells.active,
      above: cells.above,
      below: cells.below,
      selection: selectedText(panel),
      last_error: cells.last_error,
      variables: this.settings.includeVariables
        ? await this.variables(panel)
        : null,
      language
    };
  }

  /** The kernel's variables (cached until a cell runs), or null when they cannot be read. */
  async variables(panel: NotebookPanel): Promise<IVariableSummary[] | null> {
    const kernel = panel.sessionContext.session?.kernel;
    const language = kernelLanguage(panel).toLowerCase();
    if (!kernel || (language && language !== 'python')) {
      return null;
    }
    const budget = await this._budget();
    return this._variables.get(kernel.id, () => readVariables(kernel, budget));
  }

  /** The cell index of a notebook model, made (and counted) the first time it is asked for. */
  private _cellIndex(model: INotebookModel): CellIndex {
    let index = this._cellIndexes.get(model);
    if (!index) {
      const shared = model.sharedModel;
      index = new CellIndex(model, cell =>
        shared.cells.indexOf((cell as ICellModel).sharedModel)
      );
      this._cellIndexes.set(model, index);
    }
    return index;
  }

  /** The server's context budget (asked once; again after a failure), or null. */
  private async _budget(): Promise<number | null> {
    if (!this._budgetRead) {
      this._budgetRead = this._client
        .config()
        .then(config => config.context_budget ?? null)
        .catch(() => {
          this._budgetRead = null;
          return null;
        });
    }
    return this._budgetRead;
  }

  /** Stop following the notebooks. */
  dispose(): void {
    NotebookActions.executed.disconnect(this._onExecuted, this);
    Signal.clearData(this);
  }

  private _onExecuted(_: unknown, args: { notebook: unknown }): void {
    for (const panel of this._panels()) {
      const kernel = panel.sessionContext.session?.kernel;
      if (panel.content === args.notebook && kernel) {
        this._variables.markStale(kernel.id);
      }
    }
    this._emit();
  }

  /** Count the cells of the notebook that became current, before any request needs them. */
  private _warm(): void {
    const panel = this._tracker.currentWidget;
    void panel?.context.ready.then(() => {
      const model = panel.content.model;
      if (model && !panel.isDisposed) {
        this._cellIndex(model).warm();
      }
    });
  }

  private _onKernel(): void {
    this._variables.clear();
    this._emit();
  }

  private _onStatus(_: unknown, status: Kernel.Status): void {
    // A restart keeps the kernel's id but empties its namespace.
    if (
      status === 'restarting' ||
      status === 'autorestarting' ||
      status === 'dead'
    ) {
      this._onKernel();
    }
  }

  private _panels(): NotebookPanel[] {
    const panels: NotebookPanel[] = [];
    this._tracker.forEach(panel => panels.push(panel));
    return panels;
  }

  private _emit(): void {
    this._changed.emit();
  }

  private _variables = new VariablesCache(VARIABLES_TIMEOUT_MS, () =>
    this._emit()
  );
  private _changed = new Signal<this, void>(this);
  private _cellIndexes = new WeakMap<INotebookModel, CellIndex>();
  private _budgetRead: Promise<number | null> | null = null;
}

/**
 * Ask a kernel for its variables, within `budget` characters (the server's context budget);
 * null when it cannot tell (no chapyter_ext).
 */
export function readVariables(
  kernel: Kernel.IKernelConnection,
  budget: number | null
): Promise<IVariableSummary[] | null> {
  return readVariableList(kernel, variablesExpression(budget), variableFacts);
}
