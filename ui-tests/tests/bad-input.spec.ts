/**
 * Bad input loses nothing and says one clear line: an answer that is not valid Python stays
 * visible and unrun, a `%%ai` line that cannot be read asks no model, and a damaged chat
 * history is salvaged with a one-time notice in the panel.
 */

import { createHash } from 'crypto';
import * as fs from 'fs';
import * as path from 'path';

import {
  chatAnswers,
  createNotebook,
  expect,
  fenced,
  model,
  openChat,
  outputText,
  test
} from './fixtures';

test('an answer that fails the syntax check stays visible below, unrun, with one error line', async ({
  lab
}) => {
  const broken = 'total = sum(values\nprint(total)';
  await model.script(fenced(broken));
  const file = await lab.aiNotebook('syntax-error-answer', [
    { id: 'prompt', source: '%%ai\nadd up the values' }
  ]);
  await lab.runCell(file, 'prompt');

  const pair = await lab.waitForPair(
    file,
    ({ prompt, generated }) =>
      !!generated &&
      prompt.executionState === 'idle' &&
      prompt.outputs.some(o => o.text.includes('syntax error')),
    'the broken answer inserted below the prompt'
  );
  await lab.waitForKernelIdle(file);
  // Give a run that must not happen the time to happen.
  await lab.page.waitForTimeout(1500);
  const generated = await lab.cell(file, pair.generated!.id);
  const prompt = await lab.cell(file, 'prompt');

  expect(generated.source).toBe(broken);
  expect(generated.executionCount).toBeNull();
  expect(generated.outputs).toEqual([]);
  expect(generated.chapyter).toMatchObject({
    role: 'generated',
    generated_from: 'prompt',
    check: 'syntax-error'
  });
  const said = outputText(prompt);
  expect(said).toMatch(/syntax error on line 1/);
  expect(said).toMatch(/without running it/);
  // One line from chapyter-ext, no Python traceback.
  expect(said).not.toContain('Traceback');
  await lab.screenshot('bad-01-syntax-error-answer');
});

test('a %%ai line that cannot be read is one line, asks no model, inserts nothing', async ({
  lab
}) => {
  const file = await lab.aiNotebook('bad-magic-line', [
    { id: 'prompt', source: '%%ai --regen\nplot something' }
  ]);
  await lab.runCell(file, 'prompt');
  const { prompt, cells } = await lab.waitForPair(
    file,
    ({ prompt }) => outputText(prompt).includes('Cannot read the %%ai line'),
    'the one-line error in the prompt cell'
  );
  const text = outputText(prompt);
  expect(text).toContain("unknown option '--regen'");
  expect(text).not.toContain('Traceback');
  expect(cells.some(c => c.chapyter?.role === 'generated')).toBe(false);
  expect(await model.chatRequests()).toHaveLength(0);
});

test('a damaged chat history keeps what can be read and says so once in the panel', async ({
  lab
}) => {
  const file = await createNotebook('damaged-history', [
    { id: 'one', source: 'x = 1' }
  ]);
  // The history folder of the test JupyterLab (JUPYTER_DATA_DIR is beside the notebooks).
  const chats = path.join(
    path.dirname(process.env.CHAPYTER_UI_ROOT!),
    'data',
    'chapyter-ext',
    'chats'
  );
  fs.mkdirSync(chats, { recursive: true });
  const digest = createHash('sha256').update(file).digest('hex').slice(0, 40);
  const damaged = {
    version: 1,
    notebook: file,
    current: 'c1',
    chats: {
      c1: {
        created: '2026-01-01T00:00:00.000Z',
        messages: [
          {
            id: 'm1',
            role: 'user',
            content: 'What is in x?',
            model: 'fake-model',
            created: '2026-01-01T00:00:00.000Z',
            status: 'complete'
          },
          { role: 'assistant', content: 42 },
          {
            id: 'm3',
            role: 'assistant',
            content: 'x holds the number 1.',
            model: 'fake-model',
            created: '2026-01-01T00:00:01.000Z',
            status: 'complete'
          }
        ]
      },
      c2: 'not a chat'
    }
  };
  fs.writeFileSync(path.join(chats, `${digest}.json`), JSON.stringify(damaged));

  await lab.openNotebook(file);
  const panel = await openChat(lab);
  // The valid messages are there.
  await expect(chatAnswers(panel)).toContainText('x holds the number 1.');
  await expect(panel.locator('.jp-Chapyter-chatMessage')).toHaveCount(2);
  // One line says what happened and where the damaged copy is.
  const alert = panel.getByRole('alert');
  await expect(alert).toContainText('could not be read');
  await expect(alert).toContainText('.corrupt-');
  await lab.screenshot('bad-02-damaged-history', panel);
  const aside = fs
    .readdirSync(chats)
    .filter(name => name.startsWith(`${digest}.corrupt-`));
  expect(aside).toHaveLength(1);

  // Told once: dismissed, and not shown again after the history is read again.
  await panel.getByRole('button', { name: 'Dismiss error' }).click();
  await expect(alert).toBeHidden();
  await lab.command('chapyter-ext:new-chat');
  await expect(alert).toBeHidden();
});
