/**
 * The follow-ups queue: a message sent while an answer streams is shown as "Queued", can be
 * removed, and what is left is sent when the turn completes (after the first, in order).
 */

import {
  ask,
  chatAnswers,
  chatNotebook,
  expect,
  model,
  openChat,
  RAIN,
  slowReply,
  test
} from './fixtures';

test('a message sent while an answer streams is queued, removable, and sent after it', async ({
  lab
}) => {
  const file = await chatNotebook('follow-ups', [{ id: 'data', source: RAIN }]);
  await lab.openNotebook(file);
  await lab.waitForKernelIdle(file);
  const panel = await openChat(lab);
  await model.script(
    slowReply(
      'Oslo is the wettest of the three cities, with 763 mm a year.',
      8
    ),
    'Pune has 722 mm.'
  );

  await ask(panel, 'Which city is wettest?');
  const stop = panel.getByRole('button', { name: 'Stop' });
  await expect(stop).toBeVisible();
  await ask(panel, 'And the second wettest?');
  await ask(panel, 'Never mind this one');

  const queued = panel.locator('.jp-Chapyter-chatQueued');
  await expect(queued).toHaveCount(2);
  await expect(queued.locator('.jp-Chapyter-chatQueuedBadge')).toHaveText([
    'Queued',
    'Queued'
  ]);
  await expect(stop).toBeVisible(); // still the first answer streaming
  await lab.screenshot('follow-ups-01-queued', panel);

  await panel
    .getByRole('button', { name: /^Remove queued message: Never mind/ })
    .click();
  await expect(queued).toHaveCount(1);
  await expect(queued).toContainText('And the second wettest?');

  await expect(chatAnswers(panel).nth(1)).toContainText('Pune has 722 mm.', {
    timeout: 30_000
  });
  await expect(queued).toHaveCount(0);
  await expect(chatAnswers(panel).first()).toContainText('763 mm a year.');
  const requests = await model.chatRequests();
  expect(requests).toHaveLength(2);
  const last = (r: (typeof requests)[number]) =>
    JSON.stringify(r.body.messages[r.body.messages.length - 1]);
  expect(last(requests[0])).toContain('Which city is wettest?');
  expect(last(requests[1])).toContain('And the second wettest?');
  expect(JSON.stringify(requests.map(r => r.body))).not.toContain(
    'Never mind this one'
  );
  await lab.screenshot('follow-ups-02-sent', panel);
});
