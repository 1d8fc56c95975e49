/**
 * Attachments without DOM: which files may go with a chat message (images, tables, text),
 * their size bounds and one-line refusals, the files waiting in the composer, and the one
 * function that puts them in a request body ({@link attachmentsField}). The files are read
 * in `attachments.ts`; they go only to the chat's own route on the Jupyter server.
 */

import { ISignal, Signal } from '@lumino/signaling';

import type { IAttachment, IAttachmentNote } from './tokens';

export type { IAttachment, IAttachmentNote };

/** What a file is to the chat. */
export type AttachmentKind = 'image' | 'table' | 'text';

/** Largest image, in bytes (5 MB). */
export const IMAGE_LIMIT = 5 * 1024 * 1024;
/** Largest table or text file, in bytes (20 MB). */
export const FILE_LIMIT = 20 * 1024 * 1024;
/** Most files with one message. */
export const MAX_ATTACHMENTS = 10;
/** Most bytes of the files of one message together (20 MB), as the server bounds them. */
export const TOTAL_LIMIT = 20 * 1024 * 1024;
/** Most sent files whose data this page keeps (for "Load as variable"). */
export const MAX_KEPT = 20;

/** Images by extension, with their MIME types (no SVG: it can carry script). */
const IMAGES: { [ext: string]: string } = {
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp'
};

/** Tables by extension (a browser may call a CSV "application/vnd.ms-excel"). */
const TABLES: { [ext: string]: string } = {
  csv: 'text/csv',
  tsv: 'text/tab-separated-values',
  json: 'application/json',
  parquet: 'application/vnd.apache.parquet',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  xls: 'application/vnd.ms-excel'
};

/** Text files by extension, beyond what the browser types as `text/*`. */
const TEXTS = new Set([
  'txt',
  'md',
  'py',
  'r',
  'sql',
  'log',
  'yaml',
  'yml',
  'toml',
  'ini',
  'cfg',
  'xml',
  'html',
  'js',
  'ts',
  'sh'
]);

/** What the refusal of an unknown kind of file lists. */
const KINDS_LINE =
  'images (PNG, JPEG, GIF, WebP), tables (CSV, TSV, JSON, Parquet, Excel) and text files';

/** The extension of `name`, lower case ('' when none). */
function extension(name: string): string {
  const dot = name.lastIndexOf('.');
  return dot > 0 ? name.slice(dot + 1).toLowerCase() : '';
}

/** What a file is and the MIME type it goes with, from its extension first; null: refused. */
export function classifyFile(
  name: string,
  mime: string
): { kind: AttachmentKind; type: string } | null {
  const ext = extension(name);
  mime = mime.toLowerCase().split(';')[0].trim();
  if (IMAGES[ext]) {
    return { kind: 'image', type: IMAGES[ext] };
  }
  if (TABLES[ext]) {
    return { kind: 'table', type: TABLES[ext] };
  }
  if (TEXTS.has(ext)) {
    return {
      kind: 'text',
      type: mime.startsWith('text/') ? mime : 'text/plain'
    };
  }
  if (ext) {
    // A known extension decides; an unknown one falls to the browser's type only for text.
    return mime.startsWith('text/') ? { kind: 'text', type: mime } : null;
  }
  const image = Object.values(IMAGES).find(type => type === mime);
  if (image) {
    return { kind: 'image', type: image };
  }
  const table = Object.values(TABLES).find(type => type === mime);
  if (table) {
    return { kind: 'table', type: table };
  }
  return mime.startsWith('text/') ? { kind: 'text', type: mime } : null;
}

/** A size for people: `512 B`, `3.4 KB`, `12 MB` (1 KB = 1024 B). */
export function formatSize(bytes: number): string {
  const units = ['B', 'KB', 'MB', 'GB'];
  let value = Math.max(0, bytes);
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  const digits = unit === 0 || value >= 10 ? 0 : 1;
  return `${value.toFixed(digits).replace(/\.0$/, '')} ${units[unit]}`;
}

/** Whether a file may be attached: its kind and type, or the one line refusing it. */
export function checkFile(file: {
  name: string;
  type: string;
  size: number;
}):
  | { ok: true; kind: AttachmentKind; type: string }
  | { ok: false; error: string } {
  const found = classifyFile(file.name, file.type);
  if (!found) {
    return {
      ok: false,
      error: `"${file.name}" cannot be attached: only ${KINDS_LINE} can.`
    };
  }
  const limit = found.kind === 'image' ? IMAGE_LIMIT : FILE_LIMIT;
  if (file.size > limit) {
    const what = found.kind === 'image' ? 'an image' : 'a file';
    const size = formatSize(file.size);
    const over = size === formatSize(limit) ? `over ${size}` : size;
    return {
      ok: false,
      error: `"${file.name}" is ${over}: ${what} can be at most ${formatSize(limit)}.`
    };
  }
  return { ok: true, ...found };
}

/**
 * The request body's `attachments` field: `{attachments: [{name, type, size, data}]}` when
 * there are files, `{}` otherwise (the body then has no such field at all).
 */
