import { CONTEXT, FakeClient, flush, makeModel, view } from './chatFakes';
import { ChatModel, messageFromServer } from '../chat/model';
import { ChatRequestError, IChatMessage } from '../chat/tokens';

describe('ChatModel history', () => {
  it('loads the history of the active notebook, and again when it changes', async () => {
    const client = new FakeClient();
    client.histories.set(
      'a.ipynb',
      view('chat-a', [
        { id: 'u1', role: 'user', content: 'hi', status: 'complete' },
        { id: 'a1', role: 'assistant', content: 'hello', model: 'fast' }
      ])
    );
    const model = makeModel(client);
    let changes = 0;
    model.changed.connect(() => changes++);

    const loading = model.setNotebook('a.ipynb');
    expect(model.state).toBe('loading');
    await loading;
    expect(model.state).toBe('idle');
    expect(model.chatId).toBe('chat-a');
    expect(model.messages.map(m => [m.role, m.content])).toEqual([
      ['user', 'hi'],
      ['assistant', 'hello']
    ]);
    expect(changes).toBeGreaterThan(0);

    await model.setNotebook('b.ipynb');
    expect(model.chatId).toBe('chat-b.ipynb');
    expect(model.messages).toEqual([]);

    await model.setNotebook('a.ipynb');
    expect(client.calls.filter(c => c.startsWith('history'))).toEqual([
      'history a.ipynb',
      'history b.ipynb',
      'history a.ipynb'
    ]);
    expect(model.messages).toHaveLength(2);
  });

  it('keeps the answer of the last load when loads finish out of order', async () => {
    const client = new FakeClient();
    client.histories.set(
      'a.ipynb',
      view('old', [{ id: 'x', role: 'user', content: 'old' }])
    );
    const model = makeModel(client);
    client.holdHistory = true;
    const first = model.setNotebook('a.ipynb');
    await flush();
    client.histories.set(
      'a.ipynb',
      view('new', [{ id: 'y', role: 'user', content: 'new' }])
    );
    const second = model.reloadHistory();
    await flush();
    // The second load answers first, then the first one.
    client.held[1]();
    await second;
    client.held[0]();
    await first;
    expect(model.chatId).toBe('new');
    expect(model.messages.map(m => m.content)).toEqual(['new']);
  });

  it('shows a failed history load as an error line', async () => {
    const client = new FakeClient();
    client.history = async () => {
      throw new ChatRequestError(
        'bad_request',
        "'notebook' is not a valid path."
      );
    };
    const model = makeModel(client);
    await model.setNotebook('../x.ipynb');
    expect(model.error).toBe(
      "Could not load the chat history: 'notebook' is not a valid path."
    );
    expect(model.state).toBe('idle');
  });

  it('starts a new chat and clears history through the server', async () => {
    const client = new FakeClient();
    client.histories.set(
      'a.ipynb',
      view('chat-a', [{ id: 'u', role: 'user', content: 'q' }])
    );
    const model = makeModel(client);
    await model.setNotebook('a.ipynb');
    await model.newChat();
    expect(model.chatId).toBe('new-a.ipynb');
    expect(model.messages).toEqual([]);
    await model.clearHistory();
    expect(model.chatId).toBe('cleared-a.ipynb');
  });

  it('reads stored messages with defaults and never as still streaming', () => {
    expect(
      messageFromServer({
        id: 'a',
        role: 'assistant',
        status: 'streaming' as any
      })
    ).toEqual(
      expect.objectContaining({ status: 'stopped', content: '', model: '' })
    );
    expect(
      messageFromServer({ id: 'b', role: 'assistant', status: 'error' }).error
    ).toBe('This reply failed.');
  });
});

describe('ChatModel config', () => {
  it('offers the models of the server, the default selected', async () => {
    const client = new FakeClient();
    const model = makeModel(client);
    await model.loadConfig();
    expect(model.models.map(m => m.name)).toEqual(['fast', 'local']);
    expect(model.selectedModel).toBe('fast');
    model.selectedModel = 'local';
    expect(model.selectedModel).toBe('local');
    model.selectedModel = 'unknown';
    expect(model.selectedModel).toBe('local');
    expect(model.modelInfo()?.model).toBe('llama3');
  });

  it('selects the model picked last time when the server offers it', async () => {
    const client = new FakeClient();
    const model = makeModel(client);
    const picked: (string | null)[] = [];
    model.modelSelected.connect((_, name) => picked.push(name));
    model.preferredModel = 'local';
    await model.loadConfig();
    expect(model.selectedModel).toBe('local');
    model.preferredModel = 'gone';
    await model.loadConfig();
    expect(model.selectedModel).toBe('local');
    // Only a person's pick is reported (to be saved), not the config's.
    expect(picked).toEqual([]);
    model.selectedModel = 'fast';
    expect(picked).toEqual(['fast']);
  });

  it('says when the config cannot be loaded', async () => {
    const client = new FakeClient();
    client.config$ = new ChatRequestError(
      'error',
      'The chapyter-ext server extension is not answering'
    );
    const model = makeModel(client);
    await model.loadConfig();
    expect(model.error).toMatch(
      /^Could not load the chat settings: The chapyter-ext server/
    );
    model.dismissError();
    expect(model.error).toBeNull();
  });
});

