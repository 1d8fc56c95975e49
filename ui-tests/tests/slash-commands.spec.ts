/**
 * Slash commands in the chat input, one test each: `/` lists the browser's and the server's
 * commands; /clear, /export, /model NAME, /fix, /explain, an unknown /foo, and the server's
 * /describe (the `chapyter_ext.slash_commands` entry point). (/plan: plan-mode.spec.ts.)
 */

import { Locator } from '@playwright/test';

import {
  askAndWait,
  chatAnswers,
  chatNotebook,
  expect,
  fenced,
  jupyterApi,
  Lab,
  model,
  openChat,
  ownLab,
  ownLabPort,
  RAIN,
  test
} from './fixtures';

/** Type `text` in the chat input and press Enter (a command runs instead of being sent). */
async function slash(panel: Locator, text: string): Promise<void> {
  const input = panel.getByRole('textbox', { name: 'Ask AI' });
  await input.fill(text);
  await input.press('Enter');
  await expect(input).toHaveValue('');
}

/** The chat input's one status line. */
function status(panel: Locator): Locator {
  return panel.locator('.jp-Chapyter-chatInputStatus');
}

/** A notebook with the rain data (ran), opened, and the chat open on it. */
async function rainChat(
  lab: Lab,
  name: string
): Promise<{ file: string; panel: Locator }> {
  const file = await chatNotebook(name, [
    { id: 'data', source: RAIN },
    {
      id: 'sum',
      source: "wettest = rain.loc[rain['rain_mm'].idxmax(), 'city']"
    }
  ]);
  await lab.openNotebook(file);
  await lab.waitForKernelIdle(file);
  await lab.runCell(file, 'data');
  await lab.waitForCells(
    file,
    cells => cells.find(c => c.id === 'data')!.executionCount !== null,
    'the data cell ran'
  );
  return { file, panel: await openChat(lab) };
}

test('/ lists the browser commands and the server commands', async ({
  lab
}) => {
  const { panel } = await rainChat(lab, 'slash-list');
  const input = panel.getByRole('textbox', { name: 'Ask AI' });
  await input.fill('/');
  const menu = panel.getByRole('listbox', { name: 'Suggestions' });
  await expect(menu).toBeVisible();
  const labels = menu.locator('.jp-Chapyter-chatMenuLabel');
  for (const name of ['clear', 'export', 'model', 'fix', 'explain']) {
    await expect(
      labels.filter({ hasText: new RegExp(`^${name}$`) })
    ).toHaveCount(1);
  }
  // The server's, from `GET commands`, with its argument hint and description.
  const describe = menu.getByRole('option').filter({ hasText: 'describe' });
  await expect(describe).toContainText('NAME · Describe a DataFrame');
  await lab.screenshot('slash-01-menu', panel);
  // Typing filters the list.
  await input.fill('/ex');
  await expect(labels).toHaveText(['export', 'explain']);
});

test('/clear starts a new chat, the earlier one is kept', async ({ lab }) => {
  const { file, panel } = await rainChat(lab, 'slash-clear');
  await model.script('Oslo is the wettest.');
  await askAndWait(panel, 'Which city is wettest?');
  await expect(chatAnswers(panel)).toHaveText(/Oslo is the wettest/);
  const before = await jupyterApi(
    'GET',
    `/chapyter-ext/history?notebook=${encodeURIComponent(file)}`
  );

  await slash(panel, '/clear');
  await expect(panel.locator('.jp-Chapyter-chatMessage')).toHaveCount(0);
  await expect(panel.getByText('Ask about this notebook')).toBeVisible();
  const after = await jupyterApi(
    'GET',
    `/chapyter-ext/history?notebook=${encodeURIComponent(file)}`
  );
  expect(after.chat_id).not.toBe(before.chat_id);
  expect(after.chats).toContain(before.chat_id);
  expect(after.messages).toEqual([]);
  expect(await model.chatRequests()).toHaveLength(1);
});

test('/export writes the chat as Markdown next to the notebook', async ({
  lab
}) => {
  const { panel } = await rainChat(lab, 'slash-export');
  const target = 'slash-export.chat.md';
  await jupyterApi('DELETE', `/api/contents/${target}`).catch(() => null);
  await slash(panel, '/export');
  await expect(status(panel)).toHaveText('Nothing to export yet.');

  await model.script('Oslo has 763 mm.');
  await askAndWait(panel, 'How much rain in Oslo?');
  await slash(panel, '/export');
  await expect
    .poll(async () =>
      jupyterApi('GET', `/api/contents/${target}?content=1&format=text`)
        .then(data => data.content as string)
        .catch(() => '')
    )
    .toContain('How much rain in Oslo?');
  const saved = await jupyterApi(
    'GET',
    `/api/contents/${target}?content=1&format=text`
  );
  expect(saved.content).toContain('Oslo has 763 mm.');
});

