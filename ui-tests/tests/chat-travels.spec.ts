/**
 * The chat belongs to its notebook: it survives a rename in JupyterLab (also while a reply
 * streams) and a move in a terminal, comes with a notebook that carries it in its metadata,
 * is exported as Markdown next to the notebook, and two tabs asking at once lose nothing.
 * Every check is made again after a reload, where the chat comes from the server.
 */

import * as fs from 'fs';
import * as path from 'path';

import {
  ask,
  askAndWait,
  chatAnswers,
  createNotebook,
  expect,
  jupyterApi,
  Lab,
  model,
  notebookJson,
  openChat,
  test
} from './fixtures';

const ROOT = process.env.CHAPYTER_UI_ROOT!;

/** The notebook's `chapyter` metadata, as the open notebook holds it. */
async function chapyterMetadata(lab: Lab, file: string): Promise<any> {
  return lab.page.evaluate(file => {
    const app = (window as any).jupyterapp;
    const panel = Array.from(app.shell.widgets('main')).find(
      (w: any) => w.context?.path === file
    ) as any;
    return panel.model.getMetadata('chapyter') ?? null;
  }, file);
}

/** Rename through the contents API, as the file browser and Rename Notebook do. */
async function rename(lab: Lab, from: string, to: string): Promise<void> {
  await lab.page.evaluate(
    ({ from, to }) =>
      (window as any).jupyterapp.serviceManager.contents.rename(from, to),
    { from, to }
  );
  await expect.poll(() => lab.currentPath()).toBe(to);
}

/** The server's history of a path (what a reload will show). */
async function history(file: string, notebookId?: string): Promise<any> {
  const id = notebookId ? `&notebook_id=${notebookId}` : '';
  return jupyterApi(
    'GET',
    `/chapyter-ext/history?notebook=${encodeURIComponent(file)}${id}`
  );
}

function texts(view: any): string[] {
  return view.messages.map((m: any) => m.content);
}

test('renamed in JupyterLab: the chat follows, also after a reload', async ({
  lab
}) => {
  await model.script('Two plus two is **4**.');
  const file = await createNotebook('travel-rename', [
    { id: 'one', source: 'x = 2 + 2' }
  ]);
  await lab.openNotebook(file);
  const panel = await openChat(lab);
  await askAndWait(panel, 'What is x?');
  await expect(chatAnswers(panel)).toContainText('Two plus two is 4.');
  // The first message gave the notebook its id, in its metadata.
  const meta = await chapyterMetadata(lab, file);
  expect(meta.notebook_id).toMatch(/^[0-9a-f]{32}$/);

  await rename(lab, file, 'travel-renamed.ipynb');
  await expect(chatAnswers(panel)).toContainText('Two plus two is 4.');
  await expect(panel.locator('.jp-Chapyter-chatMessage')).toHaveCount(2);
  expect((await history(file)).messages).toEqual([]);
  expect(texts(await history('travel-renamed.ipynb'))).toEqual([
    'What is x?',
    'Two plus two is **4**.'
  ]);
  await lab.screenshot('travel-01-renamed', panel);

  await lab.reload();
  await lab.openNotebook('travel-renamed.ipynb');
  const again = await openChat(lab);
  await expect(chatAnswers(again)).toContainText('Two plus two is 4.');
  await expect(
    again.locator('.jp-Chapyter-chatMessage.jp-mod-user')
  ).toHaveText(/What is x\?/);
});

test('moved in a terminal: opened at its new place, its chat is there, also after a reload', async ({
  lab
}) => {
  await model.script('It holds the number 7.');
  const file = await createNotebook('travel-moved', [
    { id: 'one', source: 'seven = 7' }
  ]);
  await lab.openNotebook(file);
  const panel = await openChat(lab);
  await askAndWait(panel, 'What does seven hold?');
  await expect(chatAnswers(panel)).toContainText('It holds the number 7.');
  // Saved with its id, then closed and moved behind the server's back (`mv`).
  await lab.save(file);
  const saved = JSON.parse(fs.readFileSync(path.join(ROOT, file), 'utf-8'));
  const notebookId = saved.metadata.chapyter.notebook_id;
  expect(notebookId).toMatch(/^[0-9a-f]{32}$/);
  await lab.page.evaluate(file => {
    const app = (window as any).jupyterapp;
    const panel = Array.from(app.shell.widgets('main')).find(
      (w: any) => w.context?.path === file
    ) as any;
    panel.dispose();
  }, file);
  fs.mkdirSync(path.join(ROOT, 'moved-here'), { recursive: true });
  fs.renameSync(
    path.join(ROOT, file),
    path.join(ROOT, 'moved-here', 'travel-moved.ipynb')
  );

  const moved = 'moved-here/travel-moved.ipynb';
  await lab.openNotebook(moved);
  await expect(chatAnswers(panel)).toContainText('It holds the number 7.');
  await expect(panel.locator('.jp-Chapyter-chatMessage')).toHaveCount(2);
  expect((await history(file)).messages).toEqual([]);
  await lab.screenshot('travel-02-moved', panel);

  await lab.reload();
  await lab.openNotebook(moved);
  const again = await openChat(lab);
  await expect(chatAnswers(again)).toContainText('It holds the number 7.');
  expect((await history(moved, notebookId)).notebook_id).toBe(notebookId);
});

