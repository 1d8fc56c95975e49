/**
 * A `%%ai` cell puts the model's code in a linked cell directly below and runs it there;
 * running the prompt again replaces that cell's code.
 */

import { createHash } from 'crypto';

import { expect, fenced, model, test } from './fixtures';

test('insert and run: the code lands directly below, linked, and runs', async ({
  lab
}) => {
  await model.script(fenced("answer = 6 * 7\nprint('the answer is', answer)"));
  const file = await lab.aiNotebook('insert-and-run', [
    { id: 'prompt', source: '%%ai\nmultiply 6 by 7 and print it' }
  ]);
  // Shift+Enter on the last cell also adds an empty cell below it, as JupyterLab always does:
  // the generated cell must still land directly below the prompt, above that one.
  await lab.runCell(file, 'prompt', 'Shift+Enter');

  const { cells, prompt, below } = await lab.waitForPair(
    file,
    // The execution count arrives with the execute reply, after the output.
    ({ below }) =>
      !!below?.chapyter &&
      below.executionCount !== null &&
      below.outputs.some(o => o.text.includes('the answer is 42')),
    'generated cell below the prompt, run'
  );
  const generated = below!;
  const promptIndex = prompt.index;

  expect(generated.type).toBe('code');
  expect(generated.source).toBe(
    "answer = 6 * 7\nprint('the answer is', answer)"
  );
  expect(generated.executionCount).not.toBeNull();
  expect(prompt.chapyter).toMatchObject({
    role: 'prompt',
    generated_cell: generated.id
  });
  expect(generated.chapyter).toMatchObject({
    role: 'generated',
    source: 'magic',
    generated_from: 'prompt',
    model: 'fake-model',
    edited: false
  });
  // The hash of the request as both sides normalise it (here: already normal).
  expect(generated.chapyter!.prompt_sha256).toBe(
    createHash('sha256').update('multiply 6 by 7 and print it').digest('hex')
  );
  expect(generated.chapyter!.code_sha256).toMatch(/^[0-9a-f]{64}$/);
  expect(Date.parse(generated.chapyter!.created)).not.toBeNaN();
  // The prompt cell says what happened, in one line.
  expect(prompt.outputs.map(o => o.text).join('\n')).toMatch(
    /✓ 2 lines from fake-model/
  );
  expect(prompt.classes).toContain('jp-Chapyter-prompt');
  expect(generated.classes).toContain('jp-Chapyter-generated');
  // The empty cell Shift+Enter added stays after the pair.
  expect(cells[promptIndex + 2]?.chapyter ?? null).toBeNull();

  const requests = await model.chatRequests();
  expect(requests).toHaveLength(1);
  expect(JSON.stringify(requests[0].body.messages)).toContain(
    'multiply 6 by 7 and print it'
  );

  const generatedDom = await lab.cellLocator(file, generated.id);
  await expect(generatedDom.locator('.jp-OutputArea-output')).toContainText(
    'the answer is 42'
  );
  await lab.screenshot('01-insert-and-run');
});

test('rich outputs: a DataFrame table and a matplotlib figure; variables stay in the kernel', async ({
  lab
}) => {
  const code = [
    'import pandas as pd',
    'import matplotlib.pyplot as plt',
    "rain = pd.DataFrame({'city': ['Oslo', 'Lima', 'Pune'], 'rain_mm': [763, 16, 722]})",
    'display(rain)',
    "ax = rain.plot.bar(x='city', y='rain_mm', legend=False)",
    "ax.set_ylabel('rain (mm)')",
    'plt.show()'
  ].join('\n');
  await model.script(fenced(code));
  const file = await lab.aiNotebook('rich-outputs', [
    {
      id: 'prompt',
      source: '%%ai\nmake a small table of yearly rain per city and plot it'
    },
    { id: 'hand', source: "print('total rain', rain['rain_mm'].sum())" }
  ]);
  await lab.runCell(file, 'prompt');
  const { below } = await lab.waitForPair(
    file,
    ({ below }) =>
      !!below?.chapyter &&
      below.executionState === 'idle' &&
      below.outputs.some(o => o.mimes.includes('image/png')),
    'generated cell ran and showed a figure'
  );
  const generated = below!;
  expect(generated.id).not.toBe('hand');
  expect(generated.outputs.some(o => o.mimes.includes('text/html'))).toBe(true);
  expect(generated.outputs.some(o => o.type === 'error')).toBe(false);

  const dom = await lab.cellLocator(file, generated.id);
  const table = dom.locator('.jp-OutputArea-output table.dataframe');
  await expect(table).toBeVisible();
  await expect(table.locator('tbody tr')).toHaveCount(3);
  await expect(table).toContainText('Lima');
  const image = dom.locator('.jp-OutputArea-output img');
  await expect(image).toBeVisible();
  expect(
    await image.evaluate(
      (img: HTMLImageElement) => img.complete && img.naturalWidth > 100
    )
  ).toBe(true);

  // A hand-written cell below uses what the generated cell made.
  await lab.runCell(file, 'hand');
  await lab.waitForCells(
    file,
    cells =>
      cells
        .find(c => c.id === 'hand')!
        .outputs.some(o => o.text.includes('total rain 1501')),
    'hand cell printed the total'
  );
  await dom.scrollIntoViewIfNeeded();
  await lab.screenshot('02-rich-outputs');
});

test('re-run replaces the generated code in place; one undo brings the old code back', async ({
  lab
}) => {
  const first = "greeting = 'first answer'\nprint(greeting)";
  const second = "greeting = 'second answer'\nprint(greeting.upper())";
  // The second answer streams in small pieces, so the code is written into the cell bit by bit.
  await model.script(fenced(first), {
    content: fenced(second),
    chunk_size: 4,
    chunk_delay: 0.06
  });
  const file = await lab.aiNotebook('rerun-replaces', [
    { id: 'prompt', source: '%%ai\nprint a greeting' },
    { id: 'after', source: "print('a hand cell after the pair')" }
  ]);
  await lab.runCell(file, 'prompt');
  let cells = await lab.waitForCells(
    file,
    cells =>
      cells[2]?.chapyter?.role === 'generated' &&
      cells[2].outputs.some(o => o.text.includes('first answer')),
    'first answer generated and run'
  );
  const generatedId = cells[2].id;
  expect(cells.map(c => c.id)).toEqual([
    'load',
    'prompt',
    generatedId,
    'after'
  ]);
  const firstCreated = cells[2].chapyter!.code_sha256;
  await lab.screenshot('03a-first-answer');

  await lab.runCell(file, 'prompt');
  cells = await lab.waitForCells(
    file,
    cells => cells[2]?.outputs.some(o => o.text.includes('SECOND ANSWER')),
    'second answer replaced the first and ran'
  );
  // Same cell, same place, new code: nothing was inserted.
  expect(cells.map(c => c.id)).toEqual([
    'load',
    'prompt',
    generatedId,
    'after'
  ]);
  expect(cells[2].source).toBe(second);
  expect(cells[2].chapyter!.code_sha256).not.toBe(firstCreated);
  expect(cells[1].chapyter).toMatchObject({ generated_cell: generatedId });
  expect(await model.chatRequests()).toHaveLength(2);
  await lab.screenshot('03b-second-answer');

  // One undo in the generated cell's editor restores the previous answer (streaming the new
  // answer in must not leave a trail of partial edits in the undo history).
  await lab.focusEditor(file, generatedId);
  await lab.page.keyboard.press('Control+z');
  await expect
    .poll(async () => (await lab.cell(file, generatedId)).source)
    .toBe(first);
});
