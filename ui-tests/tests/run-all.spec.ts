/**
 * Run All over several prompt cells: each generated cell runs right after its prompt and
 * before the next cell, and prompts whose generated cell is up to date do not ask the model.
 */

import {
  byId,
  expect,
  fenced,
  ICellInfo,
  Lab,
  LOAD_EXT,
  model,
  outputText,
  pairOf,
  test
} from './fixtures';

const PROMPTS = ['p1', 'p2', 'p3'];

/** Each prompt and the cell right below it, in notebook order. */
function pairs(
  cells: ICellInfo[]
): { prompt: ICellInfo; generated: ICellInfo }[] {
  return PROMPTS.map(id => {
    const { prompt, below } = pairOf(cells, id);
    return { prompt, generated: below! };
  });
}

/** The notebook's cell ids: each prompt followed by its generated cell. */
function pairedOrder(generatedIds: string[]): string[] {
  return ['load', ...PROMPTS.flatMap((id, i) => [id, generatedIds[i]]), 'hand'];
}

/** What the hand-written last cell printed. */
function handSaid(cells: ICellInfo[]): string {
  return outputText(byId(cells, 'hand'));
}

function allRan(cells: ICellInfo[]): boolean {
  const hand = cells.find(c => c.id === 'hand');
  return (
    pairs(cells).every(
      p => p.generated?.chapyter?.generated_from === p.prompt.id
    ) &&
    cells.every(c => c.executionState !== 'running') &&
    !!hand?.outputs.some(o => o.text.includes('total 6 from [1, 2, 3]'))
  );
}

/** The execution order of the cells that ran, as notebook indexes. */
function executionOrder(cells: ICellInfo[]): string[] {
  return cells
    .filter(c => c.executionCount !== null)
    .sort((a, b) => a.executionCount! - b.executionCount!)
    .map(c => c.id);
}

async function runAllAndWait(
  lab: Lab,
  file: string,
  what: string
): Promise<ICellInfo[]> {
  await lab.activate(file);
  await lab.command('notebook:run-all-cells');
  return lab.waitForCells(file, allRan, what, 180_000);
}

test('Run All: generated cells in order, no model call when up to date, also after a restart', async ({
  lab
}) => {
  // Each generated cell records when it ran, to check the order independently of counts.
  const answer = (name: string, value: number) =>
    fenced(
      `${name} = ${value}\nran = globals().get('ran', []) + ['${name}']\nprint('${name} ran after', ran[:-1])`
    );
  await model.script(answer('a', 1), answer('b', 2), answer('c', 3));
  const file = await lab.newNotebook('run-all', [
    { id: 'load', source: LOAD_EXT },
    { id: 'p1', source: '%%ai\nset a to 1' },
    { id: 'p2', source: '%%ai\nset b to 2' },
    { id: 'p3', source: '%%ai\nset c to 3' },
    {
      id: 'hand',
      source:
        "print('total', a + b + c, 'from', [a, b, c])\nprint('order', ran)"
    }
  ]);

  // First Run All: every prompt asks the model, in notebook order.
  let cells = await runAllAndWait(
    lab,
    file,
    'first Run All generated and ran everything'
  );
  let found = pairs(cells);
  expect(found.map(p => p.generated.source.split('\n')[0])).toEqual([
    'a = 1',
    'b = 2',
    'c = 3'
  ]);
  const generatedIds = found.map(p => p.generated.id);
  expect(cells.map(c => c.id)).toEqual(pairedOrder(generatedIds));
  // Each generated cell ran after its prompt and before the next cell.
  expect(executionOrder(cells)).toEqual(cells.map(c => c.id));
  expect(handSaid(cells)).toContain("order ['a', 'b', 'c']");
  expect(await model.chatRequests()).toHaveLength(3);
  await lab.screenshot('04a-run-all-first');

  // Second Run All: everything is up to date, so the generated cells are replayed in order
  // and the model is not called.
  const countsBefore = cells.map(c => c.executionCount);
  await lab.activate(file);
  await lab.command('notebook:run-all-cells');
  cells = await lab.waitForCells(
    file,
    cells =>
      allRan(cells) &&
      cells.find(c => c.id === 'hand')!.executionCount! >
        countsBefore[cells.length - 1]!,
    'second Run All replayed everything'
  );
  expect(cells.map(c => c.id)).toEqual(pairedOrder(generatedIds));
  expect(await model.chatRequests()).toHaveLength(3);
  for (const { prompt } of pairs(cells)) {
    expect(outputText(prompt)).toContain('↻ replayed: no model was asked');
  }
  const replayOrder = executionOrder(cells).filter(
    id => id !== 'load' && !PROMPTS.includes(id)
  );
  expect(replayOrder).toEqual([...generatedIds, 'hand']);
  // Each generated cell ran exactly once more (a replay must not run a cell that the same
  // Run All is about to run anyway).
  expect(handSaid(cells)).toContain("order ['a', 'b', 'c', 'a', 'b', 'c']");
  await lab.screenshot('04b-run-all-up-to-date');

  // Restart and Run All: a fresh kernel, the same notebook, still no model call.
  await lab.command('notebook:restart-run-all', {}, false);
  const dialog = lab.page.locator('.jp-Dialog');
  await expect(dialog).toBeVisible();
  await dialog.getByRole('button', { name: 'Confirm Kernel Restart' }).click();
  cells = await lab.waitForCells(
    file,
    cells =>
      allRan(cells) && cells.find(c => c.id === 'load')!.executionCount === 1,
    'Restart and Run All replayed everything in a new kernel'
  );
  expect(await model.chatRequests()).toHaveLength(3);
  expect(executionOrder(cells).filter(id => !PROMPTS.includes(id))).toEqual([
    'load',
    ...generatedIds,
    'hand'
  ]);
  expect(handSaid(cells)).toContain("order ['a', 'b', 'c']");
  await lab.screenshot('04c-restart-run-all');
});
