/**
 * "Load as variable" on a sent table attachment: the file is saved next to the chat's
 * notebook through the Jupyter Contents API (never anywhere else; an existing file is never
 * overwritten) and a code cell that reads it with pandas is inserted below the active cell,
 * shown and not run: the user runs it (what runs is exactly what is shown). The file's data
 * is only in this page's memory (`SentFiles`): after a reload it is no longer here.
 */

import { PathExt } from '@jupyterlab/coreutils';
import type { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';
import type { Contents } from '@jupyterlab/services';

import type { IAttachmentNote, SentFiles } from './attachmentRules';

/** Python's keywords, which a variable cannot be named. */
const KEYWORDS = new Set(
  (
    'False None True and as assert async await break class continue def del elif else ' +
    'except finally for from global if import in is lambda nonlocal not or pass raise ' +
    'return try while with yield'
  ).split(' ')
);

/** The pandas reader of each table format, with its extra arguments. */
const READERS: { [ext: string]: string } = {
  csv: 'pd.read_csv({path})',
  tsv: 'pd.read_csv({path}, sep="\\t")',
  json: 'pd.read_json({path})',
  parquet: 'pd.read_parquet({path})',
  xlsx: 'pd.read_excel({path})',
  xls: 'pd.read_excel({path})'
};

/** The extension of `name`, lower case ('' when none). */
function extension(name: string): string {
  const dot = name.lastIndexOf('.');
  return dot > 0 ? name.slice(dot + 1).toLowerCase() : '';
}

/** Whether `name` is a table "Load as variable" can read. */
export function isLoadable(name: string): boolean {
  return extension(name) in READERS;
}

/** A Python variable name for a file: `sales.csv` → `sales`, `2024 Q1.xlsx` → `df_2024_q1`. */
export function variableName(fileName: string): string {
  const dot = fileName.lastIndexOf('.');
  const stem = (dot > 0 ? fileName.slice(0, dot) : fileName).toLowerCase();
  let name = stem.replace(/[^a-z0-9_]+/g, '_').replace(/^_+|_+$/g, '');
  if (!name || /^[0-9]/.test(name)) {
    name = `df_${name}`.replace(/_+$/, '');
  }
  return KEYWORDS.has(name) ? `${name}_df` : name;
}

/** A Python string literal for `text` (JSON's escapes are Python's too). */
function pythonString(text: string): string {
  return JSON.stringify(text);
}

/** The cell that loads `fileName` (in the notebook's folder) into `variable`. */
export function loadCode(
  fileName: string,
  variable: string,
  importPandas: boolean
): string {
  const reader = READERS[extension(fileName)] ?? READERS.csv;
  const line = `${variable} = ${reader.replace('{path}', pythonString(fileName))}`;
  return importPandas
    ? `import pandas as pd\n${line}\n${variable}`
    : `${line}\n${variable}`;
}

/** Whether the notebook's code already imports pandas as `pd`. */
export function importsPandas(sources: readonly string[]): boolean {
  return sources.some(source =>
    /^\s*import\s+pandas\s+as\s+pd\s*$/m.test(source)
  );
}

/** A name for the file beside the notebook that no file has yet: `sales.csv`, `sales-1.csv`... */
async function freePath(
  contents: Contents.IManager,
  folder: string,
  name: string
): Promise<string> {
  const dot = name.lastIndexOf('.');
  const [stem, ext] =
    dot > 0 ? [name.slice(0, dot), name.slice(dot)] : [name, ''];
  for (let n = 0; n < 100; n++) {
    const path = PathExt.join(folder, n ? `${stem}-${n}${ext}` : name);
    try {
      await contents.get(path, { content: false });
    } catch {
      return path; // nothing there
    }
  }
  throw new Error(`Too many files named like "${name}" beside the notebook.`);
}

/** Saves sent tables beside the chat's notebook and inserts the cell that loads them. */
export class TableLoader {
  /** Save through `contents`, insert into the notebook of `tracker` at `notebookPath()`. */
  constructor(
    private _contents: Contents.IManager,
    private _tracker: INotebookTracker,
    private _sent: SentFiles,
    private _notebookPath: () => string | null
  ) {}

  /** Whether this page still has the file's data. */
  has(note: IAttachmentNote): boolean {
    return !!this._sent.find(note);
  }

  /** Save the file and insert its cell: the one line that says what happened. */
  async load(note: IAttachmentNote): Promise<string> {
    const file = this._sent.find(note);
    if (!file) {
      return `"${note.name}" is no longer here (sent files stay only until the page reloads): attach it again.`;
    }
    const panel = this._panel();
    const notebook = panel?.content;
    if (!panel || !notebook?.model) {
      return "Open the chat's notebook to load the file there.";
    }
    const folder = PathExt.dirname(panel.context.path);
    const path = await freePath(this._contents, folder, file.name);
    await this._contents.save(path, {
      type: 'file',
      format: 'base64',
      content: file.data
    });
    const name = PathExt.basename(path);
    const variable = variableName(file.name);
    const sources = notebook.model.sharedModel.cells.map(cell =>
      cell.getSource()
    );
    const source = loadCode(name, variable, !importsPandas(sources));
    const index = notebook.activeCell
      ? notebook.activeCellIndex + 1
      : notebook.model.cells.length;
    notebook.model.sharedModel.insertCell(index, { cell_type: 'code', source });
    notebook.activeCellIndex = index;
    notebook.deselectAll();
    void notebook.scrollToItem(index, 'smart');
    return `Saved ${name} beside the notebook; run the new cell to load it as ${variable}.`;
  }

  private _panel(): NotebookPanel | null {
    const path = this._notebookPath();
    return path
      ? (this._tracker.find(panel => panel.context.path === path) ?? null)
      : null;
  }
}