test('/fix runs Fix on the last error: its proposal is shown', async ({
  lab
}) => {
  const BAD = 'print(undefined_zz + 1)';
  const file = await lab.aiNotebook('slash-fix', [
    { id: 'fine', source: 'x = 1' },
    { id: 'bad', source: BAD }
  ]);
  await lab.runCell(file, 'bad');
  await lab.waitForCells(
    file,
    cells =>
      cells.find(c => c.id === 'bad')!.outputs.some(o => o.type === 'error'),
    'the bad cell shows its error'
  );
  const panel = await openChat(lab);
  await model.script(
    `Cell: bad\n${fenced('undefined_zz = 41\nprint(undefined_zz + 1)')}\nDefine it first.`
  );
  await slash(panel, '/fix');
  const cell = await lab.cellLocator(file, 'bad');
  const review = cell.locator('.jp-Chapyter-review');
  await expect(review).toBeVisible({ timeout: 30_000 });
  await expect(review).toContainText('Define it first.');
  await lab.screenshot('slash-02-fix', cell);
  const sent = JSON.stringify((await model.chatRequests())[0].body.messages);
  expect(sent).toContain("name 'undefined_zz' is not defined");
  await expect(status(panel)).toBeHidden();
});

test('/explain explains the selected cell, sent with the request', async ({
  lab
}) => {
  const { file, panel } = await rainChat(lab, 'slash-explain');
  await model.script('It finds the city with the most rain.');
  await lab.focusEditor(file, 'sum');
  await slash(panel, '/explain');
  await expect(chatAnswers(panel)).toContainText('the most rain');
  await expect(
    panel.locator('.jp-Chapyter-chatMessage.jp-mod-user')
  ).toContainText('Explain what the 2nd cell does.');
  const [request] = await model.chatRequests();
  const sent = JSON.stringify(request.body.messages);
  expect(sent).toContain('Explain what the 2nd cell does.');
  expect(sent).toContain("rain['rain_mm'].idxmax()");
});

test('an unknown /foo says so in one line and sends nothing', async ({
  lab
}) => {
  const { panel } = await rainChat(lab, 'slash-unknown');
  await slash(panel, '/foo bar');
  await expect(status(panel)).toHaveText(
    'Unknown command /foo: type / to list the commands.'
  );
  await lab.screenshot('slash-03-unknown', panel);
  await expect(panel.locator('.jp-Chapyter-chatMessage')).toHaveCount(0);
  expect(await model.chatRequests()).toHaveLength(0);
  // The next keystroke clears the line.
  await panel.getByRole('textbox', { name: 'Ask AI' }).fill('x');
  await expect(status(panel)).toBeHidden();
});

test('the server command /describe: the server applies its prompt, the chat keeps what was typed', async ({
  lab
}) => {
  const { panel } = await rainChat(lab, 'slash-describe');
  await model.script('rain: 3 rows, city and rain_mm.');
  const posted = lab.page.waitForRequest(
    r => r.method() === 'POST' && /\/chapyter-ext\/chat(\?|$)/.test(r.url())
  );
  await slash(panel, '/describe rain');
  expect((await posted).postDataJSON()).toMatchObject({
    message: '/describe rain',
    command: 'describe'
  });
  await expect(chatAnswers(panel)).toContainText('3 rows');
  await expect(
    panel.locator('.jp-Chapyter-chatMessage.jp-mod-user')
  ).toHaveText(/\/describe rain/);
  const [request] = await model.chatRequests();
  const messages = request.body.messages as { role: string; content: string }[];
  expect(messages[0].content).toContain('This turn describes data');
  const last = messages[messages.length - 1].content;
  expect(last).toContain('Describe rain: what it holds');
  expect(last).toContain('rain (DataFrame)');
  await lab.screenshot('slash-04-describe', panel);
});

test.describe('/model with two models on the server', () => {
  ownLab({
    name: 'jupyterlab-slash-model',
    // Past the ports other files' own servers use (CONTRIBUTING: ports of a run).
    port: ownLabPort() + 4,
    model: { url: process.env.CHAPYTER_UI_LLM_URL! },
    config: {
      'jupyter_server_config.json': {
        ChapyterExtApp: {
          models: {
            fast: { model: 'fake-model' },
            slow: { model: 'fake-model-slow' }
          },
          default_model: 'fast'
        }
      }
    }
  });

  test('/model NAME switches the model of the next request; an unknown one is one line', async ({
    lab
  }) => {
    await lab.newNotebook('slash-model', [{ id: 'one', source: 'x = 1' }]);
    const panel = await openChat(lab);
    const picker = panel.getByRole('combobox', { name: 'Model' });
    await expect(picker).toHaveValue('fast');

    await slash(panel, '/model nope');
    await expect(status(panel)).toHaveText(
      'Unknown model "nope": one of fast, slow.'
    );
    await expect(picker).toHaveValue('fast');

    await slash(panel, '/model SLOW');
    await expect(status(panel)).toHaveText('Model: slow');
    await expect(picker).toHaveValue('slow');
    await model.script('From the slow one.');
    await askAndWait(panel, 'Who answers?');
    await expect(chatAnswers(panel)).toContainText('From the slow one.');
    const requests = await model.chatRequests();
    expect(requests).toHaveLength(1);
    expect(requests[0].body.model).toBe('fake-model-slow');
  });
});
