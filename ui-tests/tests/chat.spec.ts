/**
 * The AI Chat side panel: ask about the notebook, watch the answer stream in as Markdown,
 * insert and run its code below the active cell, find the chat again after a reload, and read
 * a clear one-line message when the model fails.
 */

import {
  ask,
  chatAnswers,
  chatNotebook,
  expect,
  fenced,
  model,
  openChat,
  RAIN,
  test
} from './fixtures';

test('ask, see the answer stream in, insert and run its code, find it again after a reload', async ({
  lab
}) => {
  const code = "total = rain['rain_mm'].sum()\nprint('total rain', total)";
  const answer =
    'Add up the `rain_mm` column:\n\n' +
    fenced(code) +
    '\n\nThe **total** is printed below the cell.';
  // Small chunks with a pause between them, so the answer visibly streams.
  await model.script({ content: answer, chunk_size: 5, chunk_delay: 0.06 });
  const file = await chatNotebook('chat-ask', [
    { id: 'data', source: RAIN },
    { id: 'broken', source: 'print(rainfall)' },
    { id: 'after', source: 'rain.head()' }
  ]);
  await lab.openNotebook(file);
  await lab.runCell(file, 'data');
  await lab.runCell(file, 'broken');
  await lab.waitForCells(
    file,
    cells =>
      cells
        .find(c => c.id === 'broken')!
        .outputs.some(o => o.type === 'error') &&
      cells.find(c => c.id === 'data')!.executionCount !== null,
    'the data cell ran and the broken cell shows its error'
  );
  // The inserted cell goes below the active cell: make that the data cell.
  await lab.focusEditor(file, 'data');

  const panel = await openChat(lab);
  // The chip says what goes with the message: notebook, active cell, variables, last error.
  const chip = panel.locator('.jp-Chapyter-chatChipSummary');
  await expect(chip).toHaveText(
    'chat-ask.ipynb · cell [1] · 1 variable · last error'
  );
  await expect(
    panel.getByRole('checkbox', { name: 'Include notebook context' })
  ).toBeChecked();
  await expect(panel.getByText('Ask about this notebook')).toBeVisible();
  await expect(panel.getByRole('combobox', { name: 'Model' })).toHaveValue(
    'fake-model'
  );

  // Record every length the answer's text goes through, to see it arrive in pieces.
  await lab.page.evaluate(() => {
    const w = window as any;
    w.chatLengths = [];
    const list = document.querySelector('.jp-Chapyter-chatMessages')!;
    new MutationObserver(() => {
      const md = list.querySelector(
        '.jp-mod-assistant .jp-Chapyter-chatMarkdown'
      );
      const length = md?.textContent?.length ?? 0;
      if (w.chatLengths[w.chatLengths.length - 1] !== length) {
        w.chatLengths.push(length);
      }
    }).observe(list, { childList: true, subtree: true, characterData: true });
  });

  const input = panel.getByRole('textbox', { name: 'Ask AI' });
  // The chip follows the draft: once typing pauses, it is previewed with the message.
  const draftPreview = lab.page.waitForRequest(
    r =>
      r.url().includes('/chapyter-ext/context') &&
      (r.postData() ?? '').includes('"message":"Add up the rain of all cities"')
  );
  await input.fill('Add up the rain of all cities');
  await draftPreview;
  await input.press('Enter');
  await expect(input).toHaveValue('');

  const stop = panel.getByRole('button', { name: 'Stop' });
  await expect(stop).toBeVisible();
  await expect(chatAnswers(panel).first()).toContainText('Add up the');
  await lab.screenshot('chat-01-streaming', panel);

  await expect(stop).toBeHidden();
  await expect(panel.getByRole('button', { name: 'Send' })).toBeVisible();
  const reply = chatAnswers(panel).first();
  await expect(reply).toContainText('The total is printed below the cell.');
  // Markdown: bold text and inline code are rendered, not shown as asterisks and backticks.
  await expect(reply.locator('strong')).toHaveText('total');
  await expect(reply.locator('p code')).toHaveText('rain_mm');
  await expect(reply.locator('pre')).toContainText(
    "total = rain['rain_mm'].sum()"
  );
  // The code block is highlighted like the editor's code (tokens in their own spans).
  expect(await reply.locator('pre span[class]').count()).toBeGreaterThan(2);
  const lengths: number[] = await lab.page.evaluate(
    () => (window as any).chatLengths
  );
  expect(lengths.filter(n => n > 0).length).toBeGreaterThan(3);

  // The model was asked with the notebook's context: the variables and the last error.
  const requests = await model.chatRequests();
  expect(requests).toHaveLength(1);
  const sent = JSON.stringify(requests[0].body.messages);
  expect(sent).toContain('Add up the rain of all cities');
  expect(sent).toContain('rain (DataFrame)');
  // The kernel's facts reach the server through the browser: columns and labels.
  expect(sent).toContain("'rain_mm' int64");
  expect(sent).toContain("3 labels: 'Oslo' 33%");
  expect(sent).toContain("NameError: name 'rainfall' is not defined");
  expect(sent).toContain('chat-ask.ipynb');

  const actions = reply.getByRole('group', { name: 'Code actions' });
  await expect(
    actions.getByRole('button', { name: 'Insert below' })
  ).toBeVisible();
  await expect(actions.getByRole('button', { name: 'Copy' })).toBeVisible();
  await lab.screenshot('chat-02-answer', panel);
  await actions.getByRole('button', { name: 'Insert and run' }).click();

  const cells = await lab.waitForCells(
    file,
    cells =>
      cells[1]?.outputs.some(o => o.text.includes('total rain 1501')) ?? false,
    'the inserted cell below the data cell ran'
  );
  const inserted = cells[1];
  expect(cells.map(c => c.id)).toEqual([
    'data',
    inserted.id,
    'broken',
    'after'
  ]);
  expect(inserted.source).toBe(code);
  expect(inserted.chapyter).toMatchObject({
    schema: 1,
    role: 'generated',
    source: 'chat',
    model: 'fake-model',
    edited: false
  });
  expect(inserted.chapyter!.code_sha256).toMatch(/^[0-9a-f]{64}$/);
  expect(inserted.chapyter!.chat_id).toMatch(/^[0-9a-f]{32}$/);
  expect(inserted.chapyter!.message_id).toMatch(/^[0-9a-f]{32}$/);
  expect(Date.parse(inserted.chapyter!.created)).not.toBeNaN();
  expect(inserted.classes).toContain('jp-Chapyter-generated');
  expect(inserted.active).toBe(true);
  await lab.screenshot('chat-03-inserted-and-run');

  // After a reload the chat of this notebook is back, loaded from the server.
  await lab.save(file);
  await lab.reload();
  await lab.openNotebook(file);
  const again = await openChat(lab);
  await expect(
    again.locator('.jp-Chapyter-chatMessage.jp-mod-user')
  ).toHaveText(/Add up the rain of all cities/);
  await expect(chatAnswers(again)).toHaveCount(1);
  await expect(chatAnswers(again).first()).toContainText(
    'The total is printed below the cell.'
  );
  await expect(
    chatAnswers(again).first().getByRole('button', { name: 'Insert and run' })
  ).toBeVisible();
  await lab.screenshot('chat-04-after-reload');
});

