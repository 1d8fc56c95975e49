/** Links live in the notebook file: saving and reloading the page keeps the pairing. */

import { expect, fenced, model, savedNotebook, test } from './fixtures';

test('save and reload keep the links and the pairing styles', async ({
  lab
}) => {
  await model.script(
    fenced("colours = ['red', 'green']\nprint(len(colours), 'colours')")
  );
  const file = await lab.aiNotebook('reload-keeps-links', [
    { id: 'prompt', source: '%%ai\nlist two colours' },
    { id: 'hand', source: "print('hand-written', colours)" }
  ]);
  await lab.runCell(file, 'prompt');
  const before = await lab.waitForCells(
    file,
    cells => cells[2]?.outputs.some(o => o.text.includes('2 colours')),
    'generated and run'
  );
  const generatedId = before[2].id;
  await lab.save(file);

  // On disk: the prompt names its generated cell, which points back with its provenance.
  const saved = await savedNotebook(file);
  expect(saved.cells.map((c: any) => c.id)).toEqual([
    'load',
    'prompt',
    generatedId,
    'hand'
  ]);
  expect(saved.cells[1].metadata.chapyter).toMatchObject({
    role: 'prompt',
    generated_cell: generatedId
  });
  expect(saved.cells[2].metadata.chapyter).toMatchObject({
    role: 'generated',
    generated_from: 'prompt',
    model: 'fake-model'
  });

  await lab.reload();
  await lab.openNotebook(file);
  const after = await lab.waitForCells(
    file,
    cells =>
      cells.length === 4 &&
      cells[1].classes.includes('jp-Chapyter-prompt') &&
      cells[2].classes.includes('jp-Chapyter-generated'),
    'pairing classes after the reload'
  );
  expect(after.map(c => c.id)).toEqual(['load', 'prompt', generatedId, 'hand']);
  expect(after[1].chapyter).toEqual(before[1].chapyter);
  expect(after[2].chapyter).toEqual(before[2].chapyter);
  expect(after[0].classes).toEqual([]);
  expect(after[3].classes).toEqual([]);
  const promptDom = await lab.cellLocator(file, 'prompt');
  const generatedDom = await lab.cellLocator(file, generatedId);
  await expect(promptDom).toHaveClass(/jp-Chapyter-prompt/);
  await expect(generatedDom).toHaveClass(/jp-Chapyter-generated/);
  await lab.screenshot('05-after-reload');

  // The link still works: Run All replays the generated cell without asking the model.
  await lab.command('notebook:run-all-cells');
  await lab.waitForCells(
    file,
    cells =>
      cells[1].outputs.some(o => o.text.includes('↻ replayed')) &&
      cells[3].outputs.some(o =>
        o.text.includes("hand-written ['red', 'green']")
      ),
    'Run All after the reload'
  );
  expect(await model.chatRequests()).toHaveLength(1);
  expect((await lab.cells(file)).map(c => c.id)).toEqual([
    'load',
    'prompt',
    generatedId,
    'hand'
  ]);
});
