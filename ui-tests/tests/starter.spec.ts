/**
 * A newcomer's first minutes, end to end.
 *
 * 1. `scripts/start.sh --no-install` (the launch part of the real start script: its lab
 *    settings overrides, its starter notebook, its one line about the model) with no OPENAI_*
 *    or CHAPYTER_* variables, so the bundled SmolLM2-135M answers: the starter notebook opens,
 *    no pop-up covers the chat, the chat says which model answers and that its code is
 *    reviewed first, Run All replays, and a `%%ai` request with the bundled model produces a
 *    cell that runs once reviewed.
 * 2. With the run's fake model: while the code streams into the generated cell it is never
 *    marked "prompt changed"; the mark appears once the prompt really changes.
 */

import * as fs from 'fs';
import * as path from 'path';

import {
  ask,
  byId,
  expect,
  fenced,
  model,
  openChat,
  outputText,
  ownLab,
  ownLabPort,
  test
} from './fixtures';

const LOCAL_MODEL = 'SmolLM2-135M-Instruct';
const STARTER = 'Start here.ipynb';
const ANSWER_TIMEOUT = 240_000;

test.describe('start.sh', () => {
  const started = ownLab(
    {
      name: 'start-sh',
      port: ownLabPort(),
      model: 'bundled',
      launch: 'start.sh'
    },
    ({ leftover }) => {
      // The model's server ends with whoever started it; say if not.
      for (const pid of leftover) {
        console.warn(`start.sh test: killed a leftover model server ${pid}`);
      }
    }
  );
  test.use({ autoOpen: false });

  test('opens the starter notebook; the bundled model answers %%ai with a cell that runs', async ({
    lab,
    page
  }, testInfo) => {
    test.setTimeout(600_000);

    // One line says which model answers and how to configure a better one.
    const said = started()
      .output()
      .split('\n')
      .filter(line => line.startsWith('Model: '));
    expect(said).toHaveLength(1);
    expect(said[0]).toContain(LOCAL_MODEL);
    expect(said[0]).toContain('OPENAI_API_KEY');
    // The address to open has the port JupyterLab was given, not 8888.
    expect(started().output()).toContain(
      `open the http://127.0.0.1:${ownLabPort()}/lab?token=... address`
    );
    expect(fs.existsSync(path.join(started().notebooks, STARTER))).toBe(true);

    // The URL JupyterLab prints (its default URL) opens the starter notebook.
    await lab.goto('/');
    await expect
      .poll(() => lab.currentPath(), { timeout: 60_000 })
      .toBe(STARTER);
    await lab.waitForKernelIdle(STARTER);

    // The chat, with nothing over it: the news pop-up is off.
    const panel = await openChat(lab);
    await expect(panel.getByRole('combobox', { name: 'Model' })).toHaveValue(
      LOCAL_MODEL
    );
    // JupyterLab asks about news a few seconds after it starts, if it asks at all.
    await page.waitForTimeout(5000);
    await expect(page.locator('.Toastify__toast')).toHaveCount(0);
    const input = panel.getByRole('textbox', { name: 'Ask AI' });
    const covered = await input.evaluate(node => {
      const box = node.getBoundingClientRect();
      const top = document.elementFromPoint(
        box.left + box.width / 2,
        box.top + box.height / 2
      );
      return top === node || node.contains(top) ? null : String(top?.className);
    });
    expect(covered, 'something covers the chat input').toBeNull();

    // Which model answers, review first, and the suggestions right under "Try:".
    const notice = panel.locator('.jp-Chapyter-chatNotice');
    await expect(notice).toContainText(`Using ${LOCAL_MODEL}`);
    await expect(notice).toContainText(
      'waits for your review (setting: Local review)'
    );
    const suggestions = panel.getByRole('list', { name: 'Try:' });
    await expect(suggestions).toBeVisible();
    expect(
      await suggestions.evaluate(
        list => list.previousElementSibling?.textContent ?? ''
      )
    ).toBe('Try:');
    // The panel is wide enough for the header (title, picker, New chat) and the chip.
    const fits = await panel.evaluate(node => {
      const header = node.querySelector('.jp-Chapyter-chatHeader')!;
      const select = node.querySelector('select')!;
      return {
        width: node.getBoundingClientRect().width,
        header: header.scrollWidth <= header.clientWidth,
        // A select shows its text cut when narrower than its natural width.
        picker: select.getBoundingClientRect().width
      };
    });
    expect(fits.width).toBeGreaterThanOrEqual(380);
    expect(fits.header).toBe(true);
    expect(fits.picker).toBeGreaterThanOrEqual(160);
    await lab.screenshot('starter-01-opened');

    // Run All replays: no model is asked for the committed pairs.
    await lab.command('notebook:run-all-cells');
    let cells = await lab.waitForCells(
      STARTER,
      cells =>
        byId(cells, 'ask-mean-code').executionCount !== null &&
        byId(cells, 'ask-total-code').executionCount !== null,
      'Run All replays the generated cells',
      120_000
    );
    for (const id of ['ask-total', 'ask-mean']) {
      expect(
        byId(cells, id)
          .outputs.map(o => o.text)
          .join('')
      ).toContain('↻ replayed');
    }
    expect(started().modelServers()).toEqual([]);
    await lab.screenshot('starter-02-run-all-replayed');

    // The context preview, readable.
    await panel.locator('.jp-Chapyter-chatChipSummary').click();
    await expect(panel.locator('.jp-Chapyter-chatContextText')).toContainText(
      'prices'
    );
    await lab.screenshot('starter-03-context-preview', panel);
    await panel.locator('.jp-Chapyter-chatChipSummary').click();

    // A newcomer's own request, with the bundled model: edit the prompt, Shift+Enter. The
    // tiny model sometimes writes no code: like a person, ask again (at most 3 times).
    await lab.setSource(
      STARTER,
      'ask-mean',
      '%%ai\nmean of the price column into avg'
    );
    let said2 = '';
    for (let attempt = 1; attempt <= 3; attempt++) {
      await lab.waitForKernelIdle(STARTER, ANSWER_TIMEOUT);
      await lab.runCell(STARTER, 'ask-mean', 'Shift+Enter');
      cells = await lab.waitForCells(
        STARTER,
        cells => {
          const prompt = byId(cells, 'ask-mean');
          return (
            prompt.executionState === 'idle' &&
            prompt.outputs.some(o => /✓|chapyter-ext:/.test(o.text))
          );
        },
        'the bundled model answered (or said in one line why not)',
        ANSWER_TIMEOUT
      );
      started().modelServers();
      said2 = outputText(byId(cells, 'ask-mean'));
      testInfo.annotations.push({
        type: `%%ai attempt ${attempt}`,
        description: said2
      });
      if (said2.includes('✓')) {
        break;
      }
    }
    const prompt = byId(cells, 'ask-mean');
    const generated = cells[prompt.index + 1];
    expect(said2, 'the bundled model wrote code within 3 tries').toContain('✓');
    // Review first: inserted, linked, not run, and the line says so.
    expect(said2).toContain(
      'inserted below: it waits for your review (setting: Local review)'
    );
    expect(generated.id).toBe('ask-mean-code');
    expect(generated.chapyter).toMatchObject({
      role: 'generated',
      model: LOCAL_MODEL
    });
    expect(generated.executionCount).toBeNull();
    expect(generated.classes).not.toContain('jp-Chapyter-stale');
    await lab.screenshot('starter-04-for-review');

    // Reviewed: run it. It runs (whether the tiny model's code is right is the small-model
    // benchmark's business: BENCHMARKS.md); the outcome is noted in the report.
    await lab.runCell(STARTER, 'ask-mean-code');
    cells = await lab.waitForCells(
      STARTER,
      cells => byId(cells, 'ask-mean-code').executionCount !== null,
      'the reviewed cell ran'
    );
    const ran = byId(cells, 'ask-mean-code');
    testInfo.annotations.push({
      type: 'bundled model code',
      description: `${ran.source} -> ${
        ran.outputs.some(o => o.type === 'error') ? 'raised' : 'ran cleanly'
      }`
    });
    await lab.screenshot('starter-05-ran');

    // The chat: with the bundled model, code is offered for review, not "Insert and run",
    // and only code that passed the server's checks is offered at all. The tiny model
    // readily repeats what it is shown: ask it to repeat a code block (at most 3 times,
    // until an answer holds one that passes).
    const bars = panel.locator(
      '.jp-Chapyter-chatMessage.jp-mod-assistant .jp-Chapyter-codeActions'
    );
    const blocks = bars.filter({
      has: page.getByRole('button', { name: 'Insert below' })
    });
    for (let attempt = 1; attempt <= 3; attempt++) {
      await ask(
        panel,
        'Repeat this Python code block exactly:\n\n```python\ny = 5\n```'
      );
      await expect(panel.getByRole('button', { name: 'Stop' })).toBeHidden({
        timeout: ANSWER_TIMEOUT
      });
      started().modelServers();
      if ((await blocks.count()) > 0) {
        break;
      }
    }
    testInfo.annotations.push({
      type: 'chat code blocks offered / shown',
      description: `${await blocks.count()} / ${await bars.count()}`
    });
    // Whatever it wrote: never "Insert and run", and a block not offered says why.
    await expect(bars.first()).toBeVisible();
    await expect(
      panel.getByRole('button', { name: 'Insert and run' })
    ).toHaveCount(0);
    const refused = bars.filter({
      hasNot: page.getByRole('button', { name: 'Insert below' })
    });
    for (const bar of await refused.all()) {
      await expect(bar).toContainText('Not offered to run: ');
    }
    if ((await blocks.count()) === 0) {
      await lab.screenshot('starter-06-chat-review-first', panel);
      return; // the model never repeated the block well enough to be offered
    }
    await expect(blocks.first()).toBeVisible();
    const bar = blocks.first();
    await expect(
      bar.getByRole('button', { name: 'Insert below' })
    ).toBeVisible();
    await expect(
      bar.getByRole('button', { name: 'Insert and run' })
    ).toHaveCount(0);
    await expect(bar).toContainText(
      'waits for your review (setting: Local review)'
    );
    // The code block fits the panel: long lines wrap, nothing scrolls sideways.
    const code = panel
      .locator(
        '.jp-Chapyter-chatMessage.jp-mod-assistant .jp-Chapyter-codeBlock pre'
      )
      .first();
    expect(await code.evaluate(pre => pre.scrollWidth <= pre.clientWidth)).toBe(
      true
    );
    await bar.scrollIntoViewIfNeeded();
    await lab.screenshot('starter-06-chat-review-first', panel);
  });
});

