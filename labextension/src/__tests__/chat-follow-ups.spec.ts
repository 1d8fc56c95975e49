/**
 * @jest-environment jsdom
 */

/**
 * The follow-ups queue: a message sent while an answer streams, in chat or agent
 * mode, is queued in its notebook's thread and goes when the answer completes; a stopped or
 * failed answer sends nothing and keeps the queue; each queued message can be removed (or,
 * once nothing goes by itself, sent by hand).
 */

// The icons' module ships as ES modules only, which jest cannot load: buttons without icons.
jest.mock('@jupyterlab/ui-components', () => ({ fileUploadIcon: null }));

import { ChatEvent } from '../common/events';
import { ComposerExtras } from '../chat/composer';
import { FollowUpQueue, sendsFollowUp } from '../chat/followUpQueue';
import { FollowUpsView, sendLabel, shortText } from '../chat/followUps';
import { ChatModel } from '../chat/model';
import { IChatMessage, IChatRequest, IChatTurnHook } from '../chat/tokens';
import { FakeClient, flush, makeModel, ManualStream } from './chatFakes';

const done = (text: string): ChatEvent => ({
  type: 'done',
  messageId: `m-${text}`,
  text,
  status: 'complete'
});

async function streaming(): Promise<{ client: FakeClient; model: ChatModel }> {
  const client = new FakeClient();
  const model = makeModel(client);
  await model.setNotebook('a.ipynb');
  void model.send('one');
  await flush();
  expect(model.state).toBe('streaming');
  return { client, model };
}

/** End the stream `index` of `client` with a complete answer. */
async function complete(client: FakeClient, index: number): Promise<void> {
  client.streams[index].send(done(`answer ${index}`));
  client.streams[index].end();
  await flush();
}

describe('FollowUpQueue', () => {
  it('keeps one queue per key, oldest first, and removes by id from any', () => {
    const queue = new FollowUpQueue<object>();
    const a = {};
    const b = {};
    let changes = 0;
    queue.changed.connect(() => changes++);
    const first = queue.add(a, 'first');
    queue.add(a, 'second');
    const other = queue.add(b, 'other');
    expect(queue.items(a).map(q => q.text)).toEqual(['first', 'second']);
    expect(queue.items(b).map(q => q.text)).toEqual(['other']);
    expect(queue.items(null)).toEqual([]);
    expect(queue.remove(other.id)).toBe(other);
    expect(queue.items(b)).toEqual([]);
    expect(queue.remove(other.id)).toBeNull();
    expect(queue.remove(first.id)?.text).toBe('first');
    expect(queue.items(a).map(q => q.text)).toEqual(['second']);
    expect(changes).toBe(5);
  });

  it('gives the next message only after a complete answer', () => {
    const queue = new FollowUpQueue<object>();
    const key = {};
    queue.add(key, 'one');
    queue.add(key, 'two');
    expect(queue.next(key, 'stopped')).toBeNull();
    expect(queue.next(key, 'error')).toBeNull();
    expect(queue.items(key)).toHaveLength(2);
    expect(queue.next(key, 'complete')?.text).toBe('one');
    expect(queue.next(key, 'complete')?.text).toBe('two');
    expect(queue.next(key, 'complete')).toBeNull();
  });

  it.each([
    ['complete', true],
    ['stopped', false],
    ['error', false],
    ['streaming', false]
  ] as const)('after %s sends the next: %s', (status, sends) => {
    expect(sendsFollowUp(status)).toBe(sends);
  });
});

