/**
 * Trials in the browser: a step the analysis cannot prove harmless is tried first in a
 * confined copy of the notebook's kernel. What its trial tried makes it ask, and the approval
 * card lists it with what the step would show (nothing was written meanwhile, and Skip leaves
 * nothing); a step its trial cleared runs unasked and says so; under "Ask before every run"
 * the card shows the trial's preview, so Run is an informed click.
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
  jupyterApi,
  Lab,
  model,
  RAIN,
  test
} from './fixtures';

test.afterEach(resetAgentSettings);

/** Objects an earlier cell made: their methods' names say nothing of what they do. */
const OBJECTS = `${RAIN}
class Store:
    def refresh(self):
        open('trial_report.csv', 'w').write('city,rain\\n')
        print('refreshed')
class Ledger:
    def total(self):
        print('total', int(rain['rain_mm'].sum()))
        return len(rain)
store, ledger = Store(), Ledger()`;

async function exists(file: string): Promise<boolean> {
  try {
    await jupyterApi(
      'GET',
      `/api/contents/${encodeURIComponent(file)}?content=0`
    );
    return true;
  } catch {
    return false;
  }
}

/** A notebook whose first cell made {@link OBJECTS}, run, and the chat in agent mode. */
async function withObjects(lab: Lab, name: string, policy: string) {
  const file = await chatNotebook(name, [{ id: 'objects', source: OBJECTS }]);
  return agentWithFirstCell(lab, file, policy);
}

test('a step whose trial tried to write asks, naming it; nothing was written', async ({
  lab
}) => {
  await model.script(
    runCode('store.refresh()', 'Refresh the store'),
    'I did not run it.'
  );
  const { file, panel } = await withObjects(
    lab,
    'trial-card',
    'Ask for risky code'
  );
  await ask(panel, 'Refresh the store, please.');

  const card = panel.locator('.jp-Chapyter-agentApproval');
  await expect(card).toBeVisible({ timeout: 60_000 });
  const trial = card.getByRole('group', { name: 'What its trial did' });
  await expect(
    trial.getByRole('list', { name: 'What the trial tried' })
  ).toContainText('tried to write trial_report.csv');
  // The analysis's own reason, then what the trial saw.
  await expect(
    card.getByRole('list', { name: 'Why approval is asked' })
  ).toContainText('store.refresh');
  await expect(card.getByRole('button', { name: 'Run' })).toBeVisible();
  await lab.screenshot('trial-01-card', panel);
  // The trial wrote nothing: its confined copy could not.
  expect(await exists('trial_report.csv')).toBe(false);

  await card.getByRole('button', { name: 'Skip' }).click();
  await expect(chatAnswers(panel)).toContainText('I did not run it.', {
    timeout: 30_000
  });
  expect(await exists('trial_report.csv')).toBe(false);
  expect(agentCells(await lab.cells(file))).toHaveLength(0);
  // The step keeps what its trial saw, folded.
  const step = chatAnswers(panel).locator('.jp-Chapyter-agentStep');
  await expect(step.locator('.jp-Chapyter-agentStepTrial summary')).toHaveText(
    'Trial: tried to write trial_report.csv'
  );
});

test('a step its trial cleared runs unasked, under the guard', async ({
  lab
}) => {
  await model.script(runCode('ledger.total()', 'Add up'), 'The total is 1501.');
  const { file, panel } = await withObjects(
    lab,
    'trial-clean',
    'Ask for risky code'
  );
  await ask(panel, 'What is the total?');
  await expect(chatAnswers(panel)).toContainText('The total is 1501.', {
    timeout: 60_000
  });
  await expect(panel.locator('.jp-Chapyter-agentApproval')).toBeHidden();
  const cells = await lab.waitForCells(
    file,
    cells => agentCells(cells).every(c => c.executionCount !== null),
    'the step ran'
  );
  const [ran] = agentCells(cells);
  expect(ran.source).toBe('ledger.total()');
  expect(ran.outputs.map(o => o.text).join('')).toContain('total 1501');
  const step = chatAnswers(panel).locator('.jp-Chapyter-agentStep');
  await expect(step.locator('.jp-Chapyter-agentStepTrial summary')).toHaveText(
    'Trial: tried nothing, ran unasked'
  );
  await lab.screenshot('trial-02-cleared', panel);
});

test('under "Ask before every run" the card shows what the trial would do', async ({
  lab
}) => {
  await model.script(runCode('ledger.total()', 'Add up'), 'Done.');
  const { file, panel } = await withObjects(
    lab,
    'trial-preview',
    'Ask before every run'
  );
  await ask(panel, 'Add up the rain.');
  const card = panel.locator('.jp-Chapyter-agentApproval');
  await expect(card).toBeVisible({ timeout: 60_000 });
  const preview = card.getByRole('list', {
    name: 'What it would show and change'
  });
  await expect(preview).toContainText('prints: total 1501');
  await expect(preview).toContainText('returns: 3');
  await lab.screenshot('trial-03-preview', panel);
  await card.getByRole('button', { name: 'Run' }).click();
  await expect(chatAnswers(panel)).toContainText('Done.', { timeout: 30_000 });
  const cells = await lab.waitForCells(
    file,
    cells => agentCells(cells).every(c => c.executionCount !== null),
    'the approved step ran'
  );
  expect(
    agentCells(cells)[0]
      .outputs.map(o => o.text)
      .join('')
  ).toContain('total 1501');
});
