import { ChatEvent, decodeEvent, readChatEvents } from '../common/events';
import { collect, fromArray } from './streams';

/** A reply as chapyter_ext/chat/events.py writes it. */
const WIRE =
  'event: start\ndata: {"chat_id": "c9", "message_id": "m9", "model": "fast"}\n\n' +
  'event: notice\ndata: {"message": "Part of the history could not be read."}\n\n' +
  'event: token\ndata: {"text": "Here: "}\n\n' +
  ': keepalive\n\n' +
  'event: token\ndata: {"text": "```python\\nplt.plot(x) ✓\\n```"}\n\n' +
  'event: done\ndata: {"message_id": "m9", "text": "Here: ```python\\nplt.plot(x) ✓\\n```", "status": "complete"}\n\n';

const EXPECTED: ChatEvent[] = [
  { type: 'start', chatId: 'c9', messageId: 'm9', model: 'fast' },
  { type: 'notice', message: 'Part of the history could not be read.' },
  { type: 'token', text: 'Here: ' },
  { type: 'token', text: '```python\nplt.plot(x) ✓\n```' },
  {
    type: 'done',
    messageId: 'm9',
    text: 'Here: ```python\nplt.plot(x) ✓\n```',
    status: 'complete'
  }
];

describe('readChatEvents', () => {
  it('decodes a whole reply into typed events', async () => {
    expect(await collect(readChatEvents(fromArray([WIRE])))).toEqual(EXPECTED);
  });

  it('gives the same events wherever the chunks are cut', async () => {
    for (let i = 0; i <= WIRE.length; i += 3) {
      const chunks = [WIRE.slice(0, i), WIRE.slice(i)];
      expect(await collect(readChatEvents(fromArray(chunks)))).toEqual(
        EXPECTED
      );
    }
    const tiny = WIRE.match(/[\s\S]{1,5}/g)!;
    expect(await collect(readChatEvents(fromArray(tiny)))).toEqual(EXPECTED);
  });

  it('skips events it does not know', async () => {
    const wire =
      'event: progress\ndata: {"step": 1}\n\n' +
      'data: {"text": "no event name"}\n\n' +
      'event: token\ndata: {"text": "kept"}\n\n';
    expect(await collect(readChatEvents(fromArray([wire])))).toEqual([
      { type: 'token', text: 'kept' }
    ]);
  });
});

describe('decodeEvent', () => {
  it('turns unreadable data of a known event into a typed error', () => {
    for (const data of ['{"text": ', '[1, 2]', 'null', '"text"']) {
      expect(decodeEvent({ event: 'token', data })).toEqual({
        type: 'error',
        kind: 'bad_response',
        message: 'The server sent a "token" event that could not be read.'
      });
    }
    expect(
      decodeEvent({ event: 'done', data: '{"status": "complete"}' })
    ).toEqual(expect.objectContaining({ type: 'error', kind: 'bad_response' }));
  });

  it('reads an error event, and a stopped reply', () => {
    expect(
      decodeEvent({
        event: 'error',
        data: '{"kind": "auth", "message": "The key was refused."}'
      })
    ).toEqual({ type: 'error', kind: 'auth', message: 'The key was refused.' });
    expect(
      decodeEvent({
        event: 'done',
        data: '{"message_id": "m", "text": "so far", "status": "stopped"}'
      })
    ).toEqual({
      type: 'done',
      messageId: 'm',
      text: 'so far',
      status: 'stopped'
    });
  });

  it('fills missing fields of a start event with empty strings', () => {
    expect(decodeEvent({ event: 'start', data: '{}' })).toEqual({
      type: 'start',
      chatId: '',
      messageId: '',
      model: ''
    });
  });
});
