/**
 * What `@` offers in the chat input: the active notebook kernel's variables (the
 * chat's own cached silent read: nothing runs that changes anything), the notebook's cells
 * ("cell [4]" as `cellNames.ts` names them, and their first line), and the files under the
 * server root (the Contents API, one directory at a time, listed when first typed: `@data/`
 * lists `data`). The item builders are pure; {@link NotebookMentions} reads JupyterLab.
 */

import type { Contents } from '@jupyterlab/services';
import type { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';

import { cellNameIn, INamedCell } from '../cellNames';
import type { IVariableSummary } from '../common/snapshot';
import type { IMenuItem, IMenuTrigger } from './inputMenuLogic';
import type { IChatMention } from './tokens';

/** A menu item that mentions something when picked. */
export interface IMentionItem extends IMenuItem {
  /** What it mentions (none: a directory, whose files are listed next). */
  mention?: IChatMention;
}

/** How long a directory's listing is used again before it is asked for again, in ms. */
const LISTING_TTL_MS = 10000;

/** At most this many characters of a detail line. */
const DETAIL_CHARS = 80;

function shorten(text: string): string {
  const line = text.split('\n')[0].trim();
  return line.length > DETAIL_CHARS
    ? `${line.slice(0, DETAIL_CHARS - 1)}…`
    : line;
}

/** The items of a kernel's variables: the name; the type and shape (or summary). */
export function variableItems(
  variables: readonly IVariableSummary[]
): IMentionItem[] {
  return variables.map(variable => ({
    id: `var-${variable.name}`,
    label: variable.name,
    detail: shorten(
      [variable.type, variable.head ?? variable.summary]
        .filter(Boolean)
        .join(' · ')
    ),
    insert: `@${variable.name}`,
    mention: { kind: 'variable', name: variable.name, label: variable.name }
  }));
}

/** One cell as the items read it. */
export interface IMentionCell extends INamedCell {
  /** Its id. */
  readonly id: string;
  /** Its source. */
  readonly source: string;
}

/** The items of a notebook's cells: "cell [4]" (or "the 5th cell") and its first line. */
export function cellItems(cells: readonly IMentionCell[]): IMentionItem[] {
  return cells.map((cell, index) => {
    const label = cellNameIn(cells, index);
    const prompt = /^cell \[(\d+)\]$/.exec(label);
    return {
      id: `cell-${cell.id}`,
      label,
      detail: shorten(cell.source) || `(empty ${cell.type} cell)`,
      insert: prompt ? `@cell[${prompt[1]}]` : `@cell#${index + 1}`,
      mention: { kind: 'cell', cellId: cell.id, label }
    };
  });
}

/** What follows `@` split into the directory to list and the name typed in it. */
export function splitFileQuery(query: string): { dir: string; name: string } {
  const slash = query.lastIndexOf('/');
  return slash < 0
    ? { dir: '', name: query }
    : { dir: query.slice(0, slash), name: query.slice(slash + 1) };
}

/** The items of a directory's entries: directories (listed next when picked) then files. */
export function fileItems(
  entries: readonly Pick<Contents.IModel, 'name' | 'path' | 'type'>[]
): IMentionItem[] {
  const visible = entries.filter(entry => !entry.name.startsWith('.'));
  const dirs = visible.filter(entry => entry.type === 'directory');
  const files = visible.filter(entry => entry.type !== 'directory');
  return [
    ...dirs.map(entry => ({
      id: `dir-${entry.path}`,
      label: `${entry.name}/`,
      detail: 'folder',
      insert: `@${entry.path}/`,
      keepOpen: true
    })),
    ...files.map(entry => ({
      id: `file-${entry.path}`,
      label: entry.name,
      detail: entry.path,
      insert: `@${entry.path}`,
      mention: { kind: 'file' as const, path: entry.path, label: entry.path }
    }))
  ];
}

/** Reads the variables of a notebook's kernel (the chat's cached read). */
export type VariableReader = (
  panel: NotebookPanel
) => Promise<IVariableSummary[] | null>;

/** What `@` lists, read from the active notebook, its kernel and the server's files. */
export class NotebookMentions {
  /** Over the notebooks of `tracker`, the variables read, and the Contents API. */
  constructor(
    private _tracker: INotebookTracker,
    private _variables: VariableReader,
    private _contents: Contents.IManager
  ) {}

  /** The items for what follows `@` (unfiltered). */
  async items(trigger: IMenuTrigger): Promise<IMentionItem[]> {
    if (trigger.char !== '@') {
      return [];
    }
    const { dir } = splitFileQuery(trigger.query);
    const files = await this._files(dir);
    if (dir) {
      return files; // `@data/` lists the folder only
    }
    const panel = this._tracker.currentWidget;
    if (!panel) {
      return files;
    }
    const variables = await this._variables(panel).catch(() => null);
    const cells: IMentionCell[] = panel.content.widgets.map(cell => ({
      id: cell.model.id,
      type: cell.model.type,
      executionCount:
        cell.model.type === 'code'
          ? ((cell.model as unknown as { executionCount: number | null })
              .executionCount ?? null)
          : null,
      source: cell.model.sharedModel.getSource()
    }));
    return [...variableItems(variables ?? []), ...cellItems(cells), ...files];
  }

  /** The entries of `dir` (cached a few seconds); none when it cannot be listed. */
  private async _files(dir: string): Promise<IMentionItem[]> {
    const cached = this._listings.get(dir);
    if (cached && Date.now() - cached.at < LISTING_TTL_MS) {
      return cached.items;
    }
    try {
      const model = await this._contents.get(dir, { content: true });
      const entries = Array.isArray(model.content)
        ? (model.content as Contents.IModel[])
        : [];
      const items = fileItems(entries);
      this._listings.set(dir, { at: Date.now(), items });
      return items;
    } catch {
      return [];
    }
  }

  private _listings = new Map<string, { at: number; items: IMentionItem[] }>();
}
