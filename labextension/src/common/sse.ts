/**
 * Server-sent events read from a streamed `fetch` body: pure functions, no DOM.
 *
 * `EventSource` cannot send a POST body or JupyterLab's auth headers, so the chat reads the
 * event stream itself. Network chunks end anywhere (inside a line, between `\r` and `\n`,
 * inside a multi-byte character), so both the decoder and the parser keep what is left over.
 */

/** One event of the stream. */
export interface IServerSentEvent {
  /** The `event:` field ("message" when absent). */
  event: string;
  /** The `data:` lines, joined with "\n". */
  data: string;
  /** The `id:` field, if any. */
  id?: string;
}

/** Turns text chunks into events, per the WHATWG event-stream rules. */
export class SSEParser {
  /** Feed a chunk; returns the events it completed. */
  push(chunk: string): IServerSentEvent[] {
    if (this._first) {
      this._first = false;
      chunk = chunk.replace(/^\uFEFF/, '');
    }
    this._buffer += chunk;
    const events: IServerSentEvent[] = [];
    let start = 0;
    for (;;) {
      const cr = this._buffer.indexOf('\r', start);
      const lf = this._buffer.indexOf('\n', start);
      let end: number;
      let next: number;
      if (cr < 0 && lf < 0) {
        break;
      }
      if (cr >= 0 && (lf < 0 || cr < lf)) {
        if (cr === this._buffer.length - 1) {
          // A lone "\r" at the end may be half of "\r\n": wait for the next chunk.
          break;
        }
        end = cr;
        next = this._buffer[cr + 1] === '\n' ? cr + 2 : cr + 1;
      } else {
        end = lf;
        next = lf + 1;
      }
      const event = this._line(this._buffer.slice(start, end));
      if (event) {
        events.push(event);
      }
      start = next;
    }
    this._buffer = this._buffer.slice(start);
    return events;
  }

  /** The stream ended: an event without its closing blank line is dropped, as browsers do. */
  end(): IServerSentEvent[] {
    if (this._buffer.endsWith('\r')) {
      const events = this.push('\n');
      this._buffer = '';
      return events;
    }
    this._buffer = '';
    return [];
  }

  private _line(line: string): IServerSentEvent | null {
    if (line === '') {
      return this._dispatch();
    }
    if (line.startsWith(':')) {
      return null; // a comment: the server's keepalive
    }
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) {
      value = value.slice(1);
    }
    switch (field) {
      case 'event':
        this._event = value;
        break;
      case 'data':
        this._data.push(value);
        break;
      case 'id':
        if (!value.includes('\0')) {
          this._id = value;
        }
        break;
      default:
        break; // "retry" and unknown fields mean nothing here
    }
    return null;
  }

  private _dispatch(): IServerSentEvent | null {
    const data = this._data;
    const event = this._event;
    this._data = [];
    this._event = '';
    if (!data.length) {
      return null;
    }
    const result: IServerSentEvent = {
      event: event || 'message',
      data: data.join('\n')
    };
    if (this._id !== undefined) {
      result.id = this._id;
    }
    return result;
  }

  private _buffer = '';
  private _first = true;
  private _event = '';
  private _data: string[] = [];
  private _id: string | undefined = undefined;
}

/** UTF-8 text chunks of a byte stream, a character split across chunks kept whole. */
export async function* decodeChunks(
  chunks: AsyncIterable<Uint8Array> | ReadableStream<Uint8Array>
): AsyncGenerator<string> {
  const decoder = new TextDecoder('utf-8');
  if (isReadableStream(chunks)) {
    const reader = chunks.getReader();
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) {
          break;
        }
        const text = decoder.decode(value, { stream: true });
        if (text) {
          yield text;
        }
      }
    } finally {
      reader.releaseLock();
    }
  } else {
    for await (const value of chunks) {
      const text = decoder.decode(value, { stream: true });
      if (text) {
        yield text;
      }
    }
  }
  const rest = decoder.decode();
  if (rest) {
    yield rest;
  }
}

function isReadableStream(
  value: AsyncIterable<Uint8Array> | ReadableStream<Uint8Array>
): value is ReadableStream<Uint8Array> {
  return typeof (value as ReadableStream<Uint8Array>).getReader === 'function';
}

/** Events of a stream of text chunks. */
export async function* readEvents(
  chunks: AsyncIterable<string>
): AsyncGenerator<IServerSentEvent> {
  const parser = new SSEParser();
  for await (const chunk of chunks) {
    for (const event of parser.push(chunk)) {
      yield event;
    }
  }
  for (const event of parser.end()) {
    yield event;
  }
}