test('a model failure shows a clear one-line message', async ({ lab }) => {
  // The server retries a 500 twice: fail every attempt.
  await model.script(
    ...Array.from({ length: 3 }, () => ({
      status: 500,
      error: 'the fake model is down'
    }))
  );
  const file = await chatNotebook('chat-failure', [
    { id: 'one', source: 'x = 1' }
  ]);
  await lab.openNotebook(file);
  const panel = await openChat(lab);
  await ask(panel, 'Say something');

  const alert = panel.getByRole('alert');
  await expect(alert).toBeVisible();
  await expect(alert).toContainText('The model failed:');
  await expect(alert).toContainText('HTTP 500');
  await expect(alert).toContainText('the fake model is down');
  // One line: no line breaks in what the alert says.
  expect(
    (await alert.locator('.jp-Chapyter-chatErrorText').innerText()).includes(
      '\n'
    )
  ).toBe(false);
  await expect(
    chatAnswers(panel).first().locator('.jp-Chapyter-chatStatus')
  ).toHaveText('failed');
  // The failed answer keeps its reason (also after a reload).
  await expect(chatAnswers(panel).first()).toContainText(
    'No answer. The endpoint'
  );
  await expect(panel.getByRole('button', { name: 'Send' })).toBeVisible();
  await lab.screenshot('chat-05-model-failure', panel);

  await panel.getByRole('button', { name: 'Dismiss error' }).click();
  await expect(alert).toBeHidden();
});

