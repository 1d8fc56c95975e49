/**
 * "Export chat": the current chat as the Markdown the server wrote (redacted there), either
 * written next to its notebook by the server itself (`POST history/export`: never through a
 * symbolic link, never outside its root, a file already there replaced only once the user
 * answered a dialog naming it), or downloaded by the browser. Not through the contents API:
 * jupyter_server's save writes through a link that points outside its root.
 */

import type { IExportSaved } from './tokens';

/** What writes the export: the chat's model (`ChatHistoryModel.saveExport`). */
export interface IExportWriter {
  /** Write the current chat; a file already there is replaced only when `replace` is its path. */
  saveExport(replace: string | null): Promise<IExportSaved | null>;
}

/** The question asked before a file is replaced: it names the file. */
export interface IReplaceQuestion {
  /** The dialog's title. */
  title: string;
  /** The dialog's text. */
  body: string;
  /** The file that would be replaced. */
  path: string;
}

/** `bytes` for people: "812 bytes", "1.5 kB", "2.0 MB". */
export function sizeText(bytes: number): string {
  if (bytes < 1000) {
    return bytes === 1 ? '1 byte' : `${bytes} bytes`;
  }
  return bytes < 1e6
    ? `${(bytes / 1e3).toFixed(1)} kB`
    : `${(bytes / 1e6).toFixed(1)} MB`;
}

/** The Replace dialog's words for the file the export found in its way. */
export function replaceQuestion(saved: IExportSaved): IReplaceQuestion {
  const facts: string[] = [];
  if (typeof saved.size === 'number') {
    facts.push(sizeText(saved.size));
  }
  const when = /^(\d{4}-\d\d-\d\d)T(\d\d:\d\d)/.exec(saved.modified ?? '');
  if (when) {
    facts.push(`changed ${when[1]} ${when[2]} UTC`);
  }
  const about = facts.length ? ` (${facts.join(', ')})` : '';
  return {
    title: `Replace ${saved.filename}?`,
    body: `The file ${saved.path}${about} already exists. Replace it with this chat?`,
    path: saved.path
  };
}

/**
 * Export the current chat next to its notebook, asking `ask` (with the file's name) before
 * replacing one: the path written, or null when there was no chat to export or the user kept
 * the file. Rejects with the server's one line when it refuses (a symbolic link, a folder
 * leading outside its root).
 */
export async function exportNextToNotebook(
  writer: IExportWriter,
  ask: (question: IReplaceQuestion) => Promise<boolean>
): Promise<string | null> {
  const first = await writer.saveExport(null);
  if (!first || first.written) {
    return first?.path ?? null;
  }
  if (!(await ask(replaceQuestion(first)))) {
    return null;
  }
  const second = await writer.saveExport(first.path);
  if (second && !second.written) {
    // The notebook moved while the dialog was open: its export goes elsewhere now.
    throw new Error(`${first.path} was not replaced: export the chat again.`);
  }
  return second?.path ?? null;
}

/** Let the browser save `markdown` as `filename` (nothing goes to the server). */
export function downloadMarkdown(filename: string, markdown: string): void {
  const url = URL.createObjectURL(
    new Blob([markdown], { type: 'text/markdown;charset=utf-8' })
  );
  const link = document.createElement('a');
  link.href = url;
  link.download = filename;
  link.hidden = true;
  document.body.appendChild(link);
  link.click();
  link.remove();
  // The download has started by now; the URL is not needed any more.
  setTimeout(() => URL.revokeObjectURL(url), 0);
}
