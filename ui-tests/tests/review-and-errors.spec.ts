/**
 * Review before running (`--no-run`), failures of the model call, and hand edits that a
 * regeneration must not overwrite without asking.
 */

import { expect, fenced, Lab, model, outputText, test } from './fixtures';

/** A notebook with a `%%ai` prompt, run, and its answer generated and run below it. */
async function generatedAndRun(
  lab: Lab,
  name: string,
  prompt: string,
  shows: string
): Promise<{ file: string; generatedId: string }> {
  const file = await lab.aiNotebook(name, [{ id: 'prompt', source: prompt }]);
  await lab.runCell(file, 'prompt');
  const { below } = await lab.waitForPair(
    file,
    ({ below }) => !!below?.outputs.some(o => o.text.includes(shows)),
    'generated and run'
  );
  return { file, generatedId: below!.id };
}

test('--no-run inserts the code unrun and selects it for review', async ({
  lab
}) => {
  await model.script(
    fenced("squares = [n * n for n in range(1, 6)]\nprint('squares', squares)")
  );
  const file = await lab.aiNotebook('no-run', [
    { id: 'prompt', source: '%%ai --no-run\nlist the squares of 1 to 5' }
  ]);
  // Shift+Enter, as a person would: JupyterLab moves on to a new cell, the review moves the
  // selection back to the generated code.
  await lab.runCell(file, 'prompt', 'Shift+Enter');
  const cells = await lab.waitForCells(
    file,
    cells =>
      cells[2]?.chapyter?.role === 'generated' &&
      cells[1].executionState === 'idle' &&
      cells[2].active,
    'generated cell inserted and selected'
  );
  await lab.waitForKernelIdle(file);
  // Give a run that should not happen the time to happen.
  await lab.page.waitForTimeout(1500);
  const generated = await lab.cell(file, cells[2].id);
  expect(generated.source).toContain('squares = [n * n for n in range(1, 6)]');
  expect(generated.executionCount).toBeNull();
  expect(generated.outputs).toEqual([]);
  expect(generated.active).toBe(true);
  expect(generated.selected).toBe(true);
  expect(outputText(await lab.cell(file, 'prompt'))).toMatch(
    /inserted below\.$/m
  );
  await lab.screenshot('07a-no-run-selected');
});

test('a failing model call shows one clear line in the prompt cell and inserts nothing', async ({
  lab
}) => {
  const file = await lab.aiNotebook('model-fails', [
    { id: 'prompt', source: '%%ai\nplot something' },
    { id: 'hand', source: "print('hand')" }
  ]);

  const promptDom = await lab.cellLocator(file, 'prompt');
  const visibleLines = async () =>
    (await promptDom.locator('.jp-Cell-outputArea').innerText())
      .split('\n')
      .map(line => line.trim())
      .filter(Boolean);

  // 401: not retried.
  await model.script({ status: 401, error: 'Incorrect API key provided.' });
  await lab.runCell(file, 'prompt');
  let cells = await lab.waitForCells(
    file,
    cells => cells[1].outputs.some(o => o.type === 'error'),
    'the prompt cell shows the error'
  );
  expect(cells.map(c => c.id)).toEqual(['load', 'prompt', 'hand']);
  let lines = await visibleLines();
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(/^chapyter-ext: /);
  expect(lines[0]).toMatch(/401|key/i);
  expect(lines[0]).not.toContain('sk-test');
  expect(await model.chatRequests()).toHaveLength(1);
  await lab.screenshot('07b-model-401', promptDom);

  // 500: retried (immediately, Retry-After: 0), then reported the same way.
  const fail = {
    status: 500,
    error: 'The server had an error.',
    headers: { 'Retry-After': '0' }
  };
  await model.script(fail, fail, fail);
  await lab.runCell(file, 'prompt');
  await expect.poll(async () => (await model.chatRequests()).length).toBe(4);
  cells = await lab.waitForCells(
    file,
    cells =>
      cells[1].executionState === 'idle' &&
      cells[1].outputs.some(o => o.type === 'error'),
    'the prompt cell shows the second error'
  );
  expect(cells.map(c => c.id)).toEqual(['load', 'prompt', 'hand']);
  lines = await visibleLines();
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(/^chapyter-ext: /);
  expect(lines[0]).toMatch(/500|server/i);
  await lab.screenshot('07c-model-500', promptDom);
});

