import {
  decodeChunks,
  IServerSentEvent,
  readEvents,
  SSEParser
} from '../common/sse';
import { collect, fromArray } from './streams';

function parseAll(chunks: string[]): IServerSentEvent[] {
  const parser = new SSEParser();
  const events: IServerSentEvent[] = [];
  for (const chunk of chunks) {
    events.push(...parser.push(chunk));
  }
  events.push(...parser.end());
  return events;
}

const STREAM =
  'event: start\ndata: {"chat_id": "c1", "message_id": "m1", "model": "fake"}\n\n' +
  ': keepalive\n\n' +
  'event: token\ndata: {"text": "Hello, "}\n\n' +
  'event: token\ndata: {"text": "wörld ✓\\n"}\n\n' +
  'event: done\ndata: {"message_id": "m1", "text": "Hello, wörld ✓\\n"}\n\n';

const EXPECTED: IServerSentEvent[] = [
  {
    event: 'start',
    data: '{"chat_id": "c1", "message_id": "m1", "model": "fake"}'
  },
  { event: 'token', data: '{"text": "Hello, "}' },
  { event: 'token', data: '{"text": "wörld ✓\\n"}' },
  { event: 'done', data: '{"message_id": "m1", "text": "Hello, wörld ✓\\n"}' }
];

describe('SSEParser', () => {
  it('reads the events of a whole stream', () => {
    expect(parseAll([STREAM])).toEqual(EXPECTED);
  });

  it('gives the same events wherever the chunks are cut', () => {
    for (let i = 0; i <= STREAM.length; i++) {
      expect(parseAll([STREAM.slice(0, i), STREAM.slice(i)])).toEqual(EXPECTED);
    }
  });

  it('gives the same events when every character is its own chunk', () => {
    expect(parseAll(Array.from(STREAM))).toEqual(EXPECTED);
  });

  it('reads CRLF and CR line ends, also with CR and LF in different chunks', () => {
    const crlf = STREAM.replace(/\n/g, '\r\n');
    expect(parseAll([crlf])).toEqual(EXPECTED);
    for (let i = 0; i <= crlf.length; i++) {
      expect(parseAll([crlf.slice(0, i), crlf.slice(i)])).toEqual(EXPECTED);
    }
    expect(parseAll([STREAM.replace(/\n/g, '\r')])).toEqual(EXPECTED);
  });

  it('joins data lines, ignores comments and unknown fields, drops a byte order mark', () => {
    const events = parseAll([
      '\uFEFFretry: 100\nfoo: bar\ndata: one\ndata:two\n: note\n\n',
      'data\n\n',
      'id: 7\nevent: x\ndata: y\n\n'
    ]);
    expect(events).toEqual([
      { event: 'message', data: 'one\ntwo' },
      { event: 'message', data: '' },
      { event: 'x', data: 'y', id: '7' }
    ]);
  });

  it('drops an event the stream cut before its blank line, and events without data', () => {
    expect(parseAll(['event: token\n\n', 'event: done\ndata: {}\n'])).toEqual(
      []
    );
  });
});

describe('decodeChunks', () => {
  it('keeps a character whole when its bytes are split across chunks', async () => {
    const bytes = new TextEncoder().encode('data: {"text": "✓ é 😀"}\n\n');
    const chunks = Array.from(bytes, b => new Uint8Array([b]));
    const text = (await collect(decodeChunks(fromArray(chunks)))).join('');
    expect(text).toBe('data: {"text": "✓ é 😀"}\n\n');
  });

  it('reads a ReadableStream-like body', async () => {
    const parts = [
      new TextEncoder().encode('ab'),
      new TextEncoder().encode('c')
    ];
    let released = false;
    const body = {
      getReader: () => ({
        read: async () =>
          parts.length
            ? { done: false, value: parts.shift() }
            : { done: true, value: undefined },
        releaseLock: () => {
          released = true;
        }
      })
    } as unknown as ReadableStream<Uint8Array>;
    expect((await collect(decodeChunks(body))).join('')).toBe('abc');
    expect(released).toBe(true);
  });
});

describe('readEvents', () => {
  it('turns text chunks into events', async () => {
    const chunks = STREAM.match(/[\s\S]{1,7}/g)!;
    expect(await collect(readEvents(fromArray(chunks)))).toEqual(EXPECTED);
  });
});
