/**
 * A streamed POST to the server extension (`chat`, `agent`, `complete`): the request through
 * `request.ts`, and its body as text chunks for an SSE reader. `EventSource` cannot send a
 * POST body or JupyterLab's auth headers, hence this.
 */

import { requestResponse, ServerAPIError } from '../request';
import { decodeChunks } from './sse';

/**
 * POST `body` as JSON to `endPoint`, asking for an event stream; the answer's text chunks.
 * Rejects with the server's {@link ServerAPIError} when it refuses the request (kind
 * "bad_response" for an answer without a body), or the fetch error (an abort included).
 */
export async function postEventStream(
  endPoint: string,
  body: unknown,
  signal: AbortSignal
): Promise<AsyncIterable<string>> {
  const response = await requestResponse(endPoint, {
    method: 'POST',
    body: JSON.stringify(body),
    headers: { Accept: 'text/event-stream' },
    signal
  });
  if (!response.body) {
    throw new ServerAPIError(
      'bad_response',
      'The answer has no body to stream.',
      null
    );
  }
  return decodeChunks(response.body);
}
