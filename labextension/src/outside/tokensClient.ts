/**
 * Outside agents' tokens on the server (`GET`/`POST outside/tokens`, `DELETE outside/tokens/ID`)
 * and the client configuration a new token goes into. No DOM: the view is `tokensView.ts`.
 */

import { URLExt } from '@jupyterlab/coreutils';
import { ServerConnection } from '@jupyterlab/services';

import { requestAPI } from '../request';

/** A token as listed: never its secret. */
export interface IOutsideToken {
  id: string;
  name: string;
  /** ISO 8601. */
  created: string;
  /** ISO 8601, or null when it was never used. */
  last_used: string | null;
}

/** A token just created: its secret, shown once. */
export interface ICreatedToken {
  id: string;
  name: string;
  token: string;
}

/** The server calls the view makes (replaced by fakes in tests). */
export interface ITokensClient {
  list(): Promise<IOutsideToken[]>;
  create(name: string): Promise<ICreatedToken>;
  revoke(id: string): Promise<void>;
}

/** The server's tokens through chapyter-ext's routes. */
export const serverTokens: ITokensClient = {
  list: async () =>
    (await requestAPI<{ tokens: IOutsideToken[] }>('outside/tokens')).tokens,
  create: name =>
    requestAPI<ICreatedToken>('outside/tokens', {
      method: 'POST',
      body: JSON.stringify({ name })
    }),
  revoke: async id => {
    await requestAPI<null>(`outside/tokens/${encodeURIComponent(id)}`, {
      method: 'DELETE'
    });
  }
};

/** The MCP endpoint of this Jupyter server (its base_url included). */
export function mcpEndpoint(
  baseUrl: string = ServerConnection.makeSettings().baseUrl
): string {
  return URLExt.join(baseUrl, 'chapyter-ext', 'mcp');
}

/** A server name for a client's configuration: letters, digits, `-` and `_`. */
export function serverKey(name: string): string {
  const key = name
    .trim()
    .toLowerCase()
    .replace(/[^a-z0-9_-]+/g, '-')
    .replace(/^-+|-+$/g, '');
  return key || 'jupyter';
}

/** The ready `mcpServers` JSON (streamable HTTP with the token in its header). */
export function mcpServersJSON(
  name: string,
  token: string,
  endpoint: string = mcpEndpoint()
): string {
  const servers = {
    mcpServers: {
      [serverKey(name)]: {
        type: 'http',
        url: endpoint,
        headers: { Authorization: `Bearer ${token}` }
      }
    }
  };
  return JSON.stringify(servers, null, 2);
}

/** A date as the list shows it ("never" for none; the text as is when it is no date). */
export function shownDate(iso: string | null): string {
  if (!iso) {
    return 'never';
  }
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : date.toLocaleString();
}
