/**
 * The Jupyter server's REST API with a run's token: notebooks written through the contents
 * API, read back as saved, and chat histories cleared.
 */

import { ILabServer } from './servers';

/** The first cell of every notebook that uses `%%ai`. */
export const LOAD_EXT = '%load_ext chapyter_ext';

/** A small DataFrame the chat and agent notebooks start from. */
export const RAIN =
  "import pandas as pd\nrain = pd.DataFrame({'city': ['Oslo', 'Lima', 'Pune'], 'rain_mm': [763, 16, 722]})";

/** One code cell of a test notebook. */
export interface ICellSpec {
  id: string;
  source: string;
}

/** The run's own JupyterLab (started by the global setup). */
export function runLab(): ILabServer {
  return {
    url: process.env.CHAPYTER_UI_LAB_URL!,
    token: process.env.CHAPYTER_UI_TOKEN!
  };
}

/** A call to a Jupyter server's REST API (the run's by default) with its token. */
export async function jupyterApi(
  method: string,
  route: string,
  body?: unknown,
  server: ILabServer = runLab()
): Promise<any> {
  const response = await fetch(`${server.url}${route}`, {
    method,
    headers: {
      Authorization: `token ${server.token}`,
      'Content-Type': 'application/json'
    },
    body: body === undefined ? undefined : JSON.stringify(body)
  });
  if (!response.ok) {
    throw new Error(
      `${method} ${route}: ${response.status} ${await response.text()}`
    );
  }
  return response.status === 204 ? null : response.json();
}

/** An nbformat 4.5 notebook of code cells with the given ids and sources. */
export function notebookJson(cells: ICellSpec[]): object {
  return {
    nbformat: 4,
    nbformat_minor: 5,
    metadata: {
      kernelspec: {
        name: 'python3',
        display_name: 'Python 3 (ipykernel)',
        language: 'python'
      },
      language_info: { name: 'python' }
    },
    cells: cells.map(cell => ({
      id: cell.id,
      cell_type: 'code',
      source: cell.source,
      metadata: {},
      outputs: [],
      execution_count: null
    }))
  };
}

/**
 * Save a notebook of code cells through the contents API (of the run's JupyterLab, or
 * `server`); returns its path (`name.ipynb`).
 */
export async function createNotebook(
  name: string,
  cells: ICellSpec[],
  server: ILabServer = runLab()
): Promise<string> {
  const file = `${name}.ipynb`;
  await jupyterApi(
    'PUT',
    `/api/contents/${encodeURIComponent(file)}`,
    { type: 'notebook', format: 'json', content: notebookJson(cells) },
    server
  );
  return file;
}

/** Forget the chat history of a notebook's path (a history outlives its test). */
export async function clearChat(file: string): Promise<void> {
  await jupyterApi(
    'DELETE',
    `/chapyter-ext/history?notebook=${encodeURIComponent(file)}`
  );
}

/** A notebook (see `createNotebook`) with no chat history. */
export async function chatNotebook(
  name: string,
  cells: ICellSpec[]
): Promise<string> {
  const file = await createNotebook(name, cells);
  await clearChat(file);
  return file;
}

/** The notebook as saved on disk (contents API). */
export async function savedNotebook(file: string): Promise<any> {
  const data = await jupyterApi(
    'GET',
    `/api/contents/${encodeURIComponent(file)}?content=1`
  );
  return data.content;
}