test('renamed while the answer streams: the answer ends in the panel and is kept', async ({
  lab
}) => {
  const answer = Array.from({ length: 120 }, (_, i) => `w${i}`).join(' ');
  await model.script({ content: answer, chunk_size: 6, chunk_delay: 0.04 });
  const file = await createNotebook('travel-streaming', [
    { id: 'one', source: 'x = 1' }
  ]);
  await lab.openNotebook(file);
  const panel = await openChat(lab);
  await ask(panel, 'Count for me');
  await expect(chatAnswers(panel).first()).toContainText('w3');
  await expect(panel.getByRole('button', { name: 'Stop' })).toBeVisible();

  await rename(lab, file, 'travel-streamed.ipynb');
  // Still streaming, into the same message, to its end.
  await expect(panel.getByRole('button', { name: 'Send' })).toBeVisible({
    timeout: 60_000
  });
  await expect(chatAnswers(panel).first()).toContainText('w119');
  await expect(chatAnswers(panel)).toHaveCount(1);
  await expect(panel.getByRole('alert')).toBeHidden();
  const saved = await history('travel-streamed.ipynb');
  expect(texts(saved)).toEqual(['Count for me', answer]);
  expect(saved.messages[1].status).toBe('complete');
  expect((await history(file)).messages).toEqual([]);

  await lab.reload();
  await lab.openNotebook('travel-streamed.ipynb');
  const again = await openChat(lab);
  await expect(chatAnswers(again).first()).toContainText('w119');
});

test('Save As: the new notebook gets a copy of the chat, and each goes on alone', async ({
  lab
}) => {
  await model.script('First answer.', 'Only in the copy.');
  const file = await createNotebook('travel-original', [
    { id: 'one', source: 'x = 1' }
  ]);
  await lab.openNotebook(file);
  const panel = await openChat(lab);
  await askAndWait(panel, 'First question');
  await lab.save(file);
  const original = await history(file);

  // File > Save Notebook As…: JupyterLab saves the copy, closes the original, opens the copy.
  await lab.command('docmanager:save-as', {}, false);
  const dialog = lab.page.locator('.jp-Dialog');
  await dialog.locator('input').fill('travel-copy.ipynb');
  await dialog.getByRole('button', { name: 'Save' }).click();
  await expect.poll(() => lab.currentPath()).toBe('travel-copy.ipynb');
  await expect(chatAnswers(panel)).toContainText('First answer.');
  const copy = await history('travel-copy.ipynb');
  expect(copy.notebook_id).not.toBe(original.notebook_id);
  expect(copy.chat_id).not.toBe(original.chat_id);

  await askAndWait(panel, 'Second question');
  await expect(chatAnswers(panel).nth(1)).toContainText('Only in the copy.');
  expect(texts(await history('travel-copy.ipynb'))).toEqual([
    'First question',
    'First answer.',
    'Second question',
    'Only in the copy.'
  ]);
  expect(texts(await history(file))).toEqual([
    'First question',
    'First answer.'
  ]);
  // The copy's metadata names its own chat, so it keeps it wherever it goes.
  expect((await chapyterMetadata(lab, 'travel-copy.ipynb')).notebook_id).toBe(
    copy.notebook_id
  );
});

