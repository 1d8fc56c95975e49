/**
 * Ghost text that would raise: after `sales.sort_values(` the model
 * suggests `by_region='revenue')`, which parses but is no keyword of that method. The
 * provider reads the method's signature from the kernel (through the notebook's own kernel
 * connection) and shows nothing; `by='revenue')` is shown.
 */

import { expect, IRecordedRequest, Lab, model, test } from './fixtures';

const SALES =
  'import pandas as pd\n' +
  "sales = pd.DataFrame({'region': ['north', 'south'], 'revenue': [3, 5]})";
const TYPED = 'sales.sort_values(';

/** The model's requests whose prompt has `text` right before the cursor. */
async function requestsAt(text: string): Promise<IRecordedRequest[]> {
  return (await model.requests()).filter(r =>
    JSON.stringify(r.body ?? '').includes(`${text}<CURSOR>`)
  );
}

/** A notebook whose first cell made `sales` in the kernel; `TYPED` typed, a suggestion asked. */
async function typeAfterSales(lab: Lab, name: string): Promise<void> {
  const file = await lab.newNotebook(name, [
    { id: 'data', source: SALES },
    { id: 'work', source: '' }
  ]);
  await lab.runCell(file, 'data');
  await lab.waitForCells(
    file,
    cells => cells[0].executionCount !== null,
    'the data cell ran'
  );
  await lab.waitForKernelIdle(file);
  await lab.focusEditor(file, 'work');
  await lab.page.keyboard.type(TYPED, { delay: 20 });
  // Asked on demand (the run's setting; typing triggers it too, less predictably).
  await lab.page.keyboard.press('Alt+\\');
  await expect
    .poll(async () => (await requestsAt(TYPED)).length, {
      message: 'the suggestion was asked of the model',
      timeout: 20_000
    })
    .toBeGreaterThan(0);
}

test('a keyword the method does not take shows no ghost text', async ({
  lab
}) => {
  await model.route(`${TYPED}<CURSOR>`, {
    content: "by_region='revenue')",
    chunk_size: 4,
    chunk_delay: 0.05
  });
  await typeAfterSales(lab, 'ghost-bad-keyword');
  // The answer streams in ~0.3 s: give it ample time to show, if it were to.
  const ghost = lab.page.locator('.jp-GhostText');
  for (let i = 0; i < 6; i++) {
    await lab.page.waitForTimeout(500);
    await expect(ghost).toHaveCount(0);
  }
  await lab.screenshot('ghost-01-bad-keyword-dropped');
});

test('a keyword the method takes is shown', async ({ lab }) => {
  await model.route(`${TYPED}<CURSOR>`, {
    content: "by='revenue')",
    chunk_size: 4,
    chunk_delay: 0.05
  });
  await typeAfterSales(lab, 'ghost-good-keyword');
  await expect(lab.page.locator('.jp-GhostText')).toContainText(
    "by='revenue')",
    { timeout: 20_000 }
  );
  await lab.screenshot('ghost-02-good-keyword-shown');
});
