/**
 * `%%ai` corrects itself within a bound: when the generated code raises, the prompt is asked
 * again with the failing code and its error, and the corrected code replaces it and runs.
 */

import {
  createNotebook,
  expect,
  fenced,
  ICellInfo,
  LOAD_EXT,
  model,
  test
} from './fixtures';

const BAD = 'print(undefined_name_zz + 1)';
const GOOD = "undefined_name_zz = 41\nprint('fixed', undefined_name_zz + 1)";
const REQUEST = '%%ai\nprint the answer plus one';

function pair(cells: ICellInfo[]): [ICellInfo, ICellInfo | undefined] {
  const index = cells.findIndex(c => c.id === 'prompt');
  return [cells[index], cells[index + 1]];
}

function text(cell: ICellInfo | undefined): string {
  return (cell?.outputs ?? []).map(o => o.text).join('\n');
}

test('bad code raises, the model is asked once more with the error, the fix runs', async ({
  lab
}) => {
  await model.script(fenced(BAD), fenced(GOOD));
  const file = await createNotebook('retry-fixed', [
    { id: 'load', source: LOAD_EXT },
    { id: 'prompt', source: REQUEST }
  ]);
  await lab.openNotebook(file);
  await lab.runCell(file, 'load');
  await lab.runCell(file, 'prompt');

  const cells = await lab.waitForCells(
    file,
    cells => {
      const [prompt, generated] = pair(cells);
      return (
        text(prompt).includes('✓ fixed after 1 retry') &&
        !!generated?.chapyter &&
        generated.executionCount !== null &&
        text(generated).includes('fixed 42')
      );
    },
    'the corrected code ran below the prompt'
  );
  const [prompt, generated] = pair(cells);
  expect(generated!.source).toBe(GOOD);
  expect(generated!.outputs.some(o => o.type === 'error')).toBe(false);
  expect(generated!.chapyter).toMatchObject({
    role: 'generated',
    generated_from: 'prompt',
    edited: false
  });
  expect(generated!.chapyter!.changes).toHaveLength(1);
  expect(generated!.chapyter!.changes[0]).toMatchObject({
    kind: 'retry',
    model: 'fake-model'
  });
  expect(prompt.chapyter).toMatchObject({ generated_cell: generated!.id });
  // Exactly one generated cell: the retry replaced the code, it did not add a cell.
  expect(cells.filter(c => c.chapyter?.role === 'generated')).toHaveLength(1);

  const requests = await model.chatRequests();
  expect(requests).toHaveLength(2);
  const second = JSON.stringify(requests[1].body.messages);
  expect(second).toContain('NameError');
  expect(second).toContain("name 'undefined_name_zz' is not defined");
  expect(second).toContain(BAD);
  expect(JSON.stringify(requests[0].body.messages)).not.toContain('NameError');
  await lab.screenshot('retry-01-fixed');

  // One undo step in the cell brings the failing attempt back.
  await lab.focusEditor(file, generated!.id);
  await lab.page.keyboard.press('Control+z');
  await expect
    .poll(async () => (await lab.cell(file, generated!.id)).source)
    .toBe(BAD);
});

test('at the cap the last attempt stays with its error', async ({ lab }) => {
  await model.script(fenced(BAD), fenced(BAD), fenced(GOOD));
  const file = await createNotebook('retry-cap', [
    { id: 'load', source: LOAD_EXT },
    { id: 'prompt', source: REQUEST }
  ]);
  await lab.openNotebook(file);
  await lab.runCell(file, 'load');
  await lab.runCell(file, 'prompt');

  const cells = await lab.waitForCells(
    file,
    cells => {
      const [prompt, generated] = pair(cells);
      return (
        text(prompt).includes('still failing after 1 retry') &&
        !!generated?.outputs.some(o => o.type === 'error')
      );
    },
    'the last attempt kept with its error'
  );
  const [, generated] = pair(cells);
  expect(generated!.source).toBe(BAD);
  expect(text(generated)).toContain('NameError');
  await lab.waitForKernelIdle(file);
  expect(await model.chatRequests()).toHaveLength(2);
  await lab.screenshot('retry-02-cap');
});

test('fix_retries 0: no retry', async ({ lab }) => {
  await model.script(fenced(BAD), fenced(GOOD));
  const file = await createNotebook('retry-off', [
    { id: 'load', source: `${LOAD_EXT}\n%config Chapyter.fix_retries = 0` },
    { id: 'prompt', source: REQUEST }
  ]);
  await lab.openNotebook(file);
  await lab.runCell(file, 'load');
  await lab.runCell(file, 'prompt');

  const cells = await lab.waitForCells(
    file,
    cells => !!pair(cells)[1]?.outputs.some(o => o.type === 'error'),
    'the generated code raised'
  );
  await lab.waitForKernelIdle(file);
  const [prompt, generated] = pair(cells);
  expect(generated!.source).toBe(BAD);
  expect(text(prompt)).not.toContain('retry');
  expect(await model.chatRequests()).toHaveLength(1);
});
