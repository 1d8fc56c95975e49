/** `POST chapyter-ext/complete`, streamed: the suggestion's events, over `request.ts`. */

import { postEventStream } from '../common/eventStream';
import { readEvents } from '../common/sse';
import { ServerAPIError } from '../request';
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
  let chunks: AsyncIterable<string>;
  try {
    chunks = await postEventStream('complete', body, signal);
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
  try {
    for await (const event of readEvents(chunks)) {
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