describe('ChatModel queue', () => {
  it('queues a message sent while the answer streams and sends it when it completes', async () => {
    const { client, model } = await streaming();
    expect(await model.send('two')).toBe(true);
    expect(await model.send('three')).toBe(true);
    expect(model.queued.map(q => q.text)).toEqual(['two', 'three']);
    expect(client.requests).toHaveLength(1);
    // Queued messages are not in the thread until they go.
    expect(model.messages.map(m => m.content)).toEqual(['one', '']);

    await complete(client, 0);
    expect(client.requests.map(r => r.message)).toEqual(['one', 'two']);
    expect(model.queued.map(q => q.text)).toEqual(['three']);
    expect(model.state).toBe('streaming');

    await complete(client, 1);
    expect(client.requests.map(r => r.message)).toEqual([
      'one',
      'two',
      'three'
    ]);
    await complete(client, 2);
    expect(model.queued).toEqual([]);
    expect(model.state).toBe('idle');
    expect(model.messages.filter(m => m.role === 'user')).toHaveLength(3);
  });

  it('sends nothing after Stop, and keeps the queue', async () => {
    const { client, model } = await streaming();
    await model.send('two');
    await model.stop();
    await flush();
    expect(model.state).toBe('idle');
    expect(model.messages[1].status).toBe('stopped');
    expect(client.requests).toHaveLength(1);
    expect(model.queued.map(q => q.text)).toEqual(['two']);
  });

  it('sends nothing after a failed answer, and keeps the queue', async () => {
    const { client, model } = await streaming();
    await model.send('two');
    client.streams[0].send({ type: 'error', kind: 'model', message: 'boom' });
    await flush();
    expect(model.messages[1].status).toBe('error');
    expect(client.requests).toHaveLength(1);
    expect(model.queued.map(q => q.text)).toEqual(['two']);
  });

  it('keeps each notebook its own queue, and sends only in the notebook shown', async () => {
    const { client, model } = await streaming();
    await model.send('for a');
    await model.setNotebook('b.ipynb');
    expect(model.queued).toEqual([]);
    // a's answer completes while b is shown: its follow-up waits (its context is a's).
    await complete(client, 0);
    expect(client.requests).toHaveLength(1);
    await model.setNotebook('a.ipynb');
    expect(model.queued.map(q => q.text)).toEqual(['for a']);
  });

  it('queues in agent mode too, and the queued message goes as an agent turn', async () => {
    const client = new FakeClient();
    const model = makeModel(client);
    const opened: IChatRequest[] = [];
    const streams: ManualStream[] = [];
    const agent: IChatTurnHook = {
      enabled: true,
      open: async (request: IChatRequest, _: IChatMessage, signal) => {
        opened.push(request);
        const stream = new ManualStream(signal);
        streams.push(stream);
        return stream;
      },
      stop: () => undefined
    };
    model.agent = agent;
    await model.setNotebook('a.ipynb');
    void model.send('analyse');
    await flush();
    expect(await model.send('then plot it')).toBe(true);
    streams[0].send(done('analysed'));
    streams[0].end();
    await flush();
    expect(opened.map(r => r.message)).toEqual(['analyse', 'then plot it']);
    expect(client.requests).toEqual([]);
  });

  it('takes the mentions when queuing, not when the queued message goes', async () => {
    const { client, model } = await streaming();
    let chips = [{ kind: 'variable' as const, name: 'df', label: 'df' }];
    model.mentionsFor = () => {
      const taken = chips;
      chips = [];
      return taken;
    };
    await model.send('describe it');
    chips = [{ kind: 'variable' as const, name: 'other', label: 'other' }];
    await complete(client, 0);
    expect(client.requests[1].mentions?.map(m => m.name)).toEqual(['df']);
  });

  it('carries the files of a queued message into its request', async () => {
    const { client, model } = await streaming();
    const file = { name: 'a.csv', type: 'text/csv', size: 3, data: 'YSxi' };
    await model.send('with a file', [file]);
    await complete(client, 0);
    expect(client.requests[1].attachments).toEqual([file]);
    expect(client.requests[0]).not.toHaveProperty('attachments');
  });
});

describe('FollowUpsView', () => {
  it('shows queued messages below the thread, each removable by a labelled button', async () => {
    const { client, model } = await streaming();
    const view = new FollowUpsView(model);
    expect(view.node.hidden).toBe(true);
    await model.send('two');
    expect(view.node.hidden).toBe(false);
    const item = view.node.querySelector('li')!;
    expect(item.textContent).toContain('Queued');
    expect(item.textContent).toContain('two');
    // While the answer streams, only Remove: the message goes by itself.
    expect(item.querySelectorAll('button')).toHaveLength(1);
    const remove = view.node.querySelector<HTMLButtonElement>(
      'button[aria-label="Remove queued message: two"]'
    )!;
    remove.click();
    expect(model.queued).toEqual([]);
    expect(view.node.hidden).toBe(true);
    await complete(client, 0);
    expect(client.requests).toHaveLength(1);
  });

  it('after Stop, offers Send for each queued message', async () => {
    const { client, model } = await streaming();
    const view = new FollowUpsView(model);
    await model.send('two');
    await model.stop();
    await flush();
    expect(view.node.textContent).toContain('stopped or failed');
    const send = view.node.querySelector<HTMLButtonElement>(
      'button[aria-label="Send queued message now: two"]'
    )!;
    send.click();
    await flush();
    expect(client.requests.map(r => r.message)).toEqual(['one', 'two']);
    expect(model.queued).toEqual([]);
  });

  it('says Queue on Send while an answer streams (ComposerExtras)', async () => {
    const { client, model } = await streaming();
    const panel = document.createElement('div');
    panel.innerHTML =
      '<div class="jp-Chapyter-chatFooter"><div class="jp-Chapyter-chatInputRow">' +
      '<textarea></textarea><button class="jp-Chapyter-chatSend">' +
      '<span class="jp-Chapyter-chatButtonText">Send</span></button></div></div>';
    const send = panel.querySelector<HTMLButtonElement>(
      '.jp-Chapyter-chatSend'
    )!;
    const extras = new ComposerExtras(model, panel);
    expect(send.textContent).toBe('Queue');
    expect(send.getAttribute('aria-label')).toBe(
      'Queue: send when the answer ends'
    );
    // The queue sits first in the footer, right below the thread.
    const footer = panel.querySelector('.jp-Chapyter-chatFooter')!;
    expect(footer.firstElementChild).toBe(extras.followUps.node);
    await complete(client, 0);
    expect(send.textContent).toBe('Send');
    expect(send.hidden).toBe(false);
  });

  it('names long messages briefly in labels', () => {
    expect(shortText('  a\n b ')).toBe('a b');
    expect(shortText('x'.repeat(60))).toHaveLength(40);
    const button = document.createElement('button');
    sendLabel(button, true);
    expect(button.title).toBe('Queue: send when the answer ends (Enter)');
  });
});
