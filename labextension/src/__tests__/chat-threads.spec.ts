/**
 * The chat belongs to its notebook: the notebook's id goes with every history call and the
 * first message, the server's id is written back, a carried chat is imported, and a rename
 * (also while a reply streams) keeps the thread, shown and streaming.
 */

import { ChatModel } from '../chat/model';
import { mergeMessages } from '../chat/thread';
import {
  ChatRequestError,
  INotebookChatMetadata,
  INotebookIdentity
} from '../chat/tokens';
import { isNotebookId } from '../contract';
import { CONTEXT, FakeClient, flush, view } from './chatFakes';

const ID = 'ab'.repeat(16);
const COPY_ID = 'cd'.repeat(16);

/** Open notebooks' metadata, by path: what the tracker-backed identity reads and writes. */
class FakeIdentity implements INotebookIdentity {
  notebooks = new Map<string, INotebookChatMetadata>();
  writes: [string, string][] = [];

  async read(path: string): Promise<INotebookChatMetadata | null> {
    const found = this.notebooks.get(path);
    return found ? { ...found } : null;
  }

  write(path: string, notebookId: string): boolean {
    const found = this.notebooks.get(path);
    if (!found) {
      return false;
    }
    found.notebookId = notebookId;
    this.writes.push([path, notebookId]);
    return true;
  }
}

function setup(metadata: INotebookChatMetadata | null = null) {
  const client = new FakeClient();
  const identity = new FakeIdentity();
  if (metadata) {
    identity.notebooks.set('a.ipynb', metadata);
  }
  const model = new ChatModel({
    client,
    identity,
    context: async () => CONTEXT,
    stopGraceMs: 50
  });
  return { client, identity, model };
}

describe('the notebook id', () => {
  it('goes with the history call; the first message makes one and writes it', async () => {
    const { client, identity, model } = setup({
      notebookId: null,
      storedChat: null
    });
    client.histories.set('a.ipynb', view('c1'));
    await model.setNotebook('a.ipynb');
    expect(client.historyIds).toEqual([null]);
    expect(identity.writes).toEqual([]); // opening a notebook leaves it unchanged

    const sending = model.send('first question');
    await flush();
    const made = client.requests[0].notebook_id!;
    expect(isNotebookId(made)).toBe(true);
    expect(identity.writes).toEqual([['a.ipynb', made]]);
    client.streams[0].finish('m', 'a');
    await sending;

    const again = model.send('second question');
    await flush();
    expect(client.requests[1].notebook_id).toBe(made);
    expect(identity.writes).toHaveLength(1);
    client.streams[1].end();
    await again;
  });

  it("takes the server's id when it differs (a copy), not when there is none", async () => {
    const { client, identity, model } = setup({
      notebookId: ID,
      storedChat: null
    });
    client.histories.set('a.ipynb', { ...view('c1'), notebook_id: COPY_ID });
    await model.setNotebook('a.ipynb');
    expect(client.historyIds).toEqual([ID]);
    expect(identity.writes).toEqual([['a.ipynb', COPY_ID]]);

    identity.notebooks.set('b.ipynb', { notebookId: ID, storedChat: null });
    client.histories.set('b.ipynb', { ...view(''), notebook_id: '' });
    await model.setNotebook('b.ipynb');
    expect(identity.writes).toHaveLength(1);
  });
});

describe('a notebook that carries its chat', () => {
  const stored = { schema: 1, chats: [{ id: 'x', messages: [] }] };

  it('is imported when the server has no chat for it', async () => {
    const { client, model } = setup({ notebookId: ID, storedChat: stored });
    client.histories.set('a.ipynb', { ...view(''), notebook_id: '' });
    client.imported = {
      ...view('c1', [
        { id: 'u', role: 'user', content: 'from the notebook' },
        { id: 'r', role: 'assistant', content: 'answer' }
      ]),
      notebook_id: ID,
      notice: 'This chat came with the notebook; it continues here.'
    };
    await model.setNotebook('a.ipynb');
    expect(client.importedChats).toEqual([stored]);
    expect(model.messages.map(m => m.content)).toEqual([
      'from the notebook',
      'answer'
    ]);
    expect(model.notice).toContain('came with the notebook');
  });

  it("is not imported where the server has the notebook's chats", async () => {
    const { client, model } = setup({ notebookId: ID, storedChat: stored });
    client.histories.set('a.ipynb', { ...view('c1'), notebook_id: ID });
    await model.setNotebook('a.ipynb');
    expect(client.calls).not.toContain('import a.ipynb');
  });

  it('that cannot be read is said once, and the chat still works', async () => {
    const { client, model } = setup({ notebookId: ID, storedChat: stored });
    client.histories.set('a.ipynb', { ...view(''), notebook_id: '' });
    client.imported = new ChatRequestError(
      'bad_request',
      'The chat saved in the notebook cannot be read: stored chat 1 has no id.'
    );
    await model.setNotebook('a.ipynb');
    expect(model.notice).toBe(
      'The chat saved in this notebook could not be loaded: The chat saved in the ' +
        'notebook cannot be read: stored chat 1 has no id.'
    );
    expect(model.error).toBeNull();
    expect(model.state).toBe('idle');
  });
});

