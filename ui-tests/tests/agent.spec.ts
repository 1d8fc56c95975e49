/**
 * Agent mode in the AI Chat: the model runs code in new cells of the active notebook, sees the
 * error, runs fixed code and answers from the value it printed; approval (Run, Edit, Skip);
 * "Undo this turn" removes the turn's cells in one notebook undo step; a turn whose steps
 * change nothing stops, with the step waiting for approval in view while text streams.
 */

import {
  agentCells,
  agentNotebook,
  agentWithData,
  openAgent,
  resetAgentSettings,
  runCode
} from './agent-helpers';
import { ask, chatAnswers, expect, model, openChat, test } from './fixtures';

test.afterEach(resetAgentSettings);

test('the agent runs code, sees its error, fixes it and answers from the value; undo removes its cells', async ({
  lab
}) => {
  const broken = "total = rain['rain_mm'].sum()\nprint('total', totl)";
  const fixed = "total = rain['rain_mm'].sum()\nprint('total', total)";
  await model.script(
    runCode(broken, 'Add up the rain'),
    runCode(fixed, 'Fix the typo'),
    'The total rainfall of the three cities is **1501 mm**.'
  );
  const { file, panel } = await agentWithData(lab, 'agent-fix', 'Never ask');
  await expect(panel.locator('.jp-Chapyter-chatChipSummary')).toContainText(
    'Agent: never ask'
  );
  await ask(panel, 'What is the total rainfall?');

  const answer = chatAnswers(panel);
  await expect(answer).toContainText('1501 mm', { timeout: 60_000 });
  await expect(panel.getByRole('button', { name: 'Send' })).toBeVisible();

  // Both steps became real cells below the active cell, in order, and ran there.
  const cells = await lab.waitForCells(
    file,
    cells => agentCells(cells).every(c => c.executionCount !== null),
    'the agent cells ran'
  );
  const [first, second] = agentCells(cells);
  expect(cells.map(c => c.id)).toEqual(['data', first.id, second.id, 'after']);
  expect(first.source).toBe(broken);
  expect(
    first.outputs.some(o => o.type === 'error' && o.text.includes('NameError'))
  ).toBe(true);
  expect(second.source).toBe(fixed);
  expect(second.outputs.map(o => o.text).join('')).toContain('total 1501');
  expect(first.chapyter).toMatchObject({
    schema: 1,
    role: 'generated',
    source: 'agent',
    model: 'fake-model',
    edited: false
  });
  expect(first.chapyter!.chat_id).toMatch(/^[0-9a-f]{32}$/);
  expect(first.chapyter!.message_id).toMatch(/^[0-9a-f]{32}$/);
  expect(second.chapyter!.message_id).toBe(first.chapyter!.message_id);
  expect(first.chapyter!.step_id).toBeTruthy();
  expect(first.chapyter!.step_id).not.toBe(second.chapyter!.step_id);
  expect(first.chapyter!.code_sha256).toMatch(/^[0-9a-f]{64}$/);
  expect(first.classes).toContain('jp-Chapyter-generated');

  // The model saw the error after the first run and the value after the second.
  const requests = await model.chatRequests();
  expect(requests).toHaveLength(3);
  expect(requests[0].body.tools?.length).toBeGreaterThan(0);
  expect(JSON.stringify(requests[1].body.messages)).toContain('NameError');
  expect(JSON.stringify(requests[2].body.messages)).toContain('total 1501');

  // Each step is compact: a title, a one-line outcome, a link to its cell.
  const steps = answer.locator('.jp-Chapyter-agentStep');
  await expect(steps).toHaveCount(2);
  await expect(steps.nth(0)).toContainText('NameError');
  await expect(
    steps.nth(0).locator('.jp-Chapyter-agentStepCode')
  ).not.toHaveAttribute('open');
  // As JupyterLab shows the cell: "cell [n]" beside its `[n]:`.
  const name = `cell [${second.executionCount}]`;
  const link = steps.nth(1).getByRole('button', { name, exact: true });
  await expect(link).toBeVisible();
  await lab.screenshot('agent-01-answer');
  await link.click();
  await expect
    .poll(async () => (await lab.cell(file, second.id)).active)
    .toBe(true);

  // After a reload the turn is back from the history, with its steps and links, and
  // agent mode is still on (remembered per user).
  await lab.save(file);
  await lab.reload();
  await lab.openNotebook(file);
  await openChat(lab);
  await expect(
    panel.getByRole('checkbox', { name: 'Agent mode' })
  ).toBeChecked();
  await expect(answer).toContainText('1501 mm');
  await expect(steps).toHaveCount(2);
  await expect(
    steps.nth(1).getByRole('button', { name, exact: true })
  ).toBeVisible();

  // Undo this turn: both cells go, in one notebook undo step.
  await answer.getByRole('button', { name: 'Undo this turn' }).click();
  await expect(answer).toContainText('Removed 2 cells');
  expect((await lab.cells(file)).map(c => c.id)).toEqual(['data', 'after']);
  await lab.page.evaluate(file => {
    const app = (window as any).jupyterapp;
    const panel = Array.from(app.shell.widgets('main')).find(
      (w: any) => w.context?.path === file
    ) as any;
    panel.content.model.sharedModel.undo();
  }, file);
  expect((await lab.cells(file)).map(c => c.id)).toEqual([
    'data',
    first.id,
    second.id,
    'after'
  ]);
});

