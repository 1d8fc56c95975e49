/**
 * The chat's wire format, read: server-sent events of `POST chapyter-ext/chat` decoded into
 * typed {@link ChatEvent}s, so the model and the views never parse the wire. The server side
 * is `chapyter_ext/server/events.py`; `sse.ts` is the generic event-stream parser below both.
 */

import { IServerSentEvent, readEvents } from './sse';

/** The reply began: the ids needed to stop it and to continue the chat. */
export interface IStartEvent {
  /** Discriminant. */
  type: 'start';
  /** The chat the reply belongs to. */
  chatId: string;
  /** The reply's id (what `chat/stop` takes). */
  messageId: string;
  /** Name of the model answering. */
  model: string;
}

/** Something the user should be told once, e.g. that part of the history was damaged. */
export interface INoticeEvent {
  /** Discriminant. */
  type: 'notice';
  /** One line. */
  message: string;
}

/** More text of the reply. */
export interface ITokenEvent {
  /** Discriminant. */
  type: 'token';
  /** The new text. */
  text: string;
}

/** The reply ended. */
export interface IDoneEvent {
  /** Discriminant. */
  type: 'done';
  /** The reply's id. */
  messageId: string;
  /** All of the reply (redacted as a whole): replaces what the tokens built. */
  text: string;
  /** Whether it ended by itself or was stopped. */
  status: 'complete' | 'stopped';
}

/** The reply failed, or the stream could not be read (`kind` "bad_response"). */
export interface IErrorEvent {
  /** Discriminant. */
  type: 'error';
  /** What failed: the server's error kind (auth, timeout, ...) or "bad_response". */
  kind: string;
  /** One line. */
  message: string;
}

/** One event of a streamed reply. */
export type ChatEvent =
  IStartEvent | INoticeEvent | ITokenEvent | IDoneEvent | IErrorEvent;

/** The kind of an error event made here, when the stream itself is unreadable. */
export const BAD_RESPONSE = 'bad_response';

function str(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

function badResponse(what: string): IErrorEvent {
  return {
    type: 'error',
    kind: BAD_RESPONSE,
    message: `The server sent ${what} that could not be read.`
  };
}

/**
 * The typed event of one server-sent event: null for events this version does not know
 * (a newer server may add some), an error event for a known one whose data is unreadable.
 */
export function decodeEvent(event: IServerSentEvent): ChatEvent | null {
  if (!['start', 'notice', 'token', 'done', 'error'].includes(event.event)) {
    return null;
  }
  let data: unknown;
  try {
    data = JSON.parse(event.data);
  } catch {
    return badResponse(`a "${event.event}" event`);
  }
  if (!data || typeof data !== 'object' || Array.isArray(data)) {
    return badResponse(`a "${event.event}" event`);
  }
  const d = data as { [key: string]: unknown };
  switch (event.event) {
    case 'start':
      return {
        type: 'start',
        chatId: str(d.chat_id),
        messageId: str(d.message_id),
        model: str(d.model)
      };
    case 'notice':
      return { type: 'notice', message: str(d.message) };
    case 'token':
      return typeof d.text === 'string'
        ? { type: 'token', text: d.text }
        : badResponse('a "token" event');
    case 'done':
      return typeof d.text === 'string'
        ? {
            type: 'done',
            messageId: str(d.message_id),
            text: d.text,
            status: d.status === 'stopped' ? 'stopped' : 'complete'
          }
        : badResponse('a "done" event');
    default:
      return {
        type: 'error',
        kind: str(d.kind) || 'error',
        message: str(d.message)
      };
  }
}

/** The typed events of a stream of text chunks (cut anywhere), in order. */
export async function* readChatEvents(
  chunks: AsyncIterable<string>
): AsyncGenerator<ChatEvent> {
  for await (const event of readEvents(chunks)) {
    const typed = decodeEvent(event);
    if (typed) {
      yield typed;
    }
  }
}