test('no "prompt changed" while the code streams into the generated cell', async ({
  lab,
  page
}) => {
  await model.script({
    content: fenced(
      Array.from({ length: 12 }, (_, i) => `v${i} = ${i}`).join('\n')
    ),
    chunk_size: 4,
    chunk_delay: 0.1
  });
  const file = await lab.aiNotebook('streaming-not-stale', [
    { id: 'prompt', source: '%%ai\nset v0 to v11' }
  ]);
  await lab.waitForKernelIdle(file);
  await lab.runCell(file, 'prompt');

  // Sample the generated cell's classes in the page, every animation frame, until it ran.
  const samples = await page.evaluate(async file => {
    const app = (window as any).jupyterapp;
    const panel = Array.from(app.shell.widgets('main')).find(
      (w: any) => w.context?.path === file
    ) as any;
    const seen: { streaming: boolean; stale: boolean }[] = [];
    const deadline = Date.now() + 60_000;
    for (;;) {
      const widgets = panel.content.widgets;
      const index = widgets.findIndex((w: any) => w.model.id === 'prompt');
      const prompt = widgets[index];
      const below = widgets[index + 1];
      if (below?.model.getMetadata('chapyter')?.role === 'generated') {
        seen.push({
          streaming: prompt.model.executionState === 'running',
          stale: below.node.classList.contains('jp-Chapyter-stale')
        });
        if (below.model.executionCount !== null) {
          return seen;
        }
      }
      if (Date.now() > deadline) {
        return seen;
      }
      await new Promise(resolve => requestAnimationFrame(resolve));
    }
  }, file);
  expect(samples.filter(s => s.streaming).length).toBeGreaterThan(5);
  expect(samples.filter(s => s.stale)).toEqual([]);

  // The label appears when the prompt really changed afterwards.
  await lab.setSource(file, 'prompt', '%%ai\nset v0 to v10');
  await lab.waitForPair(
    file,
    ({ below }) => !!below?.classes.includes('jp-Chapyter-stale'),
    'the generated cell is marked "prompt changed"',
    { timeout: 10_000 }
  );
  await lab.screenshot('starter-07-prompt-changed');
});
