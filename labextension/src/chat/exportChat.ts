/**
 * "Export chat": the current chat as the Markdown the server wrote (redacted there), saved
 * next to its notebook through the contents API, or downloaded by the browser.
 */

import { PathExt } from '@jupyterlab/coreutils';
import { Contents } from '@jupyterlab/services';

/** Where the export of `notebook`'s chat goes: `filename` in the notebook's folder. */
export function exportPath(notebook: string, filename: string): string {
  const folder = PathExt.dirname(notebook);
  return folder ? PathExt.join(folder, filename) : filename;
}

/** Whether the contents manager has a file at `path`. */
export async function fileExists(
  contents: Contents.IManager,
  path: string
): Promise<boolean> {
  try {
    await contents.get(path, { content: false });
    return true;
  } catch {
    return false;
  }
}

/** Write `markdown` to `path` (a text file) through the contents API. */
export async function saveMarkdown(
  contents: Contents.IManager,
  path: string,
  markdown: string
): Promise<void> {
  await contents.save(path, {
    type: 'file',
    format: 'text',
    content: markdown
  });
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
