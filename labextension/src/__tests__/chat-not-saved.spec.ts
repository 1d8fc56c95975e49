/**
 * A full disk is said, not swallowed: a reply whose history could not be written
 * still shows, with the server's one line in the chat; an export the server could not write
 * is one line in the chat too (besides the notification that offers a download).
 */

import { ChatModel } from '../chat/model';
import { exportNextToNotebook } from '../chat/exportChat';
import { IExportSaved } from '../chat/tokens';
import { CONTEXT, FakeClient, flush, view } from './chatFakes';

const NOT_SAVED =
  'Chat history not saved: the disk is full (/home/u/.local/share/jupyter/chapyter-ext/chats). ' +
  'What you see is kept in memory and written at the next change or when the server stops, ' +
  'if there is room then; what was saved before is intact.';
const NOT_WRITTEN =
  'Could not write work/a.chat.md: the disk is full (No space left on device); nothing was written.';

/** A client whose exports fail while `full` is set, as the server answers on a full disk. */
class FullDiskClient extends FakeClient {
  full = true;

  async saveExport(
    notebook: string,
    notebookId: string | null,
    chatId: string | null,
    replace: string | null
  ): Promise<IExportSaved> {
    if (this.full) {
      throw new Error(NOT_WRITTEN);
    }
    return super.saveExport(notebook, notebookId, chatId, replace);
  }
}

async function setup() {
  const client = new FullDiskClient();
  client.histories.set('work/a.ipynb', view('c7'));
  const model = new ChatModel({ client, context: async () => CONTEXT });
  await model.setNotebook('work/a.ipynb');
  let changes = 0;
  model.changed.connect(() => (changes += 1));
  return { client, model, changes: () => changes };
}

describe('a full data folder', () => {
  it('shows the answer and says in one line that it was not saved', async () => {
    const { client, model } = await setup();
    const sending = model.send('hello');
    await flush();
    const stream = client.streams[0];
    stream.send({ type: 'start', chatId: 'c7', messageId: 'm', model: 'fast' });
    stream.send({ type: 'token', text: 'hi' });
    stream.send({ type: 'notice', message: NOT_SAVED });
    stream.send({
      type: 'done',
      messageId: 'm',
      text: 'hi',
      status: 'complete'
    });
    stream.end();
    await sending;
    expect(model.error).toBeNull();
    expect(model.notice).toBe(NOT_SAVED);
    expect(model.messages.map(m => m.content)).toEqual(['hello', 'hi']);
    expect(model.messages[1].status).toBe('complete');
    model.dispose();
  });

  it('says in the chat that an export could not be written', async () => {
    const { client, model, changes } = await setup();
    await expect(exportNextToNotebook(model, async () => true)).rejects.toThrow(
      NOT_WRITTEN
    );
    expect(model.notice).toBe(`Could not export the chat: ${NOT_WRITTEN}`);
    expect(changes()).toBeGreaterThan(0);
    expect(model.error).toBeNull(); // the chat itself goes on

    // Room again: the export is written and the line goes away.
    client.full = false;
    expect(await exportNextToNotebook(model, async () => true)).toBe(
      'work/a.chat.md'
    );
    expect(model.notice).toBeNull();
    model.dispose();
  });
});