export function attachmentsField(files: readonly IAttachment[]): {
  attachments?: IAttachment[];
} {
  if (!files.length) {
    return {};
  }
  return {
    attachments: files.map(({ name, type, size, data }) => ({
      name,
      type,
      size,
      data
    }))
  };
}

/** What the sent message keeps of its files (no data); undefined when there are none. */
export function attachmentNotes(
  files: readonly IAttachmentNote[]
): IAttachmentNote[] | undefined {
  return files.length
    ? files.map(({ name, type, size }) => ({ name, type, size }))
    : undefined;
}

/** The notes of a stored message as the history serves them; undefined when none are valid. */
export function notesFromServer(value: unknown): IAttachmentNote[] | undefined {
  if (!Array.isArray(value)) {
    return undefined;
  }
  const notes = value.filter(
    (note): note is IAttachmentNote =>
      !!note &&
      typeof note.name === 'string' &&
      typeof note.type === 'string' &&
      typeof note.size === 'number'
  );
  return attachmentNotes(notes);
}

/** The data of a `data:` URL (what FileReader's `readAsDataURL` gives), base64. */
export function base64OfDataUrl(url: string): string {
  const comma = url.indexOf(',');
  return comma < 0 ? '' : url.slice(comma + 1);
}

/** A file waiting in the composer, with an id to remove it by. */
export interface IPendingAttachment extends IAttachment {
  /** Unique in this page. */
  readonly id: string;
  /** What it is to the chat. */
  readonly kind: AttachmentKind;
}

let pendingIds = 0;

/** The files attached to the message being written, and the last refusal line. */
export class PendingAttachments {
  /** The files or the refusal line changed. */
  get changed(): ISignal<this, void> {
    return this._changed;
  }

  /** The files, in the order they were added. */
  get items(): readonly IPendingAttachment[] {
    return this._items;
  }

  /** The last file refused, one line, or null. */
  get error(): string | null {
    return this._error;
  }

  /**
   * Check a file before it is read: null when it may be read and added, else the refusal
   * (also kept as {@link error}).
   */
  admit(file: { name: string; type: string; size: number }): string | null {
    const checked = checkFile(file);
    const total = this._items.reduce((sum, item) => sum + item.size, 0);
    const error = !checked.ok
      ? checked.error
      : this._items.length >= MAX_ATTACHMENTS
        ? `"${file.name}" was not attached: at most ${MAX_ATTACHMENTS} files go with one message.`
        : total + file.size > TOTAL_LIMIT
          ? `"${file.name}" was not attached: the files of one message can be at most ${formatSize(TOTAL_LIMIT)} together.`
          : null;
    if (error) {
      this._error = error;
      this._changed.emit();
    }
    return error;
  }

  /** Add a file that was read (checked again); the new entry, or null when refused. */
  add(file: IAttachment): IPendingAttachment | null {
    if (this.admit(file)) {
      return null;
    }
    const checked = checkFile(file);
    if (!checked.ok) {
      return null;
    }
    pendingIds += 1;
    const entry: IPendingAttachment = {
      ...file,
      type: checked.type,
      kind: checked.kind,
      id: `attachment-${pendingIds}`
    };
    this._items = [...this._items, entry];
    this._error = null;
    this._changed.emit();
    return entry;
  }

  /** Remove a file; false when it is not there. */
  remove(id: string): boolean {
    const kept = this._items.filter(item => item.id !== id);
    if (kept.length === this._items.length) {
      return false;
    }
    this._items = kept;
    this._changed.emit();
    return true;
  }

  /** Hide the refusal line. */
  dismissError(): void {
    if (this._error) {
      this._error = null;
      this._changed.emit();
    }
  }

  /** The files sent in this page, kept in memory until it reloads. */
  readonly sent = new SentFiles();

  /** The files, for the message being sent (kept in {@link sent}); the composer is left empty. */
  take(): IPendingAttachment[] {
    const taken = this._items;
    this.sent.keep(taken);
    if (taken.length || this._error) {
      this._items = [];
      this._error = null;
      this._changed.emit();
    }
    return [...taken];
  }

  private _items: readonly IPendingAttachment[] = [];
  private _error: string | null = null;
  private _changed = new Signal<this, void>(this);
}

/** The key of a file among the sent ones: its name, type and size (what a note keeps). */
function sentKey(note: IAttachmentNote): string {
  return JSON.stringify([note.name, note.type, note.size]);
}

/**
 * The data of the files sent from this page, found again by a message's note (name, type,
 * size); only in memory, so after a reload a file is no longer here. At most
 * {@link MAX_KEPT}, the oldest let go first.
 */
export class SentFiles {
  /** Keep the data of `files`. */
  keep(files: readonly IAttachment[]): void {
    for (const { name, type, size, data } of files) {
      const key = sentKey({ name, type, size });
      this._files.delete(key);
      this._files.set(key, { name, type, size, data });
    }
    while (this._files.size > MAX_KEPT) {
      this._files.delete(this._files.keys().next().value as string);
    }
  }

  /** The file a message's note names, or null when this page no longer has it. */
  find(note: IAttachmentNote): IAttachment | null {
    return this._files.get(sentKey(note)) ?? null;
  }

  private _files = new Map<string, IAttachment>();
}
