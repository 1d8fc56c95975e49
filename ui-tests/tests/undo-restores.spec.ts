/**
 * Undo that restores the kernel: an agent turn overwrites a variable, changes a DataFrame in
 * place and creates a name; before the click, the Undo buttons say what they will restore;
 * "Undo to before step 2" and then "Undo this turn" put the variables back, as a cell run
 * afterwards reads them (the real kernel's snapshots, chapyter_ext/snapshot/).
 */

import {
  agentCells,
  agentWithFirstCell,
  resetAgentSettings,
  runCode
} from './agent-helpers';
import {
  ask,
  chatAnswers,
  chatNotebook,
  expect,
  ICellInfo,
  Lab,
  model,
  outputText,
  RAIN,
  test
} from './fixtures';

test.afterEach(resetAgentSettings);

const READ =
  "print('threshold', threshold, 'total', rain['rain_mm'].sum(), 'extra', 'extra' in dir())";

/** Run the `read` cell again; its output once it ran anew. */
async function readBack(lab: Lab, file: string): Promise<string> {
  const before = (await lab.cell(file, 'read')).executionCount ?? 0;
  await lab.runCell(file, 'read');
  const cells = await lab.waitForCells(
    file,
    cells => {
      const read = cells.find(c => c.id === 'read');
      return (read?.executionCount ?? 0) > before && !!read?.outputs.length;
    },
    'the read cell ran again'
  );
  return outputText(cells.find(c => c.id === 'read') as ICellInfo);
}

test('Undo this turn restores an overwritten variable, read back by a cell', async ({
  lab
}) => {
  await model.script(
    runCode('threshold = 50', 'Loosen the threshold'),
    runCode(
      "threshold = 99\nrain['rain_mm'] = rain['rain_mm'] * 0\nextra = 1",
      'Reset the rain'
    ),
    'Done: the threshold is **99** and the rain is reset.'
  );
  const file = await chatNotebook('undo-restores', [
    { id: 'data', source: `${RAIN}\nthreshold = 10` },
    { id: 'read', source: READ }
  ]);
  const { panel } = await agentWithFirstCell(lab, file, 'Never ask');
  await ask(panel, 'Set the threshold to 99 and reset the rain');

  const answer = chatAnswers(panel);
  await expect(answer).toContainText('the threshold is 99', {
    timeout: 60_000
  });
  await expect(panel.getByRole('button', { name: 'Send' })).toBeVisible();
  const cells = await lab.waitForCells(
    file,
    cells =>
      agentCells(cells).length === 2 &&
      agentCells(cells).every(c => c.executionCount !== null),
    'the agent cells ran'
  );
  expect(outputText(cells.find(c => c.id === 'read'))).toBe('');

  // Before the click, the line next to the button says what Undo will restore.
  const undo = answer.getByRole('button', { name: 'Undo this turn' });
  const note = answer.locator('.jp-Chapyter-agentUndoNote');
  await expect(note).toContainText('Undo restores', { timeout: 30_000 });
  await expect(note).toContainText('threshold');
  await expect(note).toContainText('rain');
  await expect(note).toContainText('removes extra');
  expect(await undo.getAttribute('title')).toContain('Undo restores');
  await lab.screenshot('undo-restores-01-before', panel);

  // Undo to before step 2: threshold is 50 again, the rain as it was, extra gone.
  const stepUndo = answer.getByRole('button', {
    name: 'Undo from here, to before step 2'
  });
  await stepUndo.focus();
  await expect(stepUndo).toHaveAttribute('title', /Undo restores/, {
    timeout: 30_000
  });
  await stepUndo.press('Enter');
  await expect(note).toContainText('Removed 1 cell', { timeout: 30_000 });
  await expect(note).toContainText('Restored', { timeout: 30_000 });
  expect(agentCells(await lab.cells(file))).toHaveLength(1);
  expect(await readBack(lab, file)).toContain(
    'threshold 50 total 1501 extra False'
  );

  // Undo this turn: threshold is 10, as before the turn.
  await undo.click();
  await expect(note).toContainText('Removed 1 cell', { timeout: 30_000 });
  await expect(note).toContainText(/Restored .*threshold/, { timeout: 30_000 });
  expect(agentCells(await lab.cells(file))).toHaveLength(0);
  await expect(undo).toBeHidden();
  expect(await readBack(lab, file)).toContain(
    'threshold 10 total 1501 extra False'
  );
  await lab.screenshot('undo-restores-02-after');
});
