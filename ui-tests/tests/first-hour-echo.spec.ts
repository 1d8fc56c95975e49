/**
 * Echoes: an Explain answer that repeats part of the notebook context it
 * was sent (the `<kernel-state>` block's lines) shows one honest line instead, after
 * streaming; a chat answer that repeats an earlier answer of the same chat (the same question
 * asked twice, the same code given twice) is an answer, shown as it is.
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

/** What the server shows in place of an answer that repeated part of its context. */
const PARTIAL_ECHO =
  'The model repeated part of the notebook context it was sent instead of answering; ' +
  'ask again or rephrase.';

test('Explain: an answer that repeats part of the context shows one honest line', async ({
  lab
}) => {
  const file = await lab.aiNotebook('explain-echo', [
    { id: 'bad', source: 'print(undefined_zz + 1)' }
  ]);
  await lab.runCell(file, 'bad');
  const cell = await lab.cellLocator(file, 'bad');
  const explain = cell
    .locator('.jp-Chapyter-errorActions')
    .getByRole('button', { name: 'Explain', exact: true });
  await expect(explain).toBeVisible({ timeout: 60_000 });

  // What a small model did: the context's block in a fence, then a plausible answer.
  const echo =
    '```\n<kernel-state>\nNotebook: explain-echo.ipynb (1 cell; active cell is 1)\n' +
    'Active cell 1 (code):\nprint(undefined_zz + 1)\n```\n' +
    'The name `undefined_zz` is never defined; define it before the cell uses it.';
  // Streamed in small pieces: what streamed is replaced when the answer ends.
  await model.script({ content: echo, chunk_size: 8, chunk_delay: 0.02 });
  await explain.click();

  const panel = lab.page.getByRole('region', { name: 'AI Chat' });
  await expect(panel).toBeVisible();
  await expect(panel.getByRole('button', { name: 'Send' })).toBeVisible({
    timeout: 30_000
  });
  const answer = chatAnswers(panel).last();
  await expect(answer.locator('.jp-Chapyter-chatMarkdown')).toHaveText(
    PARTIAL_ECHO,
    { timeout: 30_000 }
  );
  await expect(answer).not.toContainText('kernel-state');
  await expect(answer.locator('pre')).toHaveCount(0);
  // The model was sent the context it repeated.
  const [request] = await model.chatRequests();
  expect(JSON.stringify(request.body.messages)).toContain('<kernel-state>');
  await lab.screenshot('first-hour-echo-01-explain', panel);
});

test('the same question asked twice gets the same answer twice, shown as it is', async ({
  lab
}) => {
  const code = "total = rain['rain_mm'].sum()\ntotal";
  const answer =
    'Add up the `rain_mm` column of `rain`:\n\n' +
    fenced(code) +
    '\n\nThe total is shown below the cell when it runs.';
  await model.script(answer, answer);
  const file = await chatNotebook('chat-asked-twice', [
    { id: 'data', source: RAIN }
  ]);
  await lab.openNotebook(file);
  await lab.runCell(file, 'data');
  await lab.focusEditor(file, 'data');
  const panel = await openChat(lab);
  const send = panel.getByRole('button', { name: 'Send' });

  for (const n of [1, 2]) {
    await ask(panel, 'How do I get the total rain?');
    await expect(chatAnswers(panel)).toHaveCount(n, { timeout: 30_000 });
    await expect(send).toBeVisible({ timeout: 30_000 });
  }
  const [first, second] = [
    chatAnswers(panel).nth(0),
    chatAnswers(panel).nth(1)
  ];
  for (const reply of [first, second]) {
    await expect(reply).toContainText('Add up the rain_mm column of rain:');
    await expect(reply).toContainText('The total is shown below the cell');
    await expect(reply.locator('pre')).toContainText(
      "total = rain['rain_mm'].sum()"
    );
    await expect(reply).not.toContainText('repeated');
  }
  // The second request carried the first answer as the conversation.
  const requests = await model.chatRequests();
  expect(requests).toHaveLength(2);
  const contents = requests[1].body.messages.map((m: any) => m.content);
  expect(contents).toContain(answer);
  await lab.screenshot('first-hour-echo-02-asked-twice', panel);
});