test('approval: Run, Edit then Run, and Skip', async ({ lab }) => {
  await model.script(
    runCode('x = 6 * 7\nprint(x)', 'Compute x'),
    runCode("y = x + 1\nprint('y', y)", 'Add one'),
    runCode("import os\nos.remove('notes.txt')", 'Clean up'),
    'x is 42 and y is 100; I did not delete notes.txt.'
  );
  const file = await agentNotebook('agent-approval');
  await lab.openNotebook(file);
  await lab.focusEditor(file, 'data');
  const panel = await openAgent(lab, 'Ask before every run');
  await ask(panel, 'Compute x and y');

  const answer = chatAnswers(panel);
  const approval = answer.getByRole('group', { name: 'Approve the step' });

  // 1. Run, from the keyboard. Nothing is inserted before the user says so.
  const run = approval.getByRole('button', { name: 'Run' });
  await expect(run).toBeVisible({ timeout: 60_000 });
  await expect(answer.getByLabel('Proposed code')).toHaveText(
    'x = 6 * 7\nprint(x)'
  );
  expect(agentCells(await lab.cells(file))).toHaveLength(0);
  await lab.screenshot('agent-02-approval', panel);
  await run.focus();
  await lab.page.keyboard.press('Enter');

  // 2. Edit, then Run: the edited code is what runs.
  const edit = approval.getByRole('button', { name: 'Edit' });
  await expect(answer.getByLabel('Proposed code')).toHaveText(
    "y = x + 1\nprint('y', y)",
    { timeout: 60_000 }
  );
  await edit.click();
  const editor = answer.getByRole('textbox', { name: 'Code to run' });
  await expect(editor).toBeFocused();
  await editor.fill("y = x + 58\nprint('y', y)");
  await approval.getByRole('button', { name: 'Run' }).click();

  // 3. Skip: nothing runs, the model is told.
  await expect(answer.getByLabel('Proposed code')).toContainText('os.remove', {
    timeout: 60_000
  });
  // The policy's reasons, found in the code's AST, say why it asks.
  await expect(
    answer.getByRole('list', { name: 'Why approval is asked' })
  ).toContainText('deletes files');
  await approval.getByRole('button', { name: 'Skip' }).click();

  await expect(answer).toContainText('y is 100', { timeout: 60_000 });
  const cells = agentCells(await lab.cells(file));
  expect(cells.map(c => c.source)).toEqual([
    'x = 6 * 7\nprint(x)',
    "y = x + 58\nprint('y', y)"
  ]);
  expect(cells[1].outputs.map(o => o.text).join('')).toContain('y 100');
  const steps = answer.locator('.jp-Chapyter-agentStep');
  await expect(steps).toHaveCount(3);
  await expect(steps.nth(2)).toHaveClass(/jp-mod-skipped/);
  const requests = await model.chatRequests();
  expect(requests).toHaveLength(4);
  expect(JSON.stringify(requests[2].body.messages)).toContain('y 100');
  expect(JSON.stringify(requests[3].body.messages).toLowerCase()).toContain(
    'skipped'
  );
  await lab.screenshot('agent-03-after-approval', panel);
});

