/**
 * A Fix you can see (busy where the click was, the proposal brought
 * into view), "Ask again" on chapyter-ext's own `%%ai` failure line, cells named as JupyterLab
 * shows them (agent steps, Explain), error lines that say where to look in words, and a
 * replayed prompt cell that does not look unrun.
 */

import { Locator, Page } from '@playwright/test';

import {
  agentCells,
  openAgent,
  resetAgentSettings,
  runCode
} from './agent-helpers';
import {
  ask,
  chatAnswers,
  chatNotebook,
  expect,
  fenced,
  Lab,
  model,
  outputText,
  RAIN,
  test
} from './fixtures';

test.afterEach(resetAgentSettings);

/** Thirty distinct frames (exec'd functions): a traceback a few screens long. */
const DEEP =
  "src = \"def f0():\\n    raise ValueError('deep')\\n\" + ''.join(" +
  'f"def f{i}():\\n    return f{i - 1}()\\n" for i in range(1, 30))\n' +
  'exec(src)\nf29()';
const FIXED = "print('no longer deep')";

/** How much of `target` the notebook's scroller shows, 0 to 1 (its top part counts most). */
async function shownInNotebook(page: Page, target: Locator): Promise<number> {
  const handle = await target.elementHandle();
  return page.evaluate(node => {
    const scroller = node!.closest('.jp-WindowedPanel-outer') ?? document.body;
    const view = scroller.getBoundingClientRect();
    const box = node!.getBoundingClientRect();
    const top = Math.max(view.top, box.top, 0);
    const bottom = Math.min(view.bottom, box.bottom, window.innerHeight);
    return Math.max(0, bottom - top) / Math.min(box.height, view.height);
  }, handle);
}

/** The text of a cell's input prompt as JupyterLab draws it: "[3]:", "[ ]:". */
function inputPrompt(cell: Locator): Locator {
  return cell.locator('.jp-InputArea-prompt');
}

test('Fix at the bottom of a long traceback: busy at once where the click was, the proposal in view', async ({
  lab
}) => {
  const file = await lab.aiNotebook('fix-long', [{ id: 'deep', source: DEEP }]);
  await lab.runCell(file, 'deep');
  const cell = await lab.cellLocator(file, 'deep');
  const fix = cell
    .locator('.jp-Chapyter-errorActions')
    .getByRole('button', { name: 'Fix', exact: true });
  await expect(fix).toBeVisible({ timeout: 60_000 });
  // The answer takes a while, as a real model's does.
  await model.script({
    content: `Cell: deep\n${fenced(FIXED)}\nCall nothing that raises.`,
    delay: 5
  });
  await fix.scrollIntoViewIfNeeded();
  const box = await cell.boundingBox();
  const viewport = lab.page.viewportSize()!;
  expect(
    box!.height,
    'the traceback is taller than the window'
  ).toBeGreaterThan(viewport.height);
  const review = cell.locator('.jp-Chapyter-review');
  expect(await shownInNotebook(lab.page, cell.locator('.jp-InputArea'))).toBe(
    0
  );
  await fix.click();

  // At once, on the button that was clicked: a labelled busy state.
  const busy = cell.locator('.jp-Chapyter-errorFix[aria-busy="true"]');
  await expect(busy).toHaveText('Fixing…', { timeout: 2000 });
  await expect(busy).toHaveAttribute('aria-label', 'Fixing…');
  expect(await shownInNotebook(lab.page, busy)).toBe(1);
  await lab.screenshot(
    'fix-words-01-busy',
    cell.locator('.jp-Chapyter-errorActions')
  );
  expect(await review.count()).toBe(0);

  // The proposal, above the editor, comes into view; the button is Fix again.
  await expect(review).toBeVisible({ timeout: 30_000 });
  await expect
    .poll(() => shownInNotebook(lab.page, review), { timeout: 5000 })
    .toBeGreaterThan(0.9);
  await expect(fix).toHaveAttribute('aria-busy', 'false');
  await expect(fix).toHaveText('Fix');
  await lab.screenshot('fix-words-02-proposal-in-view');
});

test('a %%ai cell whose model call failed offers Ask again, not Fix or Explain', async ({
  lab
}) => {
  const file = await lab.aiNotebook('ask-again', [
    { id: 'prompt', source: '%%ai\nprint the answer' }
  ]);
  await model.script({ status: 401, error: 'Incorrect API key provided.' });
  await lab.runCell(file, 'prompt');
  const cell = await lab.cellLocator(file, 'prompt');
  const bar = cell.locator('.jp-Chapyter-errorActions');
  const again = bar.getByRole('button', { name: 'Ask again', exact: true });
  await expect(again).toBeVisible({ timeout: 60_000 });
  await expect(cell.locator('.jp-Cell-outputArea')).toContainText(
    'chapyter-ext:'
  );
  await expect(
    bar.getByRole('button', { name: 'Fix', exact: true })
  ).toHaveCount(0);
  await expect(
    bar.getByRole('button', { name: 'Explain', exact: true })
  ).toHaveCount(0);
  await lab.screenshot('fix-words-03-ask-again', cell);

  // Ask again runs the %%ai cell alone: the model is asked once more, the code lands below.
  await model.script(fenced("print('asked', 6 * 7)"));
  await again.click();
  const cells = await lab.waitForCells(
    file,
    cells => outputText(cells[2]).includes('asked 42'),
    'the %%ai cell asked again and its code ran'
  );
  expect(cells[2].chapyter).toMatchObject({ role: 'generated' });
  expect(await model.chatRequests()).toHaveLength(2);
  await expect(bar).toHaveCount(0);
});

