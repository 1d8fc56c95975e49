/**
 * Checked numbers: an agent turn runs a cell that prints known values, then answers with a
 * correct, a rounded, a wrong and an invented number. Each is marked as the server judged it:
 * found (subtle; hover or focus says where), not found in this turn's outputs (visible, said
 * to screen readers too), a trivial count not at all; the marks come back after a reload.
 */

import {
  agentCells,
  agentWithData,
  resetAgentSettings,
  runCode
} from './agent-helpers';
import { ask, chatAnswers, expect, model, openChat, test } from './fixtures';

test.afterEach(resetAgentSettings);

const STEP = "print('total revenue: 10006.50')\nprint('mean churn: 0.4567')";
const ANSWER =
  'Total revenue is **10,006.50** (about 10.0k); mean churn is 0.46, not 0.47. ' +
  'Also, 4,321 orders came in over 3 weeks.';
const NOT_FOUND = "not found in this turn's outputs";

test("an agent answer's numbers are marked found or not found in what the turn saw", async ({
  lab
}) => {
  await model.script(runCode(STEP, 'Print the figures'), ANSWER);
  const { file, panel } = await agentWithData(lab, 'numbers', 'Never ask');
  await ask(panel, 'What are the revenue and the churn?');

  const answer = chatAnswers(panel);
  await expect(answer).toContainText('4,321 orders', { timeout: 60_000 });
  await expect(panel.getByRole('button', { name: 'Send' })).toBeVisible();
  const cells = await lab.waitForCells(
    file,
    cells => agentCells(cells).every(c => c.executionCount !== null),
    'the agent cell ran'
  );
  const [step] = agentCells(cells);
  const where = `cell [${step.executionCount}] output`;

  const marks = answer.locator('.jp-Chapyter-number');
  await expect(marks).toHaveCount(5);
  const found = answer.locator('.jp-Chapyter-number.jp-mod-found');
  const missing = answer.locator('.jp-Chapyter-number.jp-mod-notFound');
  expect(await found.allTextContents()).toEqual(['10,006.50', '10.0k', '0.46']);
  expect(await missing.allTextContents()).toEqual(['0.47', '4,321']);
  // The trivial "3" is left as text, and the answer's text is the answer's.
  await expect(
    answer.locator('.jp-Chapyter-number', { hasText: /^3$/ })
  ).toHaveCount(0);
  await expect(answer).toContainText('4,321 orders came in over 3 weeks.');
  await expect(answer.locator('strong .jp-Chapyter-number')).toHaveCount(1);

  // Screen readers hear why.
  await expect(missing.nth(0)).toHaveAccessibleDescription(
    `0.47: ${NOT_FOUND}`
  );
  await expect(missing.nth(1)).toHaveAccessibleDescription(
    `4,321: ${NOT_FOUND}`
  );
  const revenue = `Found in ${where}: “total revenue: 10006.50”`;
  await expect(found.nth(0)).toHaveAccessibleDescription(revenue);
  await expect(found.nth(2)).toHaveAccessibleDescription(
    `Found in ${where}: “mean churn: 0.4567”`
  );

  // Hover shows where; so does keyboard focus.
  const tip = (mark: typeof marks) =>
    mark.evaluate(node => {
      const style = getComputedStyle(node, '::before');
      return style.display === 'none' ? '' : style.content;
    });
  expect(await tip(found.nth(0))).toBe('');
  await found.nth(0).hover();
  await expect.poll(() => tip(found.nth(0))).toContain(revenue);
  await lab.screenshot('checked-numbers-01-found-hover', panel);
  await missing.nth(0).focus();
  await expect.poll(() => tip(missing.nth(0))).toContain(NOT_FOUND);
  await lab.page.mouse.move(0, 0);
  await lab.screenshot('checked-numbers-02-not-found-focus', panel);

  // The verdicts are kept with the answer: a reload marks it the same.
  await lab.reload();
  const again = chatAnswers(await openChat(lab));
  await expect(
    again.locator('.jp-Chapyter-number.jp-mod-notFound')
  ).toHaveCount(2, {
    timeout: 60_000
  });
  await expect(again.locator('.jp-Chapyter-number.jp-mod-found')).toHaveCount(
    3
  );
});
