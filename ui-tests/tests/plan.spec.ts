/**
 * Plan first: `/plan ...` gets a plan of numbered steps (nothing runs) drawn as an editable
 * list; the user edits a step, moves one up, deletes one; Run plan starts an agent turn
 * whose request carries the edited plan, whose cell waits for approval, and whose steps are
 * marked done as the model calls `plan_step`; the plan is back after a reload.
 */

import {
  agentCells,
  agentNotebook,
  openAgent,
  resetAgentSettings
} from './agent-helpers';
import { chatAnswers, expect, model, openChat, test } from './fixtures';

test.afterEach(resetAgentSettings);

const PLAN = [
  'Here is a plan:',
  '',
  '1. Sum the rain per city',
  '2. Find the wettest city',
  '3. Plot the totals',
  '',
  'Edit it before running it.'
].join('\n');
const CODE =
  "totals = rain.groupby('city')['rain_mm'].sum()\nprint(totals.idxmax(), totals.max())";

function planStep(step: number, status: string, note: string) {
  return {
    tool_calls: [{ name: 'plan_step', arguments: { step, status, note } }]
  };
}

test('/plan: edit, reorder and delete steps, then Run plan marks them as the agent goes', async ({
  lab
}) => {
  await model.script(
    PLAN,
    {
      tool_calls: [
        { name: 'run_code', arguments: { code: CODE, purpose: 'Totals' } }
      ]
    },
    planStep(1, 'done', 'Oslo, 763 mm'),
    planStep(2, 'done', 'per-city sums printed'),
    'Oslo is the wettest city with 763 mm.'
  );
  const file = await agentNotebook('plan-first');
  await lab.openNotebook(file);
  await lab.waitForKernelIdle(file);
  await lab.runCell(file, 'data');
  await lab.waitForCells(
    file,
    cells => cells.find(c => c.id === 'data')!.executionCount !== null,
    'the data cell ran'
  );
  const panel = await openAgent(lab, 'Ask before every run');

  // /plan: the model is asked for steps only; nothing runs.
  const input = panel.getByRole('textbox', { name: 'Ask AI' });
  await input.fill('/plan find the wettest city');
  await input.press('Enter');
  const answer = chatAnswers(panel).last();
  const draft = answer.locator('.jp-Chapyter-planDraft');
  await expect(draft).toBeVisible({ timeout: 60_000 });
  const fields = draft.getByRole('textbox');
  await expect(fields).toHaveCount(3);
  await expect(fields.nth(0)).toHaveValue('Sum the rain per city');
  let requests = await model.chatRequests();
  expect(requests).toHaveLength(1);
  expect(JSON.stringify(requests[0].body.messages[0])).toContain(
    'numbered list'
  );
  expect(requests[0].body.tools).toBeUndefined();
  expect(agentCells(await lab.cells(file))).toHaveLength(0);
  await lab.screenshot('plan-01-proposed', panel);

  // Edit step 2, move it up with the keyboard, delete step 3.
  const second = draft.getByRole('textbox', { name: 'Step 2' });
  await second.fill('Find the wettest city and its total');
  await second.press('Alt+ArrowUp');
  await expect(draft.getByRole('textbox', { name: 'Step 1' })).toHaveValue(
    'Find the wettest city and its total'
  );
  await expect(draft.getByRole('textbox', { name: 'Step 1' })).toBeFocused();
  await draft.getByRole('button', { name: 'Move step 1 down' }).click();
  await draft.getByRole('button', { name: 'Move step 2 up' }).click();
  await draft.getByRole('button', { name: 'Delete step 3' }).click();
  await expect(fields).toHaveCount(2);
  await expect(fields.nth(1)).toHaveValue('Sum the rain per city');
  await lab.screenshot('plan-02-edited', panel);

  // Run plan: an agent turn; its cell waits for approval.
  await draft
    .getByRole('button', { name: 'Run plan as an agent turn' })
    .click();
  const turn = chatAnswers(panel).last();
  const approval = turn.getByRole('group', { name: 'Approve the step' });
  await expect(approval.getByRole('button', { name: 'Run' })).toBeVisible({
    timeout: 60_000
  });
  const progress = turn.locator('.jp-Chapyter-planProgress');
  await expect(progress.locator('.jp-Chapyter-planStep')).toHaveCount(2);
  await expect(progress.locator('.jp-mod-pending')).toHaveCount(2);
  await lab.screenshot('plan-03-approval', panel);
  await approval.getByRole('button', { name: 'Run' }).click();

  await expect(turn).toContainText('Oslo is the wettest', { timeout: 60_000 });
  await expect(progress.locator('.jp-mod-done')).toHaveCount(2);
  await expect(progress.locator('.jp-Chapyter-planStep').first()).toContainText(
    'Oslo, 763 mm'
  );
  const [cell] = agentCells(await lab.cells(file));
  expect(cell.source).toBe(CODE);
  expect(cell.outputs.map(o => o.text).join('')).toContain('Oslo 763');

  // The model got the plan as the user left it, in order, and the plan_step tool.
  requests = await model.chatRequests();
  expect(requests).toHaveLength(5);
  const system = requests[1].body.messages[0].content as string;
  expect(system).toContain(
    '<plan>\n1. Find the wettest city and its total\n2. Sum the rain per city\n</plan>'
  );
  expect(system).not.toContain('Plot the totals');
  const tools = (requests[1].body.tools ?? []).map((t: any) => t.function.name);
  expect(tools).toContain('plan_step');
  await lab.screenshot('plan-04-done', panel);

  // After a reload the proposed plan and the followed one are back.
  await lab.save(file);
  await lab.reload();
  await lab.openNotebook(file);
  await openChat(lab);
  const again = chatAnswers(panel).last().locator('.jp-Chapyter-planProgress');
  await expect(again.locator('.jp-mod-done')).toHaveCount(2);
  await expect(
    panel.locator('.jp-Chapyter-planDraft').first().getByRole('textbox')
  ).toHaveCount(3);
});
