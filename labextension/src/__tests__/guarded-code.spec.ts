/**
 * The browser follows the server's guard rails: the verdicts of an answer's code blocks come
 * with the `done` event and the history (malformed ones dropped, so their blocks are not
 * offered to run), are found by the same key the server computes, and a held "Apply to the
 * Nth cell" carries why; cells are named by place, never like an execution count.
 */

import { cellName, ordinal } from '../cellNames';
import { codeChecks, decodeEvent, IDoneEvent } from '../common/events';
import { applyEvent, messageFromServer, newThread } from '../chat/thread';
import { IChatMessage } from '../chat/tokens';
import { codeBlockKey } from '../contract';
import { ChatExtension, IChatExtensionOptions } from '../chat/extension';

const GOOD = {
  block_id: codeBlockKey('print(x)'),
  runnable: true,
  problem: ''
};
const BAD = {
  block_id: codeBlockKey('print(x'),
  runnable: false,
  problem: "it does not parse (line 1: '(' was never closed)"
};

describe('code-block verdicts', () => {
  it('come with the done event', () => {
    const done = decodeEvent({
      event: 'done',
      data: JSON.stringify({
        message_id: 'm',
        text: 't',
        status: 'complete',
        checks: [GOOD, BAD, { block_id: 1 }, 'junk', { runnable: true }]
      })
    }) as IDoneEvent;
    expect(done.checks).toEqual([GOOD, BAD]);
    const none = decodeEvent({
      event: 'done',
      data: JSON.stringify({ message_id: 'm', text: 't', status: 'complete' })
    }) as IDoneEvent;
    expect(none.checks).toBeUndefined();
  });

  it('are kept by the reply and come back from the history', () => {
    const thread = newThread('a.ipynb');
    const reply: IChatMessage = {
      id: 'local',
      role: 'assistant',
      content: '',
      model: '',
      created: '',
      status: 'streaming'
    };
    applyEvent(thread, reply, {
      type: 'done',
      messageId: 'm',
      text: 't',
      status: 'complete',
      checks: [BAD]
    });
    expect(reply.checks).toEqual([BAD]);
    const stored = messageFromServer({
      id: 'm',
      role: 'assistant',
      content: 't',
      checks: [GOOD, { block_id: 'x', runnable: 'yes' }] as any
    });
    expect(stored.checks).toEqual([GOOD]);
    expect(messageFromServer({ id: 'n', role: 'assistant' }).checks).toBe(
      undefined
    );
  });

  it('are matched to a block by the key the server computes', () => {
    // The lexer's reading of an indented block keys the same as the server's.
    expect(codeBlockKey('  print(x)\n')).toBe(GOOD.block_id);
    expect(codeChecks([GOOD])[0].block_id).toBe(codeBlockKey('print(x)'));
    expect(codeBlockKey('print(x)')).not.toBe(BAD.block_id);
  });
});

describe('Apply to the Nth cell', () => {
  it('carries why the code must not run at once', () => {
    const seen: unknown[] = [];
    const chat = new ChatExtension({} as IChatExtensionOptions);
    chat.addCodeAction((_code, origin) => {
      seen.push(origin);
      return { label: `Apply to ${cellName(2)}`, apply: () => undefined };
    });
    const hold = 'waits for your review (setting: Local review)';
    expect(chat.codeOffer('x = 1', { model: 'm', hold })?.label).toBe(
      'Apply to the 2nd cell'
    );
    expect(seen).toEqual([{ model: 'm', hold }]);
  });
});

describe('cell names', () => {
  it.each([
    [1, '1st'],
    [2, '2nd'],
    [3, '3rd'],
    [4, '4th'],
    [11, '11th'],
    [12, '12th'],
    [13, '13th'],
    [21, '21st'],
    [102, '102nd'],
    [111, '111th']
  ])('%d is %s', (n, text) => {
    expect(ordinal(n)).toBe(text);
  });

  it('name a place, not an execution count', () => {
    expect(cellName(5)).toBe('the 5th cell');
  });
});