describe('ChatModel streaming', () => {
  async function ready(client = new FakeClient()) {
    const model = makeModel(client);
    await model.loadConfig();
    await model.setNotebook('a.ipynb');
    return { client, model };
  }

  it('streams an answer: start, tokens cut anywhere, done', async () => {
    const { client, model } = await ready();
    const updates: string[] = [];
    model.messageChanged.connect((_, message) => updates.push(message.content));

    const sending = model.send('plot x');
    expect(model.state).toBe('streaming');
    expect(model.messages.map(m => [m.role, m.status])).toEqual([
      ['user', 'complete'],
      ['assistant', 'streaming']
    ]);
    await flush();
    expect(client.requests[0]).toEqual({
      notebook: 'a.ipynb',
      message: 'plot x',
      chat_id: 'chat-a.ipynb',
      model: 'fast',
      context: CONTEXT.snapshot
    });

    const stream = client.streams[0];
    // (Decoding the wire, cut anywhere, is common-events.spec.ts's job.)
    stream.send({
      type: 'start',
      chatId: 'c9',
      messageId: 'm9',
      model: 'fast'
    });
    stream.send({ type: 'token', text: 'Here: ' });
    stream.send({ type: 'token', text: '```python\nplt.plot(x)\n```' });
    await flush();
    const reply = model.messages[1];
    expect(reply.id).toBe('m9');
    expect(reply.content).toBe('Here: ```python\nplt.plot(x)\n```');
    expect(reply.status).toBe('streaming');
    expect(model.chatId).toBe('c9');
    expect(updates).toContain('Here: ');

    stream.send({
      type: 'done',
      messageId: 'm9',
      text: 'Here: ```python\nplt.plot(x)\n```',
      status: 'complete'
    });
    stream.end();
    await sending;
    expect(reply.status).toBe('complete');
    expect(Date.parse(reply.created)).not.toBeNaN();
    expect(model.state).toBe('idle');
    expect(model.error).toBeNull();
  });

  it('draws the reply first with its first text, not on `start`', async () => {
    const { client, model } = await ready();
    const drawn: string[] = [];
    model.messageChanged.connect((_, message) => drawn.push(message.content));
    const sending = model.send('plot x');
    await flush();
    const stream = client.streams[0];
    stream.send({
      type: 'start',
      chatId: 'c1',
      messageId: 'm1',
      model: 'fast'
    });
    await flush();
    // Named, not drawn: a draw of the empty reply would hold the first token back.
    expect(model.messages[1].id).toBe('m1');
    expect(drawn).toEqual([]);
    stream.send({ type: 'token', text: 'Hi' });
    await flush();
    expect(drawn).toEqual(['Hi']);
    stream.send({
      type: 'done',
      messageId: 'm1',
      text: 'Hi',
      status: 'complete'
    });
    stream.end();
    await sending;
  });

  it('previews the context for the draft, and for no draft once it is sent', async () => {
    const client = new FakeClient();
    const drafts: string[] = [];
    const model = new ChatModel({
      client,
      context: async message => {
        drafts.push(message);
        return CONTEXT;
      },
      snapshot: async () => CONTEXT.snapshot,
      stopGraceMs: 50
    });
    await model.loadConfig();
    await model.setNotebook('a.ipynb');
    drafts.length = 0;

    await model.refreshContext('plot the sales');
    await model.refreshContext(); // the same draft while it is not sent
    expect(drafts).toEqual(['plot the sales', 'plot the sales']);

    const sending = model.send('plot the sales');
    await flush();
    client.streams[0].send({
      type: 'done',
      messageId: 'm',
      text: 'ok',
      status: 'complete'
    });
    client.streams[0].end();
    await sending;
    await flush();
    // The chip after the reply is for the next (empty) draft.
    expect(drafts[drafts.length - 1]).toBe('');
    model.dispose();
  });

  it('sends the snapshot without waiting for the preview, and refreshes the chip after', async () => {
    const client = new FakeClient();
    const previews: string[] = [];
    const model = new ChatModel({
      client,
      context: async () => {
        previews.push('preview');
        return CONTEXT;
      },
      snapshot: async () => CONTEXT.snapshot,
      stopGraceMs: 50
    });
    await model.loadConfig();
    await model.setNotebook('a.ipynb');
    client.calls.length = 0;
    previews.length = 0;

    const sending = model.send('plot x');
    await flush();
    expect(client.requests[0].context).toEqual(CONTEXT.snapshot);
    // Nothing but the chat request went out before the model was asked.
    expect(client.calls).toEqual(['chat']);
    expect(previews).toEqual([]);

    client.streams[0].send({
      type: 'done',
      messageId: 'm',
      text: 'ok',
      status: 'complete'
    });
    client.streams[0].end();
    await sending;
    await flush();
    expect(previews).toEqual(['preview']);
    expect(model.context).toEqual(CONTEXT);
    model.dispose();
  });

  it('refuses to send empty text or without a notebook; queues while a reply streams', async () => {
    const client = new FakeClient();
    const model = makeModel(client);
    expect(await model.send('hello')).toBe(false);
    await model.setNotebook('a.ipynb');
    expect(await model.send('   ')).toBe(false);
    const first = model.send('one');
    // Queued, not refused (chat-follow-ups.spec.ts); sent once 'one' completes.
    expect(await model.send('two')).toBe(true);
    expect(model.queued.map(q => q.text)).toEqual(['two']);
    await flush();
    client.streams[0].send({
      type: 'done',
      messageId: 'm',
      text: 'ok',
      status: 'complete'
    });
    client.streams[0].end();
    expect(await first).toBe(true);
    await flush();
    expect(client.requests.map(r => r.message)).toEqual(['one', 'two']);
    expect(model.queued).toEqual([]);
  });

  it('sends no context when the toggle is off, for the next message only', async () => {
    const { client, model } = await ready();
    let contextSignals = 0;
    model.contextChanged.connect(() => contextSignals++);
    model.contextEnabled = false;
    const sending = model.send('no context please');
    await flush();
    expect(client.requests[0].context).toBeUndefined();
    expect(model.contextEnabled).toBe(true);
    expect(contextSignals).toBeGreaterThan(0);
    client.streams[0].send({
      type: 'done',
      messageId: 'm',
      text: 'ok',
      status: 'complete'
    });
    client.streams[0].end();
    await sending;

    const again = model.send('with context');
    await flush();
    expect(client.requests[1].context).toEqual(CONTEXT.snapshot);
    client.streams[1].end();
    await again;
  });

  it('shows the reason of an error event as one line', async () => {
    const { client, model } = await ready();
    const sending = model.send('fail please');
    await flush();
    const stream = client.streams[0];
    stream.send({ type: 'start', chatId: 'c', messageId: 'm1', model: 'fast' });
    stream.send({ type: 'token', text: 'partial' });
    stream.send({
      type: 'error',
      kind: 'server',
      message:
        'The endpoint api.openai.com failed with HTTP 500\nafter 3 attempts. Try again later.'
    });
    await sending;
    const reply = model.messages[1];
    expect(reply.status).toBe('error');
    expect(reply.content).toBe('partial');
    expect(model.error).toBe(
      'The model failed: The endpoint api.openai.com failed with HTTP 500 after 3 attempts. Try again later.'
    );
    expect(model.state).toBe('idle');
  });

  it('shows a refused request (HTTP error before the stream) with its message', async () => {
    const client = new FakeClient();
    client.chatError = new ChatRequestError(
      'busy',
      '4 chat replies are already streaming; try again when one has finished.',
      429
    );
    const { model } = await ready(client);
    await model.send('hello');
    expect(model.messages[1].status).toBe('error');
    expect(model.error).toBe(
      '4 chat replies are already streaming; try again when one has finished.'
    );
  });

  it('says so when the connection closes before the reply finished', async () => {
    const { client, model } = await ready();
    const sending = model.send('hello');
    await flush();
    client.streams[0].send({ type: 'token', text: 'half' });
    client.streams[0].end();
    await sending;
    expect(model.messages[1].status).toBe('error');
    expect(model.error).toBe(
      'The connection closed before the reply finished.'
    );
  });

  it('stops through the server, which ends the stream as stopped', async () => {
    const { client, model } = await ready();
    const sending = model.send('long answer');
    await flush();
    const stream = client.streams[0];
    stream.send({ type: 'start', chatId: 'c', messageId: 'm7', model: 'fast' });
    stream.send({ type: 'token', text: 'one two' });
    await flush();
    const stopping = model.stop();
    expect(model.stopping).toBe(true);
    await stopping;
    expect(client.stops).toEqual(['m7']);
    stream.send({
      type: 'done',
      messageId: 'm7',
      text: 'one two three',
      status: 'stopped'
    });
    stream.end();
    await sending;
    const reply = model.messages[1];
    expect(reply.status).toBe('stopped');
    expect(reply.content).toBe('one two three');
    expect(model.state).toBe('idle');
    expect(model.stopping).toBe(false);
    expect(model.error).toBeNull();
  });

  it('cuts the connection when the server does not end a stopped stream in time', async () => {
    const { client, model } = await ready();
    const sending = model.send('long answer');
    await flush();
    const stream = client.streams[0];
    stream.send({ type: 'start', chatId: 'c', messageId: 'm8', model: 'fast' });
    stream.send({ type: 'token', text: 'so far' });
    await flush();
    await model.stop();
    // stopGraceMs is 50 ms in these tests; the stream never ends by itself.
    await sending;
    expect(model.messages[1].status).toBe('stopped');
    expect(model.messages[1].content).toBe('so far');
    expect(model.error).toBeNull();
  });

  it('stops before the server named the reply by closing the connection', async () => {
    const { client, model } = await ready();
    const sending = model.send('hello');
    await flush();
    await model.stop();
    await sending;
    expect(client.stops).toEqual([]);
    expect(model.messages[1].status).toBe('stopped');
    expect(model.state).toBe('idle');
  });

  it('lets a reply finish in its own notebook while another one is shown', async () => {
    const { client, model } = await ready();
    const sending = model.send('question about a');
    await flush();
    const stream = client.streams[0];
    stream.send({
      type: 'start',
      chatId: 'ca',
      messageId: 'ma',
      model: 'fast'
    });
    await flush();
    await model.setNotebook('b.ipynb');
    expect(model.state).toBe('idle');
    expect(model.messages).toEqual([]);
    const seen: IChatMessage[] = [];
    model.messageChanged.connect((_, m) => seen.push(m));
    stream.send({ type: 'token', text: 'answer for a' });
    await flush();
    expect(seen).toEqual([]);

    // Back on a: the thread is still streaming, so it is shown as it is, not reloaded.
    await model.setNotebook('a.ipynb');
    expect(model.state).toBe('streaming');
    expect(model.messages[1].content).toBe('answer for a');
    stream.send({
      type: 'done',
      messageId: 'ma',
      text: 'answer for a',
      status: 'complete'
    });
    stream.end();
    await sending;
    expect(model.state).toBe('idle');
    expect(client.calls.filter(c => c === 'history a.ipynb')).toHaveLength(1);
  });

  it('tells once what the server notices, from the history or the stream', async () => {
    const client = new FakeClient();
    client.histories.set('a.ipynb', {
      ...view('c1'),
      notice: 'Part of the history could not be read; kept as x.corrupt.json.'
    });
    const { model } = await ready(client);
    expect(model.notice).toBe(
      'Part of the history could not be read; kept as x.corrupt.json.'
    );
    model.dismissNotice();
    expect(model.notice).toBeNull();
    client.histories.set('a.ipynb', view('c1')); // the server tells it once
    await model.reloadHistory();
    expect(model.notice).toBeNull();

    const sending = model.send('hello');
    await flush();
    const stream = client.streams[0];
    stream.send({ type: 'start', chatId: 'c1', messageId: 'm', model: 'fast' });
    stream.send({ type: 'notice', message: 'Damaged history kept as y.json.' });
    stream.send({
      type: 'done',
      messageId: 'm',
      text: 'hi',
      status: 'complete'
    });
    stream.end();
    await sending;
    expect(model.notice).toBe('Damaged history kept as y.json.');
    expect(model.messages[1].content).toBe('hi');
  });

  it('does not blame the model for a stream it could not read', async () => {
    const { client, model } = await ready();
    const sending = model.send('hello');
    await flush();
    client.streams[0].send({
      type: 'error',
      kind: 'bad_response',
      message: 'The server sent a "token" event that could not be read.'
    });
    await sending;
    expect(model.error).toBe(
      'The server sent a "token" event that could not be read.'
    );
  });

  it('collects the context again for the chip', async () => {
    const { model } = await ready();
    await model.refreshContext();
    expect(model.context).toEqual(CONTEXT);
    await model.setNotebook(null);
    expect(model.context).toBeNull();
  });
});
