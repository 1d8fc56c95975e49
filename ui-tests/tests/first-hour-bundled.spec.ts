/**
 * The bundled model never overwrites the user's data, and shows what it computed, end to end with the real SmolLM2-135M (a JupyterLab of its own with nothing
 * configured): the starter's own suggestion "rows of prices where qty > 1", asked of the
 * starter's `prices` (after its "add a column total" pair ran), used to come back as
 * `prices = prices.loc[prices['qty'] > 1]`, which replaced the DataFrame and showed nothing.
 * Now the rows go to a new name, and the generated cell ends by showing them.
 *
 * The model's candidates are seeded (greedy first), so the same kernel gets the same answer.
 */

import {
  byId,
  expect,
  LOAD_EXT,
  outputText,
  ownLab,
  ownLabPort,
  test
} from './fixtures';

const LOCAL_MODEL = 'SmolLM2-135M-Instruct';
const ANSWER_TIMEOUT = 240_000;

// The starter notebook's data, as it is after Run All (examples/start_here.ipynb).
const PRICES = [
  'import pandas as pd',
  'prices = pd.DataFrame({"item": ["tea", "cake", "soup"], "price": [2.5, 4.0, 6.5], "qty": [3, 1, 2]})',
  'prices["total"] = prices["price"] * prices["qty"]'
].join('\n');

test.describe('the bundled model and the user data', () => {
  ownLab({
    name: 'first-hour-bundled',
    // Its own port: Playwright may start the next file's server (local-model's, on
    // ownLabPort()) before this one's afterAll has stopped it.
    port: ownLabPort() + 2,
    model: 'bundled'
  });

  test('"%%ai rows of prices where qty > 1" leaves prices as it was and shows the rows', async ({
    lab
  }, testInfo) => {
    test.setTimeout(420_000);
    const file = await lab.newNotebook('first-hour-bundled', [
      { id: 'load', source: LOAD_EXT },
      { id: 'data', source: PRICES },
      { id: 'prompt', source: '%%ai\nrows of prices where qty > 1' },
      {
        id: 'read-back',
        source: 'print(len(prices), list(prices["item"]), list(prices.columns))'
      }
    ]);
    for (const id of ['load', 'data']) {
      await lab.runCell(file, id);
      await lab.waitForCells(
        file,
        cells => byId(cells, id).executionCount !== null,
        `cell ${id} ran`
      );
      await lab.waitForKernelIdle(file);
    }

    await lab.runCell(file, 'prompt', 'Shift+Enter');
    const { prompt, generated } = await lab.waitForPair(
      file,
      ({ prompt }) =>
        prompt.executionState === 'idle' &&
        /✓|chapyter-ext:/.test(outputText(prompt)),
      'the bundled model answered (or said in one line why not)',
      { timeout: ANSWER_TIMEOUT }
    );
    testInfo.annotations.push({
      type: 'bundled model code',
      description: generated?.source ?? outputText(prompt)
    });
    expect(generated, outputText(prompt)).toBeDefined();
    expect(generated!.chapyter).toMatchObject({
      role: 'generated',
      model: LOCAL_MODEL
    });
    // Review first: inserted, not run. What it would run is there to read before running it.
    expect(generated!.executionCount).toBeNull();
    expect(generated!.source).not.toMatch(/^prices\s*=/m);
    await lab.screenshot('bundled-01-for-review');

    // Reviewed: run it. It ends by showing what it computed: the two rows.
    await lab.runCell(file, generated!.id);
    let cells = await lab.waitForCells(
      file,
      cells => byId(cells, generated!.id).executionCount !== null,
      'the reviewed cell ran'
    );
    const ran = byId(cells, generated!.id);
    expect(ran.outputs.map(o => o.type)).toEqual(['execute_result']);
    expect(outputText(ran)).toContain('soup');
    expect(outputText(ran)).not.toContain('cake');
    await lab.screenshot('bundled-02-shown');

    // prices itself, read back through a cell: still the starter's three rows.
    await lab.waitForKernelIdle(file);
    await lab.runCell(file, 'read-back');
    cells = await lab.waitForCells(
      file,
      cells => byId(cells, 'read-back').outputs.length > 0,
      'prices read back'
    );
    expect(outputText(byId(cells, 'read-back')).trim()).toBe(
      "3 ['tea', 'cake', 'soup'] ['item', 'price', 'qty', 'total']"
    );
    await lab.screenshot('bundled-03-prices-unchanged');
  });
});