test('regenerating over hand-edited code asks first and records the edit', async ({
  lab
}) => {
  const original = "total = sum(range(10))\nprint('total', total)";
  await model.script(
    fenced(original),
    fenced("total = sum(range(100))\nprint('new total', total)"),
    fenced("total = sum(range(1000))\nprint('newest total', total)")
  );
  const { file, generatedId } = await generatedAndRun(
    lab,
    'edited-regenerate',
    '%%ai\nadd up the numbers below 10',
    'total 45'
  );

  // Edit the generated code by hand.
  await lab.focusEditor(file, generatedId);
  await lab.page.keyboard.press('Control+End');
  await lab.page.keyboard.type("\nprint('my own line')");
  await lab.page.keyboard.press('Escape');
  const edited = `${original}\nprint('my own line')`;
  await expect
    .poll(async () => (await lab.cell(file, generatedId)).source)
    .toBe(edited);
  await expect(await lab.cellLocator(file, generatedId)).toHaveClass(
    /jp-Chapyter-edited/
  );
  await lab.screenshot(
    '07d-edited-by-hand',
    await lab.cellLocator(file, generatedId)
  );

  // Regenerate with the generated cell's toolbar button: a dialog asks first.
  const regenerate = async () => {
    const dom = await lab.cellLocator(file, generatedId);
    await dom.locator('.jp-InputPrompt').click();
    await dom
      .locator('[data-jp-item-name="chapyter-regenerate"] button')
      .click();
    const dialog = lab.page.locator('.jp-Dialog');
    await expect(dialog).toBeVisible();
    await expect(dialog).toContainText('Replace edited code?');
    return dialog;
  };
  let dialog = await regenerate();
  await lab.screenshot('07e-edited-regenerate-dialog');
  await dialog.getByRole('button', { name: 'Keep my edits' }).click();
  await expect(dialog).toHaveCount(0);
  await lab.waitForKernelIdle(file);
  let cells = await lab.cells(file);
  expect(cells.map(c => c.id)).toEqual(['load', 'prompt', generatedId]);
  expect(cells[2].source).toBe(edited);
  expect(cells[2].chapyter).toMatchObject({
    edited: true,
    generated_from: 'prompt'
  });
  expect(await model.chatRequests()).toHaveLength(2);

  // Asked again, and this time replaced: the new answer, and provenance that is not edited.
  dialog = await regenerate();
  await dialog.getByRole('button', { name: 'Replace' }).click();
  cells = await lab.waitForCells(
    file,
    cells =>
      cells[2]?.outputs.some(o => o.text.includes('newest total 499500')),
    'replaced and run'
  );
  expect(cells.map(c => c.id)).toEqual(['load', 'prompt', generatedId]);
  expect(cells[2].source).toBe(
    "total = sum(range(1000))\nprint('newest total', total)"
  );
  expect(cells[2].chapyter).toMatchObject({ edited: false });
  expect(cells[2].classes).not.toContain('jp-Chapyter-edited');
  await lab.screenshot('07f-edited-replaced');
});

test("the context menu of paired cells offers Regenerate and Go to Linked, next to JupyterLab's own items", async ({
  lab
}) => {
  await model.script(fenced("print('menu')"));
  const { file, generatedId } = await generatedAndRun(
    lab,
    'context-menu',
    '%%ai\nprint menu',
    'menu'
  );
  for (const id of ['prompt', generatedId]) {
    const dom = await lab.cellLocator(file, id);
    await dom.locator('.jp-InputPrompt').click({ button: 'right' });
    const menu = lab.page.locator('.lm-Menu').first();
    await expect(menu).toBeVisible();
    // The menu is built when it opens: what is missing now stays missing.
    const shown = { timeout: 5_000 };
    await expect(
      menu.getByRole('menuitem', { name: 'Regenerate with AI' })
    ).toBeVisible(shown);
    await expect(
      menu.getByRole('menuitem', { name: 'Go to Linked AI Cell' })
    ).toBeVisible(shown);
    // JupyterLab's own cell items are still there.
    await expect(menu.getByRole('menuitem', { name: /^Cut Cell/ })).toBeVisible(
      shown
    );
    await lab.page.keyboard.press('Escape');
  }
  const promptDom = await lab.cellLocator(file, 'prompt');
  await promptDom.locator('.jp-InputPrompt').click({ button: 'right' });
  await lab.page
    .getByRole('menuitem', { name: 'Go to Linked AI Cell' })
    .click();
  await expect
    .poll(async () => (await lab.cell(file, generatedId)).active)
    .toBe(true);
});