test('a notebook that carries its chat in its metadata shows it and continues it', async ({
  lab
}) => {
  const notebookId = 'feed'.repeat(8);
  const message = (id: string, role: string, content: string) => ({
    id,
    role,
    content,
    model: 'fake-model',
    created: '2025-06-01T10:00:00.000Z',
    status: 'complete'
  });
  const file = 'travel-carried.ipynb';
  const content = notebookJson([{ id: 'one', source: 'answer = 42' }]) as any;
  content.metadata.chapyter = {
    notebook_id: notebookId,
    chat: {
      schema: 1,
      saved: '2025-06-01T10:05:00.000Z',
      current: 'c1',
      truncated: false,
      chats: [
        {
          id: 'c1',
          created: '2025-06-01T10:00:00.000Z',
          messages: [
            message('u1', 'user', 'What does answer hold?'),
            message('a1', 'assistant', 'It holds **42**.')
          ]
        }
      ]
    }
  };
  await jupyterApi('PUT', `/api/contents/${file}`, {
    type: 'notebook',
    format: 'json',
    content
  });
  await lab.openNotebook(file);
  const panel = await openChat(lab);
  await expect(chatAnswers(panel)).toContainText('It holds 42.');
  await expect(panel.getByRole('alert')).toContainText(
    'This chat came with the notebook (saved 2025-06-01)'
  );
  await lab.screenshot('travel-03-carried', panel);

  // Continued: the model gets the carried turn before the new question.
  await model.script('Doubled, it is 84.');
  await askAndWait(panel, 'And doubled?');
  await expect(chatAnswers(panel).nth(1)).toContainText('Doubled, it is 84.');
  const [request] = await model.chatRequests();
  expect(JSON.stringify(request.body.messages)).toContain('It holds **42**.');

  await lab.reload();
  await lab.openNotebook(file);
  const again = await openChat(lab);
  await expect(chatAnswers(again)).toHaveCount(2);
  await expect(again.getByRole('alert')).toBeHidden();
});

test('Export chat writes it as Markdown next to the notebook and opens it', async ({
  lab
}) => {
  await jupyterApi('PUT', '/api/contents/exports', { type: 'directory' });
  await model.script('Use `sorted(values)`.');
  const file = await createNotebook('exports/travel-export', [
    { id: 'one', source: 'values = [3, 1, 2]' }
  ]);
  await lab.openNotebook(file);
  const panel = await openChat(lab);
  const exportButton = panel.getByRole('button', { name: 'Export chat' });
  await expect(exportButton).toBeDisabled();
  await askAndWait(panel, 'How do I sort values?');
  await exportButton.click();
  const target = 'exports/travel-export.chat.md';
  await expect.poll(() => lab.currentPath()).toBe(target);
  const saved = await jupyterApi('GET', `/api/contents/${target}?content=1`);
  expect(saved.content).toContain('# Chat: travel-export.ipynb');
  expect(saved.content).toContain('> How do I sort values?');
  expect(saved.content).toContain('Use `sorted(values)`.');
  expect(saved.content).toContain('`fake-model`');
  await lab.screenshot('travel-04-exported');
});

test('two tabs on one notebook asking at once: every message is kept, each answer after its question', async ({
  lab
}) => {
  await model.route('from tab one', {
    content: 'answer one',
    chunk_size: 2,
    chunk_delay: 0.1
  });
  await model.route('from tab two', 'answer two');
  const file = await createNotebook('travel-two-tabs', [
    { id: 'one', source: 'x = 1' }
  ]);
  await lab.openNotebook(file);
  const panel = await openChat(lab);
  const second = new Lab(await lab.page.context().newPage(), test.info());
  await second.open();
  await second.openNotebook(file);
  const panelTwo = await openChat(second);

  await ask(panel, 'question from tab one');
  await expect(chatAnswers(panel).first()).toContainText('answer');
  await askAndWait(panelTwo, 'question from tab two');
  await expect(chatAnswers(panelTwo)).toContainText('answer two');
  await expect(panel.getByRole('button', { name: 'Send' })).toBeVisible();
  await expect(chatAnswers(panel).first()).toHaveText(/answer one/);

  const expected = [
    'question from tab one',
    'answer one',
    'question from tab two',
    'answer two'
  ];
  expect(texts(await history(file))).toEqual(expected);
  // Back in tab one, its panel catches up with what tab two added.
  await lab.page.bringToFront();
  await lab.page.evaluate(() => window.dispatchEvent(new Event('focus')));
  await expect(panel.locator('.jp-Chapyter-chatMessage')).toHaveText(
    expected.map(text => new RegExp(text))
  );
  await second.page.close();
});
