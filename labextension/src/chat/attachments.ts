/**
 * Attachments in the chat panel: files dropped on the panel, pasted into the input or picked
 * with the paperclip button are checked (`attachmentRules.ts`), read with FileReader into
 * base64 and shown as removable chips until the message is sent; a sent message's files are
 * drawn as chips under it (name and size, never the data), a table's with "Load as variable"
 * (`loadTable.ts`).
 */

import { fileUploadIcon } from '@jupyterlab/ui-components';

import { button, element } from '../common/dom';
import {
  base64OfDataUrl,
  formatSize,
  IAttachment,
  IAttachmentNote,
  PendingAttachments
} from './attachmentRules';
import { isLoadable } from './loadTable';

/** What "Load as variable" needs: `loadTable.ts`'s `TableLoader`. */
export interface ITableLoading {
  /** Save the sent file and insert its cell: one line saying what happened. */
  load(note: IAttachmentNote): Promise<string>;
}

let tableLoader: ITableLoading | null = null;

/** Offer "Load as variable" on sent tables, through `loader` (the chat plugin sets it). */
export function setTableLoader(loader: ITableLoading | null): void {
  tableLoader = loader;
}

/** The "Load as variable" button of a sent table, and the line that says what it did. */
function loadButton(note: IAttachmentNote, loader: ITableLoading): HTMLElement {
  const node = element('span', 'jp-Chapyter-chatAttachmentLoad');
  const load = element(
    'button',
    'jp-Chapyter-chatAttachmentLoadButton',
    {
      type: 'button',
      'aria-label': `Load ${note.name} as a variable: save it beside the notebook and insert a cell that reads it`,
      title:
        'Save the file beside the notebook and insert a cell that reads it (run the cell to load it)'
    },
    'Load as variable'
  );
  const status = element('span', 'jp-Chapyter-chatAttachmentLoadStatus', {
    role: 'status'
  });
  load.addEventListener('click', async () => {
    load.disabled = true;
    try {
      status.textContent = await loader.load(note);
    } catch (error) {
      status.textContent = `Could not load "${note.name}": ${String((error as Error)?.message ?? error).split('\n')[0]}`;
    } finally {
      load.disabled = false;
    }
  });
  node.append(load, status);
  return node;
}

/** What the file picker offers (any text file is also taken when dropped or pasted). */
const ACCEPT =
  'image/png,image/jpeg,image/gif,image/webp,.csv,.tsv,.json,.parquet,.xlsx,.xls,.txt,.md,.py,text/*';

/** Read a file into an attachment: its bytes as base64. */
export function readAttachment(
  file: File,
  type = file.type
): Promise<IAttachment> {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () =>
      resolve({
        name: file.name,
        type,
        size: file.size,
        data: base64OfDataUrl(String(reader.result ?? ''))
      });
    reader.onerror = () =>
      reject(reader.error ?? new Error(`Could not read "${file.name}".`));
    reader.readAsDataURL(file);
  });
}

/** The files of a drop or a paste (none when it carries no file). */
export function transferFiles(data: DataTransfer | null): File[] {
  return data?.files ? Array.from(data.files) : [];
}

/** One chip: the file's name and size, with a Remove button when `remove` is given. */
function chip(note: IAttachmentNote, remove?: () => void): HTMLElement {
  const size = formatSize(note.size);
  const node = element('span', 'jp-Chapyter-chatAttachment', {
    role: 'listitem',
    title: `${note.name} (${note.type}, ${size})`
  });
  node.append(
    element('span', 'jp-Chapyter-chatAttachmentName', {}, note.name),
    element('span', 'jp-Chapyter-chatAttachmentSize', {}, size)
  );
  if (remove) {
    const removeButton = element(
      'button',
      'jp-Chapyter-chatAttachmentRemove',
      { type: 'button', 'aria-label': `Remove attachment ${note.name}` },
      '×'
    );
    removeButton.addEventListener('click', remove);
    node.appendChild(removeButton);
  }
  return node;
}