test('a figure step: the model gets the digest built in the kernel', async ({
  lab
}) => {
  // The title is assembled at run time, so only the kernel's digest can hold it whole.
  const plot =
    "import matplotlib.pyplot as plt\nt = 'Rain' + ' by city'\n" +
    "plt.bar(rain['city'], rain['rain_mm'], label='rain')\nplt.title(t)";
  await model.script(runCode(plot, 'Plot the rain'), 'Oslo is the wettest.');
  const { file, panel } = await agentWithData(lab, 'agent-figure', 'Never ask');
  await ask(panel, 'Plot the rain');
  const answer = chatAnswers(panel);
  await expect(answer).toContainText('Oslo is the wettest.', {
    timeout: 60_000
  });
  const [cell] = agentCells(await lab.cells(file));
  expect(cell.outputs.some(o => o.mimes.includes('image/png'))).toBe(true);
  const requests = await model.chatRequests();
  expect(requests).toHaveLength(2);
  const seen = JSON.stringify(requests[1].body.messages);
  // The fake model takes no images: the digest the kernel built from the figure object.
  expect(seen).toContain('Figure 1');
  expect(seen).toContain("title 'Rain by city'");
  expect(seen).not.toContain('no description of it is available');
});

test('Stop interrupts the running step and ends the turn', async ({ lab }) => {
  await model.script(
    runCode("import time\nprint('sleeping', flush=True)\ntime.sleep(60)")
  );
  const file = await agentNotebook('agent-stop');
  await lab.openNotebook(file);
  const panel = await openAgent(lab, 'Never ask');
  await ask(panel, 'Wait a minute');
  await lab.waitForCells(
    file,
    cells =>
      agentCells(cells).some(c =>
        c.outputs.some(o => o.text.includes('sleeping'))
      ),
    'the step runs',
    60_000
  );
  await panel.getByRole('button', { name: 'Stop' }).click();
  const answer = chatAnswers(panel);
  await expect(answer.locator('.jp-Chapyter-chatStatus')).toHaveText(
    'stopped',
    { timeout: 20_000 }
  );
  await expect(panel.getByRole('button', { name: 'Send' })).toBeVisible();
  const cells = await lab.waitForCells(
    file,
    cells =>
      agentCells(cells).some(c =>
        c.outputs.some(o => o.text.includes('KeyboardInterrupt'))
      ),
    'the running cell was interrupted',
    20_000
  );
  expect(agentCells(cells)).toHaveLength(1);
  // The model was not asked again after Stop.
  expect(await model.chatRequests()).toHaveLength(1);
  await lab.waitForKernelIdle(file);
});

test('reads: the variables and an existing cell go back to the model as text', async ({
  lab
}) => {
  await model.script(
    { tool_calls: [{ name: 'list_variables', arguments: {} }] },
    { tool_calls: [{ name: 'read_cell', arguments: { cell: '1' } }] },
    'The notebook holds `rain`, read in cell 1.'
  );
  const { file, panel } = await agentWithData(
    lab,
    'agent-read',
    'Ask before every run'
  );
  await ask(panel, 'What data is there?');
  const answer = chatAnswers(panel);
  // Reads never ask and never insert a cell.
  await expect(answer).toContainText('read in cell 1', { timeout: 60_000 });
  await expect(answer.locator('.jp-Chapyter-agentStep')).toHaveCount(2);
  expect(agentCells(await lab.cells(file))).toHaveLength(0);
  const requests = await model.chatRequests();
  expect(requests).toHaveLength(3);
  expect(JSON.stringify(requests[1].body.messages)).toContain(
    'rain (DataFrame)'
  );
  expect(JSON.stringify(requests[2].body.messages)).toContain(
    "'rain_mm': [763, 16, 722]"
  );
});

