/**
 * The page's side of "a notebook on disk holds no secret": when the server replaced a
 * configured key in the outputs of a notebook this page saved (its pre-save hook,
 * `chapyter_ext/history/contents_events.py`), the page says so in one line and shows the same
 * `<redacted>` in its own copy, so that it stops showing the key and the next save does not
 * write it again.
 *
 * The server's event arrives over Jupyter's own events socket (`/api/events/subscribe`,
 * authenticated like every route) and carries the path and counts, never a value: the
 * replaced values are read back from the saved file (the contents API). A value is replaced
 * only in a cell whose outputs are the very ones this save sent, and only where the saved
 * value is the shown one with runs of it replaced by the marker.
 */

import {
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { Notification } from '@jupyterlab/apputils';
import { ICodeCellModel } from '@jupyterlab/cells';
import { PathExt } from '@jupyterlab/coreutils';
import { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';
import { IOutputModel } from '@jupyterlab/rendermime';
import { Contents } from '@jupyterlab/services';
import {
  PartialJSONObject,
  PartialJSONValue,
  PromiseDelegate
} from '@lumino/coreutils';

import {
  EventEmission,
  IRedactedSave,
  readRedactedSave,
  redactedNote,
  redactedOutputs
} from './logic';

/** The plugin's id. */
export const SAVED_SECRETS_PLUGIN_ID = 'chapyter-ext:saved-secrets';

/** How long the note stays (ms): long enough to be read. */
const NOTE_MS = 12_000;
/**
 * How long after a save its snapshot waits for the server's event (ms); the event comes
 * within milliseconds, and the snapshot holds output models the notebook may have dropped.
 */
const SNAPSHOT_MS = 30_000;

type NotebookContext = NotebookPanel['context'];
type OutputList = ICodeCellModel['outputs'];

/** What a save of this page sent: each code cell's output models, and how the save ended. */
interface ISaveSnapshot {
  outputs: Map<string, readonly IOutputModel[]>;
  done: PromiseDelegate<boolean>;
}

function outputModels(outputs: OutputList): IOutputModel[] {
  const models: IOutputModel[] = [];
  for (let i = 0; i < outputs.length; i++) {
    models.push(outputs.get(i));
  }
  return models;
}

/** The code cells' output models now, by cell id. */
function snapshot(context: NotebookContext): ISaveSnapshot {
  const outputs = new Map<string, readonly IOutputModel[]>();
  const cells = context.model.cells;
  for (let i = 0; i < cells.length; i++) {
    const cell = cells.get(i);
    if (cell.type === 'code') {
      outputs.set(cell.id, outputModels((cell as ICodeCellModel).outputs));
    }
  }
  return { outputs, done: new PromiseDelegate<boolean>() };
}

/** Whether a cell still holds exactly the output models it held when the save began. */
function unchanged(
  outputs: OutputList,
  before: readonly IOutputModel[]
): boolean {
  return (
    outputs.length === before.length &&
    before.every((model, i) => outputs.get(i) === model)
  );
}

/** Follows this page's saves and the server's announcements of what they replaced. */
class SavedSecrets {
  constructor(
    private readonly _contents: Contents.IManager,
    private readonly _tracker: INotebookTracker
  ) {
    _tracker.widgetAdded.connect((_, panel) => this._watch(panel.context));
    _tracker.forEach(panel => this._watch(panel.context));
  }

  /** One event from the server's event bus. */
  async onEvent(emission: EventEmission): Promise<void> {
    const save = readRedactedSave(emission);
    if (!save) {
      return;
    }
    for (const context of this._contexts(save.path)) {
      const taken = this._saves.get(context);
      // Only the page that made the save acts on it (another tab may hold other outputs).
      if (!taken || !(await taken.done.promise)) {
        continue;
      }
      if (this._saves.get(context) === taken) {
        this._saves.delete(context);
      }
      const name = PathExt.basename(this._contents.localPath(context.path));
      Notification.warning(redactedNote(save, name), { autoClose: NOTE_MS });
      try {
        await this._showRedacted(context, save, taken);
      } catch (err) {
        console.warn(`chapyter-ext: could not read back ${name}`, err);
      }
    }
  }

  private _watch(context: NotebookContext): void {
    if (this._watched.has(context)) {
      return;
    }
    this._watched.add(context);
    context.saveState.connect((_, state) => {
      const taken = this._saves.get(context);
      if (state === 'started') {
        taken?.done.resolve(false);
        this._saves.set(context, snapshot(context));
      } else if (taken) {
        taken.done.resolve(state === 'completed');
        setTimeout(() => {
          if (this._saves.get(context) === taken) {
            this._saves.delete(context);
          }
        }, SNAPSHOT_MS);
      }
    });
  }

  /** The open notebooks saved at the server path `path` (each context once). */
  private _contexts(path: string): NotebookContext[] {
    const found = new Set<NotebookContext>();
    this._tracker.forEach(panel => {
      if (this._contents.localPath(panel.context.path) === path) {
        found.add(panel.context);
      }
    });
    return [...found];
  }

  /** The saved values in place of the shown ones, where the save replaced them. */
  private async _showRedacted(
    context: NotebookContext,
    save: IRedactedSave,
    taken: ISaveSnapshot
  ): Promise<void> {
    const file = await this._contents.get(context.path, {
      type: 'notebook',
      content: true
    });
    const content = file.content as { cells?: unknown } | null;
    const saved = Array.isArray(content?.cells)
      ? (content.cells as PartialJSONObject[])
      : [];
    const byId = new Map(saved.map(cell => [cell.id, cell] as const));
    // Nothing changed since the save (the usual case): the copy matches the file again.
    const clean = !context.model.dirty;
    let replaced = 0;
    const cells = context.model.cells;
    for (let i = 0; i < cells.length; i++) {
      const cell = cells.get(i);
      const before = taken.outputs.get(cell.id);
      if (
        cell.type !== 'code' ||
        !before ||
        (save.cells && !save.cells.includes(cell.id))
      ) {
        continue;
      }
      const outputs = (cell as ICodeCellModel).outputs;
      // By id; by place only in a file whose cells have none (nbformat before 4.5).
      const stored =
        byId.get(cell.id) ??
        (saved[i]?.id === undefined ? saved[i] : undefined);
      if (!unchanged(outputs, before) || !Array.isArray(stored?.outputs)) {
        continue;
      }
      const shown = before.map(model => model.toJSON() as PartialJSONObject);
      const replacements = redactedOutputs(
        shown,
        stored.outputs as PartialJSONValue[]
      );
      for (const [index, output] of replacements) {
        outputs.set(
          index,
          output as unknown as Parameters<OutputList['set']>[1]
        );
        replaced++;
      }
    }
    if (replaced && clean) {
      context.model.dirty = false;
    }
  }

  private readonly _saves = new WeakMap<NotebookContext, ISaveSnapshot>();
  private readonly _watched = new WeakSet<NotebookContext>();
}

/** Says when a save replaced a configured secret, and shows the replacement in the page. */
const savedSecretsPlugin: JupyterFrontEndPlugin<void> = {
  id: SAVED_SECRETS_PLUGIN_ID,
  description:
    'Notes when the server replaced a configured key in the outputs of a saved notebook.',
  autoStart: true,
  requires: [INotebookTracker],
  activate: (app: JupyterFrontEnd, tracker: INotebookTracker) => {
    const services = app.serviceManager;
    const secrets = new SavedSecrets(services.contents, tracker);
    services.events.stream.connect((_, emission) => {
      void secrets.onEvent(emission as EventEmission);
    });
  }
};

export default [savedSecretsPlugin];