/** The chips of a sent message's files, or null when it had none. */
export function attachmentChips(
  notes: readonly IAttachmentNote[] | undefined
): HTMLElement | null {
  if (!notes?.length) {
    return null;
  }
  const list = element('div', 'jp-Chapyter-chatAttachments', {
    role: 'list',
    'aria-label': 'Attached files'
  });
  list.append(...notes.map(note => chip(note)));
  const loader = tableLoader;
  for (const note of loader ? notes.filter(n => isLoadable(n.name)) : []) {
    list.appendChild(loadButton(note, loader!));
  }
  return list;
}

/** The composer's files: the paperclip, the chips, the refusal line, drop and paste. */
export class AttachmentTray {
  /** A tray over `pending`; `dropTarget` takes dropped files, `input` pasted ones. */
  constructor(
    readonly pending: PendingAttachments,
    dropTarget: HTMLElement,
    input: HTMLElement
  ) {
    this.node = element('div', 'jp-Chapyter-chatAttachmentTray');
    this._chips = element('div', 'jp-Chapyter-chatAttachments', {
      role: 'list',
      'aria-label': 'Files to send'
    });
    this._error = element('div', 'jp-Chapyter-chatAttachmentError', {
      role: 'alert'
    });
    this.node.append(this._chips, this._error);

    this._picker = element('input', 'jp-Chapyter-chatAttachmentPicker', {
      type: 'file',
      multiple: '',
      accept: ACCEPT,
      tabindex: '-1',
      'aria-hidden': 'true'
    });
    this._picker.hidden = true;
    this._picker.addEventListener('change', () => {
      void this.addFiles(Array.from(this._picker.files ?? []));
      this._picker.value = '';
    });
    this.button = button(
      'jp-Chapyter-chatAttach',
      'Attach files',
      '',
      fileUploadIcon,
      'Attach files (or drop or paste them): images up to 5 MB, tables and text up to 20 MB; they go to this Jupyter server only'
    );
    this.button.addEventListener('click', () => this._picker.click());
    this.node.appendChild(this._picker);

    dropTarget.addEventListener('dragover', event => {
      if (
        this.enabled &&
        Array.from(event.dataTransfer?.types ?? []).includes('Files')
      ) {
        event.preventDefault();
        dropTarget.classList.add('jp-mod-dropTarget');
      }
    });
    dropTarget.addEventListener('dragleave', event => {
      if (!dropTarget.contains(event.relatedTarget as Node | null)) {
        dropTarget.classList.remove('jp-mod-dropTarget');
      }
    });
    dropTarget.addEventListener('drop', event => {
      dropTarget.classList.remove('jp-mod-dropTarget');
      const files = transferFiles(event.dataTransfer);
      if (files.length && this.enabled) {
        event.preventDefault();
        void this.addFiles(files);
      }
    });
    input.addEventListener('paste', event => {
      const files = transferFiles(event.clipboardData);
      if (files.length && this.enabled) {
        // A pasted file is attached; pasted text stays the input's.
        event.preventDefault();
        void this.addFiles(files);
      }
    });
    pending.changed.connect(this.update, this);
    this.update();
  }

  /** The tray's node (chips and refusal line). */
  readonly node: HTMLElement;
  /** The paperclip button, which opens the file picker. */
  readonly button: HTMLButtonElement;

  /** Whether files may be added (a notebook is open, the chat is on). */
  get enabled(): boolean {
    return !this.button.disabled;
  }
  set enabled(value: boolean) {
    this.button.disabled = !value;
  }

  /** Check, read and add files; each refused one says why on the tray's line. */
  async addFiles(files: readonly File[]): Promise<void> {
    for (const file of files) {
      if (this.pending.admit(file)) {
        continue;
      }
      try {
        this.pending.add(await readAttachment(file));
      } catch (error) {
        console.warn('chapyter-ext: could not read an attachment', error);
      }
    }
  }

  /** Draw the files and the refusal line. */
  update(): void {
    this._chips.textContent = '';
    for (const item of this.pending.items) {
      this._chips.appendChild(chip(item, () => this.pending.remove(item.id)));
    }
    this._chips.hidden = !this.pending.items.length;
    const error = this.pending.error;
    this._error.hidden = !error;
    this._error.textContent = error ?? '';
    this.node.hidden = !error && !this.pending.items.length;
  }

  private _chips: HTMLElement;
  private _error: HTMLElement;
  private _picker: HTMLInputElement;
}