test('a model error during a turn is one line; the cells already run stay', async ({
  lab
}) => {
  await model.script(runCode("print('step one ran')"), {
    status: 401,
    error: 'Incorrect API key provided.'
  });
  const file = await agentNotebook('agent-error');
  await lab.openNotebook(file);
  await lab.focusEditor(file, 'data');
  const panel = await openAgent(lab, 'Never ask');
  await ask(panel, 'Do something');
  const answer = chatAnswers(panel);
  await expect(answer.locator('.jp-Chapyter-chatStatus')).toHaveText('failed', {
    timeout: 60_000
  });
  const error = panel.locator('.jp-Chapyter-chatErrorText');
  await expect(error).toBeVisible();
  const line = (await error.textContent()) ?? '';
  expect(line).not.toContain('\n');
  expect(line.toLowerCase()).toContain('key');
  await expect(panel.getByRole('button', { name: 'Send' })).toBeVisible();
  const cells = agentCells(await lab.cells(file));
  expect(cells).toHaveLength(1);
  expect(cells[0].outputs.map(o => o.text).join('')).toContain('step one ran');
  await lab.screenshot('agent-04-error', panel);
});

test('a turn whose steps change nothing stops; the pending step stays in view as text streams', async ({
  lab
}) => {
  // The loop of the issue: functions defined and never called, one step after the other.
  const prose = Array.from(
    { length: 40 },
    (_, i) => `Line ${i + 1} of my reasoning about the area of a circle.`
  ).join('\n');
  await model.script(
    {
      content: prose,
      chunk_size: 40,
      chunk_delay: 0.01,
      tool_calls: [
        {
          name: 'run_code',
          arguments: { code: 'def area(r):\n    return 3.14 * r * r' }
        }
      ]
    },
    runCode('def perimeter(r):\n    return 2 * 3.14 * r'),
    runCode('print(area(2))'),
    'never asked for'
  );
  const file = await agentNotebook('agent-idle');
  await lab.openNotebook(file);
  await lab.focusEditor(file, 'data');
  const panel = await openAgent(lab, 'Ask before every run');
  await ask(panel, 'What is the area of a circle of radius 2?');

  const answer = chatAnswers(panel);
  const approval = answer.getByRole('group', { name: 'Approve the step' });
  const run = approval.getByRole('button', { name: 'Run' });
  await expect(run).toBeVisible({ timeout: 60_000 });
  await expect(answer).toContainText('Line 40 of my reasoning');
  // Forty lines of text above it, and its buttons are still where the reader looks.
  await expect(run).toBeInViewport();
  await expect(approval.getByRole('button', { name: 'Skip' })).toBeInViewport();
  await lab.screenshot('agent-05-pending-in-view', panel);
  await run.click();
  await expect(answer.getByLabel('Proposed code')).toContainText('perimeter', {
    timeout: 60_000
  });
  await expect(run).toBeInViewport();
  await run.click();

  // Two steps in a row showed nothing and changed no variable: the turn ends there.
  await expect(answer).toContainText(
    'Stopped: two steps in a row showed nothing and changed no variable.',
    { timeout: 60_000 }
  );
  await expect(panel.getByRole('button', { name: 'Send' })).toBeVisible();
  const cells = agentCells(await lab.cells(file));
  expect(cells.map(c => c.source)).toEqual([
    'def area(r):\n    return 3.14 * r * r',
    'def perimeter(r):\n    return 2 * 3.14 * r'
  ]);
  // The model was told once that the first step changed nothing, and never asked again
  // after the second.
  const requests = await model.chatRequests();
  expect(requests).toHaveLength(2);
  expect(JSON.stringify(requests[1].body.messages)).toContain(
    'made no progress'
  );
  await expect(answer.getByRole('button', { name: 'Run' })).toHaveCount(0);
  // Next to "Undo this turn", nothing says that the cells stay.
  await expect(answer).not.toContainText('already run stay');
  await lab.screenshot('agent-06-idle-stop', panel);
});