test('agent steps and Explain name a cell as JupyterLab shows it', async ({
  lab
}) => {
  // A cell never run first: the data cell is the 2nd from the top and shows [1].
  const file = await chatNotebook('named-cells', [
    { id: 'note', source: '# notes, never run' },
    { id: 'data', source: RAIN },
    { id: 'bad', source: 'print(rainfall)' }
  ]);
  await lab.openNotebook(file);
  await lab.runCell(file, 'data');
  await lab.waitForCells(
    file,
    cells => cells[1].executionCount !== null,
    'the data cell ran'
  );
  await model.script(runCode("print('cities', len(rain))"), 'Three cities.');
  const panel = await openAgent(lab, 'Never ask');
  await ask(panel, 'How many cities?');
  await expect(chatAnswers(panel)).toContainText('Three cities', {
    timeout: 60_000
  });
  const cells = await lab.waitForCells(
    file,
    cells => agentCells(cells).every(c => c.executionCount !== null),
    'the agent cell ran'
  );
  const [step] = agentCells(cells);
  // JupyterLab shows it as [2], the 3rd cell from the top: the step says "cell [2]".
  expect(step.index).toBe(2);
  const link = chatAnswers(panel)
    .locator('.jp-Chapyter-agentStep')
    .getByRole('button', {
      name: `cell [${step.executionCount}]`,
      exact: true
    });
  await expect(link).toBeVisible();
  const stepCell = await lab.cellLocator(file, step.id);
  await expect(inputPrompt(stepCell)).toHaveText(`[${step.executionCount}]:`);
  await lab.screenshot('fix-words-04-agent-step');
  await panel.getByRole('checkbox', { name: 'Agent mode' }).uncheck();

  // Explain of the failing cell (the 4th from the top, showing [3]).
  await lab.runCell(file, 'bad');
  const bad = await lab.cellLocator(file, 'bad');
  const explain = bad
    .locator('.jp-Chapyter-errorActions')
    .getByRole('button', { name: 'Explain', exact: true });
  await expect(explain).toBeVisible({ timeout: 60_000 });
  const shown = (await lab.cell(file, 'bad')).executionCount;
  await expect(inputPrompt(bad)).toHaveText(`[${shown}]:`);
  await model.script('The name `rainfall` is never defined: use `rain`.');
  await explain.click();
  await expect(panel).toContainText(`Explain why cell [${shown}] failed`, {
    timeout: 30_000
  });
  await expect(chatAnswers(panel).last()).toContainText('never defined', {
    timeout: 30_000
  });
  // The context the model read names the cell the same way.
  const sent = JSON.stringify((await model.chatRequests()).at(-1)!.body);
  expect(sent).toContain(`is not defined (cell [${shown}])`);
  expect(sent).not.toContain('4th cell');
  await lab.screenshot('fix-words-05-explain');
});

test('an error line says where to look in words, not "(README.md#endpoints)"', async ({
  lab
}) => {
  const file = await lab.aiNotebook('endpoints-words', [
    { id: 'small', source: '%config Chapyter.prompt_style = "small"' },
    { id: 'prompt', source: '%%ai\nmean of nothing' }
  ]);
  await lab.runCell(file, 'small');
  await lab.waitForCells(
    file,
    cells => cells[1].executionCount !== null,
    'the small prompt style is set'
  );
  // Three answers with no code: the small-model path gives up with its one line.
  await model.script('no code here', 'still none', 'nothing at all');
  await lab.runCell(file, 'prompt');
  const cells = await lab.waitForCells(
    file,
    cells => cells[2].outputs.some(o => o.type === 'error'),
    'the %%ai cell shows its one line'
  );
  const line = outputText(cells[2]);
  expect(line).toContain('could not write this');
  expect(line).not.toContain('README.md#');
  expect(line).toContain('set OPENAI_API_KEY and CHAPYTER_MODEL');
  expect(line).toContain("the README's section Endpoints");
  const cell = await lab.cellLocator(file, 'prompt');
  await expect(cell.locator('.jp-Cell-outputArea')).not.toContainText(
    'README.md#'
  );
  await lab.screenshot('fix-words-06-endpoints-words', cell);
});

test('a replayed prompt cell shows a count, not [ ]:, and says so in the one wording', async ({
  lab
}) => {
  const file = await lab.aiNotebook('replay-count', [
    { id: 'prompt', source: '%%ai\nsay hello' }
  ]);
  await model.script(fenced("print('hello')"));
  await lab.runCell(file, 'prompt');
  await lab.waitForCells(
    file,
    cells => outputText(cells[2]).includes('hello'),
    'the generated cell ran'
  );
  const before = (await lab.cells(file))[2].executionCount!;
  await lab.activate(file);
  await lab.command('notebook:run-all-cells');
  const cells = await lab.waitForCells(
    file,
    cells =>
      outputText(cells[1]).includes('↻ replayed') &&
      cells[2].executionCount! > before &&
      cells[2].executionState === 'idle',
    'Run All replayed the prompt and ran its code'
  );
  expect(await model.chatRequests()).toHaveLength(1);
  const [, prompt, generated] = cells;
  expect(outputText(prompt)).toBe(
    '↻ replayed: no model was asked; the saved code in the cell below runs as it is ' +
      '(Shift+Enter on this cell alone asks again)\n'
  );
  expect(prompt.executionCount).toBe(generated.executionCount! - 1);
  const dom = await lab.cellLocator(file, 'prompt');
  await expect(inputPrompt(dom)).toHaveText(`[${prompt.executionCount}]:`);
  await expect(inputPrompt(dom)).not.toHaveText('[ ]:');
  await lab.screenshot('fix-words-07-replayed', dom);
});
