/**
 * `%%ai` corrects itself within a bound: when the generated code raises, the prompt is asked
 * again with the failing code and its error, and the corrected code replaces it and runs.
 */

import {
  expect,
  fenced,
  Lab,
  LOAD_EXT,
  model,
  outputText as text,
  test
} from './fixtures';

const BAD = 'print(undefined_name_zz + 1)';
const GOOD = "undefined_name_zz = 41\nprint('fixed', undefined_name_zz + 1)";
const REQUEST = '%%ai\nprint the answer plus one';

/** A notebook whose prompt asks for the answer plus one, run. */
async function askForAnswer(
  lab: Lab,
  name: string,
  load = LOAD_EXT
): Promise<string> {
  const file = await lab.newNotebook(name, [
    { id: 'load', source: load },
    { id: 'prompt', source: REQUEST }
  ]);
  await lab.runCell(file, 'load');
  await lab.runCell(file, 'prompt');
  return file;
}

test('bad code raises, the model is asked once more with the error, the fix runs', async ({
  lab
}) => {
  await model.script(fenced(BAD), fenced(GOOD));
  const file = await askForAnswer(lab, 'retry-fixed');

  const {
    cells,
    prompt,
    below: generated
  } = await lab.waitForPair(
    file,
    ({ prompt, below }) =>
      text(prompt).includes('✓ fixed after 1 retry') &&
      !!below?.chapyter &&
      below.executionCount !== null &&
      text(below).includes('fixed 42'),
    'the corrected code ran below the prompt'
  );
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
  const file = await askForAnswer(lab, 'retry-cap');

  const { below: generated } = await lab.waitForPair(
    file,
    ({ prompt, below }) =>
      text(prompt).includes('still failing after 1 retry') &&
      !!below?.outputs.some(o => o.type === 'error'),
    'the last attempt kept with its error'
  );
  expect(generated!.source).toBe(BAD);
  expect(text(generated)).toContain('NameError');
  await lab.waitForKernelIdle(file);
  expect(await model.chatRequests()).toHaveLength(2);
  await lab.screenshot('retry-02-cap');
});

test('fix_retries 0: no retry', async ({ lab }) => {
  await model.script(fenced(BAD), fenced(GOOD));
  const file = await askForAnswer(
    lab,
    'retry-off',
    `${LOAD_EXT}\n%config Chapyter.fix_retries = 0`
  );

  const { prompt, below: generated } = await lab.waitForPair(
    file,
    ({ below }) => !!below?.outputs.some(o => o.type === 'error'),
    'the generated code raised'
  );
  await lab.waitForKernelIdle(file);
  expect(generated!.source).toBe(BAD);
  expect(text(prompt)).not.toContain('retry');
  expect(await model.chatRequests()).toHaveLength(1);
});
