/** `POST chapyter-ext/complete`, streamed: the suggestion's events, over `request.ts`. */

import { decodeChunks, readEvents } from '../common/sse';
import { requestResponse, ServerAPIError } from '../request';
import {
  CompletionEvent,
  ICompletionBody,
  parseCompletionEvent
} from './logic';

/** Ask for a suggestion; its events as they arrive. Aborting `signal` ends the request. */
export async function* streamCompletion(
  body: ICompletionBody,
  signal: AbortSignal
): AsyncGenerator<CompletionEvent> {
  let response: Response;
  try {
    response = await requestResponse('complete', {
      method: 'POST',
      body: JSON.stringify(body),
      headers: { Accept: 'text/event-stream' },
      signal
    });
  } catch (error) {
    if (signal.aborted) {
      return;
    }
    if (error instanceof ServerAPIError) {
      yield { type: 'error', kind: error.kind, message: error.message };
      return;
    }
    throw error;
  }
  if (!response.body) {
    yield {
      type: 'error',
      kind: 'bad_response',
      message: 'The suggestion has no body to stream.'
    };
    return;
  }
  try {
    for await (const event of readEvents(decodeChunks(response.body))) {
      const parsed = parseCompletionEvent(event);
      if (parsed) {
        yield parsed;
      }
    }
  } catch (error) {
    if (signal.aborted) {
      return;
    }
    yield {
      type: 'error',
      kind: 'network',
      message: `The suggestion's stream broke: ${(error as Error).message}`
    };
  }
}