test('keyboard: Shift+Enter makes a new line, Stop ends a slow answer, New chat starts over', async ({
  lab
}) => {
  const file = await chatNotebook('chat-keys', [
    { id: 'one', source: 'x = 41 + 1' }
  ]);
  await lab.openNotebook(file);
  const panel = await openChat(lab);
  await expect(
    panel.getByRole('button', { name: 'Explain what the active cell does' })
  ).toBeVisible();
  await lab.screenshot('chat-00-empty', panel);

  const input = panel.getByRole('textbox', { name: 'Ask AI' });
  await input.click();
  await lab.page.keyboard.type('first line');
  await lab.page.keyboard.press('Shift+Enter');
  await lab.page.keyboard.type('second line');
  await expect(input).toHaveValue('first line\nsecond line');
  expect(await model.chatRequests()).toHaveLength(0);

  // Controls are reachable from the keyboard: Tab goes from the input to Attach files, then
  // to Send.
  await lab.page.keyboard.press('Tab');
  await expect(
    panel.getByRole('button', { name: 'Attach files' })
  ).toBeFocused();
  await lab.page.keyboard.press('Tab');
  await expect(panel.getByRole('button', { name: 'Send' })).toBeFocused();

  // The context toggle is for the next message only.
  const toggle = panel.getByRole('checkbox', {
    name: 'Include notebook context'
  });
  await toggle.uncheck();
  await expect(panel.locator('.jp-Chapyter-chatChipSummary')).toHaveText(
    'No context with the next message'
  );

  await model.script({
    content: 'word '.repeat(400),
    chunk_size: 5,
    chunk_delay: 0.2
  });
  await input.press('Enter');
  await expect(toggle).toBeChecked();
  await expect(chatAnswers(panel).first()).toContainText('word word');
  const stop = panel.getByRole('button', { name: 'Stop' });
  await stop.click();
  await expect(
    chatAnswers(panel).first().locator('.jp-Chapyter-chatStatus')
  ).toHaveText('stopped');
  await expect(stop).toBeHidden();
  await expect(panel.getByRole('alert')).toBeHidden();
  const requests = await model.chatRequests();
  expect(requests).toHaveLength(1);
  const sent = JSON.stringify(requests[0].body.messages);
  expect(sent).toContain('first line\\nsecond line');
  expect(sent).not.toContain('x = 41 + 1');

  await panel.getByRole('button', { name: 'New chat' }).click();
  await expect(chatAnswers(panel)).toHaveCount(0);
  await expect(panel.getByText('Ask about this notebook')).toBeVisible();
  await expect(input).toBeFocused();
});

test('the panel follows the theme', async ({ lab }) => {
  await model.script('Use `df.describe()`:\n\n' + fenced('df.describe()'));
  const file = await chatNotebook('chat-theme', [
    { id: 'one', source: 'x = 1' }
  ]);
  await lab.openNotebook(file);
  const panel = await openChat(lab);
  await ask(panel, 'Summarise df');
  await expect(
    chatAnswers(panel).first().getByRole('button', { name: 'Copy' })
  ).toBeVisible();
  const theme = (name: string) =>
    lab.page.evaluate(async name => {
      await (window as any).jupyterapp.commands.execute(
        'apputils:change-theme',
        { theme: name }
      );
    }, name);
  try {
    await theme('JupyterLab Dark');
    await expect(lab.page.locator('body')).toHaveAttribute(
      'data-jp-theme-name',
      'JupyterLab Dark'
    );
    // The panel's background is the theme's, not a colour of its own.
    const colors = await panel.evaluate(node => {
      const style = getComputedStyle(node);
      const body = getComputedStyle(document.body);
      return {
        panel: style.backgroundColor,
        layout: body.getPropertyValue('--jp-layout-color1').trim()
      };
    });
    expect(colors.layout).not.toBe('');
    expect(colors.panel).not.toBe('rgb(255, 255, 255)');
    await lab.screenshot('chat-06-dark-theme');
  } finally {
    await theme('JupyterLab Light');
    await expect(lab.page.locator('body')).toHaveAttribute(
      'data-jp-theme-name',
      'JupyterLab Light'
    );
  }
});
