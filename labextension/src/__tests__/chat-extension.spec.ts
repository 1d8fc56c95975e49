/**
 * The chat as other plugins see it (`IChatExtension`): a mode takes the messages while it is
 * on, message parts are asked per message, Explain's `ask` shows the chat and refuses while
 * it is busy, and the snapshot follows the context setting.
 */

import { ChatExtension } from '../chat/extension';
import { ChatEvent } from '../common/events';
import { IChatMessage, IChatMode, IMessagePart } from '../chat/tokens';
import { Signal } from '@lumino/signaling';
import {
  CONTEXT,
  FakeClient,
  flush,
  makeModel,
  ManualStream
} from './chatFakes';

async function setUp() {
  const client = new FakeClient();
  const model = makeModel(client);
  await model.loadConfig();
  await model.setNotebook('a.ipynb');
  let shown = 0;
  const chat = new ChatExtension({
    model,
    config: () => client.config(),
    snapshot: async () => CONTEXT.snapshot,
    show: () => shown++
  });
  return { client, model, chat, shown: () => shown };
}

function doneEvent(text: string): ChatEvent {
  return { type: 'done', messageId: 'm', text, status: 'complete' };
}

describe('ChatExtension', () => {
  it('hands messages to the mode while it is enabled', async () => {
    const { client, chat } = await setUp();
    const opened: string[] = [];
    const changed = new Signal<object, void>({});
    const mode: IChatMode = {
      enabled: true,
      changed,
      open: async (request, _reply, signal) => {
        opened.push(request.message);
        const stream = new ManualStream(signal);
        stream.send(doneEvent('from the mode'));
        stream.end();
        return stream;
      },
      stop: () => undefined,
      controls: () => ({ node: {} as HTMLElement, update: () => undefined }),
      placeholder: 'Ask the mode',
      chipNote: () => 'Mode: on',
      chipDetails: () => ''
    };
    let emitted = 0;
    chat.changed.connect(() => emitted++);
    chat.setMode(mode);
    expect(chat.mode).toBe(mode);
    expect(emitted).toBe(1);
    await chat.ask('run it');
    expect(opened).toEqual(['run it']);
    expect(client.requests).toHaveLength(0);
  });

  it('shows the chat and sends; refuses while a reply streams', async () => {
    const { client, chat, shown } = await setUp();
    const first = chat.ask('one');
    expect(shown()).toBe(1);
    await expect(chat.ask('two')).rejects.toThrow(/busy/);
    await flush();
    client.streams[0].send(doneEvent('ok'));
    client.streams[0].end();
    await first;
    expect(client.requests.map(r => r.message)).toEqual(['one']);
  });

  it('gives the snapshot only while the context goes by default', async () => {
    const { model, chat } = await setUp();
    expect(await chat.snapshot()).toEqual(CONTEXT.snapshot);
    model.contextDefault = false;
    expect(await chat.snapshot()).toBeNull();
  });

  it('asks every part factory for each message', async () => {
    const { chat } = await setUp();
    const part: IMessagePart = {
      node: {} as HTMLElement,
      pending: null,
      waiting: false,
      update: () => undefined,
      dispose: () => undefined
    };
    chat.addMessagePart(m => (m.role === 'assistant' ? part : null));
    chat.addMessagePart(() => null);
    const message = (role: 'user' | 'assistant'): IChatMessage => ({
      id: 'x',
      role,
      content: '',
      model: '',
      created: '',
      status: 'complete'
    });
    expect(chat.messageParts(message('assistant'))).toEqual([part]);
    expect(chat.messageParts(message('user'))).toEqual([]);
  });

  it('describes the models and the notebook of the chat', async () => {
    const { chat } = await setUp();
    expect(chat.notebook).toBe('a.ipynb');
    expect(chat.modelInfo()?.name).toBe('fast');
    expect((await chat.config()).default).toBe('fast');
  });
});
