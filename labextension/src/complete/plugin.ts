/**
 * The inline completion plugin: registers chapyter-ext's provider with JupyterLab's inline
 * completer, reads the notebook around the cursor (and the kernel's variables, cached until a
 * cell runs), and shows a status bar item while completion is failing.
 */

import {
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import {
  CompletionHandler,
  ICompletionProviderManager
} from '@jupyterlab/completer';
import {
  INotebookTracker,
  NotebookActions,
  NotebookPanel
} from '@jupyterlab/notebook';
import { IStatusBar } from '@jupyterlab/statusbar';
import { Signal } from '@lumino/signaling';
import { Widget } from '@lumino/widgets';

import { VariablesCache } from '../common/variablesCache';
import {
  FailureTracker,
  ICompletionStatus,
  IRequestParts,
  IVariable
} from './logic';
import { streamCompletion } from './client';
import { readKeywords, readNames } from './kernelNames';
import { Accepted, KeywordCache } from './keywords';
import { ChapyterInlineProvider, INotebookSource } from './provider';

/** The plugin's id. */
export const COMPLETION_PLUGIN_ID = 'chapyter-ext:inline-completion';
/** How long a suggestion waits for a kernel read before using the last one (ms). */
const VARIABLES_WAIT_MS = 100;
/** Quiet time after the last cell run before the names are read again (ms). */
const READ_AFTER_RUN_MS = 1000;
/**
 * How long a suggestion's keyword waits for its callee's signature (ms): a kernel busy with
 * a cell answers later (into the cache), and the keyword is kept meanwhile.
 */
const KEYWORDS_WAIT_MS = 250;

function language(panel: NotebookPanel): string {
  const info = panel.content.model?.getMetadata('language_info') as
    { name?: string } | undefined;
  return String(info?.name ?? '');
}

/** Reads the notebook for the provider. */
class NotebookSource implements INotebookSource {
  constructor(tracker: INotebookTracker) {
    NotebookActions.executed.connect((_, args) => {
      tracker.forEach(panel => {
        const kernel = panel.sessionContext.session?.kernel;
        if (panel.content === args.notebook && kernel) {
          this._variables.markStale(kernel.id);
          this._keywords.get(kernel.id)?.clear();
          // Read once the notebook has stopped running cells (a generated cell runs right
          // after its prompt cell; a read between them would delay its output), while the
          // user reads the output: the next suggestion finds the names ready.
          clearTimeout(this._reads.get(panel.id));
          this._reads.set(
            panel.id,
            setTimeout(() => {
              this._reads.delete(panel.id);
              void this._readVariables(panel);
            }, READ_AFTER_RUN_MS)
          );
        }
      });
    });
  }

  async parts(
    widget: Widget,
    request: CompletionHandler.IRequest
  ): Promise<IRequestParts | null> {
    if (!(widget instanceof NotebookPanel)) {
      return null;
    }
    const notebook = widget.content;
    const cell = notebook.activeCell;
    if (!cell || cell.model.type !== 'code') {
      return null;
    }
    const cellsAbove: string[] = [];
    for (let i = 0; i < notebook.activeCellIndex; i++) {
      const model = notebook.widgets[i].model;
      if (model.type === 'code') {
        cellsAbove.push(model.sharedModel.getSource());
      }
    }
    return {
      text: request.text,
      offset: request.offset,
      cellsAbove,
      variables: await this._readVariables(widget),
      language: language(widget),
      editor: widget.id
    };
  }

  watch(widget: Widget, onChange: () => void): () => void {
    const cell =
      widget instanceof NotebookPanel ? widget.content.activeCell : null;
    if (!cell) {
      return () => undefined;
    }
    const shared = cell.model.sharedModel;
    const listener = (_: unknown, change: { sourceChange?: unknown }) => {
      if (change.sourceChange) {
        onChange();
      }
    };
    shared.changed.connect(listener);
    return () => shared.changed.disconnect(listener);
  }

  private async _readVariables(
    panel: NotebookPanel
  ): Promise<IVariable[] | null> {
    const kernel = panel.sessionContext.session?.kernel;
    const lang = language(panel).toLowerCase();
    if (!kernel || (lang && lang !== 'python')) {
      return null;
    }
    return this._variables.get(kernel.id, () => readNames(kernel));
  }

  async accepted(
    widget: Widget,
    callees: string[]
  ): Promise<Map<string, Accepted>> {
    const kernel =
      widget instanceof NotebookPanel
        ? widget.sessionContext.session?.kernel
        : null;
    const lang = widget instanceof NotebookPanel ? language(widget) : '';
    if (!kernel || (lang && lang.toLowerCase() !== 'python')) {
      return new Map();
    }
    let cache = this._keywords.get(kernel.id);
    if (!cache) {
      cache = new KeywordCache(found => readKeywords(kernel, found));
      this._keywords.set(kernel.id, cache);
    }
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<Map<string, Accepted>>(resolve => {
      timer = setTimeout(() => resolve(new Map()), KEYWORDS_WAIT_MS);
    });
    try {
      return await Promise.race([cache.get(callees), late]);
    } finally {
      clearTimeout(timer);
    }
  }

  private _keywords = new Map<string, KeywordCache>();
  private _variables = new VariablesCache(VARIABLES_WAIT_MS, () => undefined);
  private _reads = new Map<string, ReturnType<typeof setTimeout>>();
}

/** The status bar item: shown only while completion is failing. */
class CompletionStatusItem extends Widget {
  constructor() {
    super();
    this.addClass('jp-Chapyter-completionStatus');
    this.node.textContent = 'AI completion failing';
    this.node.style.color = 'var(--jp-warn-color0)';
    this.node.style.lineHeight = 'var(--jp-statusbar-height, 24px)';
    this.node.style.padding = '0 5px';
  }

  /** Show the status. */
  setStatus(status: ICompletionStatus): void {
    this.node.title = status.failing
      ? `Inline completion is failing: ${status.message}`
      : '';
  }
}

/** Registers the inline completion provider and its status item. */
const completionPlugin: JupyterFrontEndPlugin<void> = {
  id: COMPLETION_PLUGIN_ID,
  description:
    "Inline code completion (ghost text) from the configured model, through JupyterLab's inline completer.",
  autoStart: true,
  requires: [ICompletionProviderManager, INotebookTracker],
  optional: [IStatusBar],
  activate: (
    _app: JupyterFrontEnd,
    manager: ICompletionProviderManager,
    tracker: INotebookTracker,
    statusBar: IStatusBar | null
  ) => {
    const changed = new Signal<object, void>({});
    const item = new CompletionStatusItem();
    const failures = new FailureTracker(
      line => console.warn(line),
      status => {
        item.setStatus(status);
        changed.emit();
      }
    );
    manager.registerInlineProvider(
      new ChapyterInlineProvider(
        new NotebookSource(tracker),
        failures,
        streamCompletion
      )
    );
    statusBar?.registerStatusItem(COMPLETION_PLUGIN_ID, {
      item,
      align: 'left',
      rank: 5,
      isActive: () => failures.status.failing,
      activeStateChanged: changed
    });
  }
};

export default [completionPlugin];
