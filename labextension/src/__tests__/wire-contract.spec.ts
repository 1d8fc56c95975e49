/**
 * The chat's and agent's streamed events against the wire contract (`events` in
 * `tests/vectors/contract.json`), which `tests/test_wire_contract.py` holds the server to.
 */

import { decodeEvent, EVENT_NAMES, readChatEvents } from '../common/events';
import { collect, fromArray } from './streams';
import { readVectors } from './vectors';

const EVENTS = readVectors('contract.json').events;
const EXAMPLES: [string, string, any][] = EVENTS.types.flatMap((entry: any) =>
  entry.examples.map((example: any) => [
    `${entry.event} (${example.stream})`,
    entry.event,
    example.data
  ])
);

/** The typed event's name for a wire field: `chat_id` -> `chatId`, `needs_approval` -> ... */
function camel(name: string): string {
  return name.replace(/_([a-z])/g, (_m, c: string) => c.toUpperCase());
}

/** The wire's fields the typed events keep in their wire spelling (records, not fields). */
const KEPT = new Set(['steps', 'checks', 'usage']);

describe('the wire contract', () => {
  it('has exactly the event types the client reads', () => {
    const contract = EVENTS.types.map((entry: any) => entry.event).sort();
    expect([...EVENT_NAMES].sort()).toEqual(contract);
  });

  it.each(EXAMPLES)('reads the example of %s', (_label, name, data) => {
    const event = decodeEvent({ event: name, data: JSON.stringify(data) });
    expect(event).not.toBeNull();
    // An example is never read as a malformed event.
    expect(event!.type).toBe(name);
    if (name === 'error') {
      expect(event).toEqual({ type: 'error', ...data });
      return;
    }
    const typed = event as unknown as { [key: string]: unknown };
    for (const [key, value] of Object.entries(data)) {
      const read = typed[KEPT.has(key) ? key : camel(key)];
      // An empty halt or list of steps is read as none (nothing to show).
      const empty = value === '' || (Array.isArray(value) && !value.length);
      expect(read === undefined && empty ? value : read).toEqual(value);
    }
  });

  it('reads every example in one stream, skipping the keep-alive comment', async () => {
    const text = [
      `${EVENTS.keepalive}\n\n`,
      ...EXAMPLES.map(
        ([, name, data]) => `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`
      )
    ];
    const events = await collect(readChatEvents(fromArray(text)));
    expect(events.map(e => e.type)).toEqual(EXAMPLES.map(([, name]) => name));
  });

  it('names every field of every event with a type and a meaning', () => {
    for (const entry of EVENTS.types) {
      expect(entry.streams.length).toBeGreaterThan(0);
      expect(entry.examples.length).toBeGreaterThan(0);
      for (const field of entry.fields) {
        expect(typeof field.required).toBe('boolean');
        expect(field.type).toMatch(/^(string|boolean|number|object)(\[\])?$/);
        expect(field.meaning).toBeTruthy();
      }
    }
  });
});