describe('a renamed notebook', () => {
  it('keeps its thread and the messages on screen, and reads the history quietly', async () => {
    const { client, model } = setup();
    const messages = [
      { id: 'u', role: 'user' as const, content: 'q' },
      { id: 'r', role: 'assistant' as const, content: 'a' }
    ];
    client.histories.set('a.ipynb', view('c1', messages));
    await model.setNotebook('a.ipynb');
    const shown = model.messages;
    client.histories.set('b.ipynb', view('c1', messages));
    const states: string[] = [];
    model.changed.connect(() => states.push(model.state));

    await model.renameNotebook('a.ipynb', 'b.ipynb');
    expect(model.notebook).toBe('b.ipynb');
    expect(client.calls).toContain('history b.ipynb');
    expect(states).not.toContain('loading');
    // The same message objects: nothing is redrawn.
    expect(model.messages[0]).toBe(shown[0]);
    expect(model.messages[1]).toBe(shown[1]);
  });

  it('while a reply streams: the reply goes on in view, the history is read after', async () => {
    const { client, model } = setup();
    client.histories.set('a.ipynb', view('c1'));
    await model.setNotebook('a.ipynb');
    const sending = model.send('write a lot');
    await flush();
    const stream = client.streams[0];
    stream.send({
      type: 'start',
      chatId: 'c1',
      messageId: 'm1',
      model: 'fast'
    });
    stream.send({ type: 'token', text: 'part one, ' });
    await flush();

    const seen: string[] = [];
    model.messageChanged.connect((_, m) => seen.push(m.content));
    await model.renameNotebook('a.ipynb', 'renamed.ipynb');
    expect(model.notebook).toBe('renamed.ipynb');
    expect(model.state).toBe('streaming');
    expect(client.calls.filter(c => c.startsWith('history'))).toEqual([
      'history a.ipynb'
    ]);
    stream.send({ type: 'token', text: 'part two' });
    await flush();
    expect(seen).toContain('part one, part two');

    client.histories.set(
      'renamed.ipynb',
      view('c1', [
        { id: 'u1', role: 'user', content: 'write a lot' },
        { id: 'm1', role: 'assistant', content: 'part one, part two' }
      ])
    );
    stream.finish('m1', 'part one, part two');
    await sending;
    await flush();
    expect(client.calls).toContain('history renamed.ipynb');
    expect(model.messages.map(m => [m.role, m.content, m.status])).toEqual([
      ['user', 'write a lot', 'complete'],
      ['assistant', 'part one, part two', 'complete']
    ]);
    // The old path has no thread left.
    await model.setNotebook('a.ipynb');
    expect(model.messages).toEqual([]);
  });
});

describe('keeping up with the server', () => {
  it("a refresh shows another tab's messages and keeps the ones shown", async () => {
    const { client, model } = setup();
    client.histories.set(
      'a.ipynb',
      view('c1', [{ id: 'u1', role: 'user', content: 'mine' }])
    );
    await model.setNotebook('a.ipynb');
    const mine = model.messages[0];
    client.histories.set(
      'a.ipynb',
      view('c1', [
        { id: 'u1', role: 'user', content: 'mine' },
        { id: 'u2', role: 'user', content: 'from the other tab' }
      ])
    );
    await model.refreshHistory();
    expect(model.messages.map(m => m.content)).toEqual([
      'mine',
      'from the other tab'
    ]);
    expect(model.messages[0]).toBe(mine);
  });

  it('merges by id, or by text for a message still under its local id', () => {
    const shown = [
      {
        id: 'local-1',
        role: 'user' as const,
        content: 'q',
        model: '',
        created: '',
        status: 'complete' as const
      },
      {
        id: 'm1',
        role: 'assistant' as const,
        content: 'a',
        model: 'fast',
        created: '',
        status: 'complete' as const,
        halt: 'Stopped at the step cap.'
      }
    ];
    const merged = mergeMessages(shown, [
      { id: 'u1', role: 'user', content: 'q', created: 't1' },
      { id: 'm1', role: 'assistant', content: 'a', created: 't2' },
      { id: 'u2', role: 'user', content: 'new' }
    ]);
    expect(merged[0]).toBe(shown[0]);
    expect(merged[0].id).toBe('u1');
    expect(merged[1]).toBe(shown[1]);
    expect(merged[1].halt).toBe('Stopped at the step cap.');
    expect(merged[2].content).toBe('new');
    // Another message at the same place is the server's, not the one shown.
    expect(
      mergeMessages(shown, [{ id: 'x', role: 'user', content: 'other' }])[0]
    ).not.toBe(shown[0]);
  });

  it('exports the current chat with the notebook id', async () => {
    const { client, model } = setup({ notebookId: ID, storedChat: null });
    expect(await model.exportChat()).toBeNull(); // no notebook
    client.histories.set('a.ipynb', { ...view('c7'), notebook_id: ID });
    await model.setNotebook('a.ipynb');
    const exported = await model.exportChat();
    expect(exported?.markdown).toBe('# Chat');
    expect(client.exports).toEqual([['a.ipynb', ID, 'c7']]);
  });
});

describe('saved in the notebook', () => {
  it("follows the server's setting, off unless it says so", async () => {
    const { client, model } = setup();
    await model.loadConfig();
    expect(model.savesInNotebook).toBe(false);
    client.config$ = {
      ...(client.config$ as any),
      save_chat_in_notebook: true
    };
    await model.loadConfig();
    expect(model.savesInNotebook).toBe(true);
  });
});
