/**
 * Export chat: written by the server next to the notebook (`POST history/export`), with the
 * notebook's id; a file already there is replaced only after a question naming it, and only
 * that file.
 */

import { ChatModel } from '../chat/model';
import {
  exportNextToNotebook,
  IReplaceQuestion,
  replaceQuestion,
  sizeText
} from '../chat/exportChat';
import { INotebookChatMetadata, INotebookIdentity } from '../chat/tokens';
import { CONTEXT, FakeClient, view } from './chatFakes';

const ID = 'ab'.repeat(16);

class Identity implements INotebookIdentity {
  async read(): Promise<INotebookChatMetadata | null> {
    return { notebookId: ID, storedChat: null };
  }

  write(): boolean {
    return true;
  }
}

async function setup() {
  const client = new FakeClient();
  const model = new ChatModel({
    client,
    context: async () => CONTEXT,
    identity: new Identity()
  });
  client.histories.set('work/a.ipynb', { ...view('c7'), notebook_id: ID });
  await model.setNotebook('work/a.ipynb');
  const asked: IReplaceQuestion[] = [];
  const ask = (answer: boolean) => async (question: IReplaceQuestion) => {
    asked.push(question);
    return answer;
  };
  return { client, model, asked, ask };
}

describe('Export chat', () => {
  it('writes through the server, asking nothing when no file is there', async () => {
    const { client, model, asked, ask } = await setup();
    expect(await exportNextToNotebook(model, ask(true))).toBe('work/a.chat.md');
    expect(asked).toEqual([]);
    expect(client.replaces).toEqual([null]);
    expect(client.saveArgs).toEqual([['work/a.ipynb', ID, 'c7']]);
    expect(client.saved.get('work/a.chat.md')).toBe(1);
  });

  it('names the file it would replace, and replaces only that one when told to', async () => {
    const { client, model, asked, ask } = await setup();
    client.saved.set('work/a.chat.md', 1);
    expect(await exportNextToNotebook(model, ask(false))).toBeNull();
    expect(client.saved.get('work/a.chat.md')).toBe(1); // kept
    expect(asked[0]).toEqual({
      title: 'Replace a.chat.md?',
      body:
        'The file work/a.chat.md (1.5 kB, changed 2025-06-01 10:00 UTC) already exists. ' +
        'Replace it with this chat?',
      path: 'work/a.chat.md'
    });
    expect(await exportNextToNotebook(model, ask(true))).toBe('work/a.chat.md');
    expect(client.replaces).toEqual([null, null, 'work/a.chat.md']);
    expect(client.saved.get('work/a.chat.md')).toBe(2);
  });

  it('says so when the file was not replaced after all', async () => {
    const { model } = await setup();
    const answers = [
      { path: 'work/a.chat.md', written: false, exists: true },
      { path: 'moved/a.chat.md', written: false, exists: true }
    ];
    const writer = {
      saveExport: async () => ({
        ...answers.shift()!,
        filename: 'a.chat.md',
        chat_id: 'c7'
      })
    };
    await expect(
      exportNextToNotebook(writer, async () => true)
    ).rejects.toThrow(
      'work/a.chat.md was not replaced: export the chat again.'
    );
    expect(await model.saveExport(null)).not.toBeNull();
  });

  it('asks nothing and writes nothing without a chat', async () => {
    const client = new FakeClient();
    const model = new ChatModel({ client, context: async () => CONTEXT });
    expect(await exportNextToNotebook(model, async () => true)).toBeNull();
    expect(client.replaces).toEqual([]);
    model.dispose();
  });

  it('says sizes for people', () => {
    expect(sizeText(1)).toBe('1 byte');
    expect(sizeText(812)).toBe('812 bytes');
    expect(sizeText(2_000_000)).toBe('2.0 MB');
    expect(
      replaceQuestion({
        path: 'b.chat.md',
        filename: 'b.chat.md',
        written: false,
        exists: true,
        chat_id: 'c'
      }).body
    ).toBe('The file b.chat.md already exists. Replace it with this chat?');
  });
});
