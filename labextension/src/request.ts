/**
 * Calls to chapyter-ext's server extension under `{base_url}chapyter-ext/`. Every call goes
 * through `ServerConnection.makeRequest`, which adds the token and the XSRF header.
 */

import { URLExt } from '@jupyterlab/coreutils';
import { ServerConnection } from '@jupyterlab/services';

import { PACKAGE } from './tokens';

/** A call the server answered with an error: `{"error": {"kind", "message"}}`. */
export class ServerAPIError extends Error {
  /** Build one from the parts of the server's error body. */
  constructor(
    readonly kind: string,
    message: string,
    readonly status: number | null
  ) {
    super(message);
    this.name = 'ServerAPIError';
  }
}

/** The URL of an endpoint of the extension, e.g. `history?notebook=a.ipynb`. */
export function apiURL(
  endPoint: string,
  settings: ServerConnection.ISettings = ServerConnection.makeSettings()
): string {
  return URLExt.join(settings.baseUrl, PACKAGE, endPoint);
}

/** The error a failed response carries, read from its JSON body when it has one. */
export async function responseError(
  response: Response
): Promise<ServerAPIError> {
  let kind = 'error';
  let message = `${response.status} ${response.statusText}`.trim();
  try {
    const body = await response.json();
    if (body?.error && typeof body.error.message === 'string') {
      kind = String(body.error.kind ?? kind);
      message = body.error.message;
    } else if (typeof body?.message === 'string' && body.message) {
      message = body.message;
    }
  } catch {
    // Not JSON (a proxy's HTML page): the status line is all there is.
  }
  if (response.status === 404 && kind === 'error') {
    message =
      'The chapyter-ext server extension is not answering (HTTP 404): check ' +
      '`jupyter server extension list` and restart JupyterLab.';
  }
  return new ServerAPIError(kind, message, response.status);
}

/** The raw response of an endpoint; rejects with {@link ServerAPIError} unless it is 2xx. */
export async function requestResponse(
  endPoint: string,
  init: RequestInit = {},
  settings: ServerConnection.ISettings = ServerConnection.makeSettings()
): Promise<Response> {
  let response: Response;
  try {
    response = await ServerConnection.makeRequest(
      apiURL(endPoint, settings),
      init,
      settings
    );
  } catch (error) {
    if (init.signal?.aborted) {
      throw error;
    }
    throw new ServerAPIError(
      'network',
      `Could not reach the Jupyter server: ${(error as Error).message}`,
      null
    );
  }
  if (!response.ok) {
    throw await responseError(response);
  }
  return response;
}

/** Call an endpoint and return its JSON body. */
export async function requestAPI<T>(
  endPoint = '',
  init: RequestInit = {},
  settings: ServerConnection.ISettings = ServerConnection.makeSettings()
): Promise<T> {
  const response = await requestResponse(endPoint, init, settings);
  const text = await response.text();
  if (!text) {
    return null as T;
  }
  try {
    return JSON.parse(text) as T;
  } catch {
    throw new ServerAPIError(
      'bad_response',
      `The server's answer to ${endPoint} is not JSON.`,
      response.status
    );
  }
}
