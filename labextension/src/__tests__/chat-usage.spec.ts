import { decodeEvent } from '../common/events';
import { applyEvent, loadThread, newThread } from '../chat/thread';
import { IChatMessage } from '../chat/tokens';
import { addUsage, parseUsage, usageText } from '../common/usage';

function reply(): IChatMessage {
  return {
    id: 'local-1',
    role: 'assistant',
    content: '',
    model: '',
    created: '',
    status: 'streaming'
  };
}

describe('usage', () => {
  it('reads the wire form and refuses what is not usage', () => {
    expect(
      parseUsage({ prompt_tokens: 1200, completion_tokens: 34, cost: 0.5 })
    ).toEqual({
      prompt_tokens: 1200,
      completion_tokens: 34,
      total_tokens: 1234,
      cost: 0.5
    });
    expect(parseUsage({ prompt_tokens: -1, cost: 'free' })).toBeUndefined();
    expect(parseUsage('12 tokens')).toBeUndefined();
    expect(parseUsage(null)).toBeUndefined();
  });

  it('writes one short line, with the cost only when priced', () => {
    const used = parseUsage({ prompt_tokens: 1200, completion_tokens: 34 })!;
    expect(usageText(used)).toBe('1,234 tokens (1,200 in, 34 out)');
    expect(usageText({ ...used, cost: 0.00123 })).toBe(
      '1,234 tokens (1,200 in, 34 out), $0.0012'
    );
  });

  it('adds up, keeping a cost when either side has one', () => {
    const a = parseUsage({ prompt_tokens: 10, completion_tokens: 2, cost: 1 });
    const b = parseUsage({ prompt_tokens: 5, completion_tokens: 1 });
    expect(addUsage(a, b)).toEqual({
      prompt_tokens: 15,
      completion_tokens: 3,
      total_tokens: 18,
      cost: 1
    });
    expect(addUsage(null, b)).toEqual(b);
    expect(addUsage(undefined, undefined)).toBeNull();
  });

  it("a done event sets the answer's usage and grows the notebook total", async () => {
    const thread = newThread('a.ipynb');
    await loadThread(thread, async () => ({
      chat_id: 'c1',
      messages: [],
      chats: ['c0', 'c1'],
      usage: { prompt_tokens: 100, completion_tokens: 10, total_tokens: 110 }
    }));
    expect(thread.usage?.total_tokens).toBe(110);
    const done = decodeEvent({
      event: 'done',
      data: JSON.stringify({
        message_id: 'm1',
        text: 'Hi',
        status: 'complete',
        usage: { prompt_tokens: 20, completion_tokens: 5, total_tokens: 25 }
      })
    });
    const answer = reply();
    applyEvent(thread, answer, done!);
    expect(answer.usage?.total_tokens).toBe(25);
    expect(thread.usage?.total_tokens).toBe(135);
  });
});
