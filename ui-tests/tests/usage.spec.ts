/**
 * Usage in the chat: each answer shows the tokens it used, the header the notebook's running
 * total; a spent budget (a LiteLLM proxy's refusal) is one line naming the limit.
 */

import {
  ask,
  chatAnswers,
  chatNotebook,
  expect,
  model,
  openChat,
  test
} from './fixtures';

test('each answer shows its tokens, the header the running total; a spent budget is one line', async ({
  lab
}) => {
  const file = await chatNotebook('usage', [{ id: 'a', source: 'x = 1' }]);
  await model.script(
    {
      content: 'One.',
      usage: { prompt_tokens: 1200, completion_tokens: 34 }
    },
    { content: 'Two.', usage: { prompt_tokens: 800, completion_tokens: 66 } },
    {
      status: 400,
      error:
        'Budget has been exceeded! Current cost: 10.0124, Max budget: 10.0',
      error_type: 'budget_exceeded',
      error_code: '400'
    }
  );
  await lab.openNotebook(file);
  const panel = await openChat(lab);
  const total = panel.getByRole('status', { name: "This notebook's usage" });

  await ask(panel, 'first question');
  const answers = chatAnswers(panel);
  await expect(
    answers.nth(0).locator('.jp-Chapyter-chatMessageUsage')
  ).toHaveText('1,234 tokens (1,200 in, 34 out)');
  await expect(total).toHaveText(
    'This notebook: 1,234 tokens (1,200 in, 34 out)'
  );

  await ask(panel, 'second question');
  await expect(
    answers.nth(1).locator('.jp-Chapyter-chatMessageUsage')
  ).toHaveText('866 tokens (800 in, 66 out)');
  await expect(total).toHaveText(
    'This notebook: 2,100 tokens (2,000 in, 100 out)'
  );

  await ask(panel, 'third question');
  const line = panel.locator('.jp-Chapyter-chatErrorText');
  await expect(line).toContainText(
    'is used up (HTTP 400): Budget has been exceeded! Current cost: 10.0124, Max budget: 10.0. Ask your administrator to raise it, or wait until it resets.'
  );
  await lab.screenshot('usage-01-tokens-and-budget', panel);
});
