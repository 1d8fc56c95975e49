/**
 * Inline completion latency in a real JupyterLab: from the last keystroke to the first ghost
 * text painted, with the loopback model answering at once. JupyterLab waits its debouncer
 * delay after the last key before it asks the provider; `beyond_debounce` is what remains:
 * the provider reading the notebook, the request through the Jupyter server to the model and
 * back, and the ghost text's render.
 *
 * "Painted" is a `requestAnimationFrame` callback queued by a MutationObserver as soon as a
 * `.jp-GhostText` has text: the frame that paints it. Times are `performance.now()` in the page.
 */

import * as os from 'os';

import { expect, Lab, model, test } from '../../ui-tests/tests/fixtures';
import { chromiumVersion } from '../../ui-tests/harness/browser';
import { stats as summary, writeResult } from '../browser/measure';
import { tapTokenStream } from '../browser/page-probes';

const ASKS = Number(process.env.BENCH_ASKS ?? 30);
const WARMUP = Number(process.env.BENCH_WARMUP ?? 3);
/** JupyterLab's debouncerDelay for the provider (the schema default, set again below). */
const DEBOUNCE_MS = Number(process.env.BENCH_DEBOUNCE_MS ?? 300);
const TYPED = 'weather.gro';
const SUGGESTION = "upby('city').temp_c.mean()";

/** The median of an even count is the mean of its two middle values here. */
function stats(values: number[]): { [key: string]: number } {
  return summary(values, { digits: 2, midpoint: true });
}

/** JupyterLab loaded and instrumented, a notebook open with its data cell run; its path. */
async function setUp(lab: Lab): Promise<string> {
  const page = lab.page;
  await model.route(`${TYPED}<CURSOR>`, {
    content: SUGGESTION,
    chunk_size: 64
  });
  // Timestamps: the last keydown (capture, before CodeMirror) and the ghost text painted.
  await page.addInitScript(() => {
    const w = window as any;
    // Each sample starts from these (armed: true, see below).
    w.__benchStart = {
      armed: false,
      key: 0,
      fetch: 0,
      headers: 0,
      tokenBytes: 0,
      dom: 0,
      frame: 0
    };
    w.__bench = { ...w.__benchStart };
    document.addEventListener(
      'keydown',
      () => {
        if (w.__bench.armed) {
          w.__bench.key = performance.now();
        }
      },
      true
    );
    new MutationObserver(() => {
      const b = w.__bench;
      if (!b.armed || b.dom) {
        return;
      }
      const ghost = document.querySelector('.jp-GhostText');
      if (ghost && ghost.textContent) {
        b.dom = performance.now();
        requestAnimationFrame(() => (b.frame = performance.now()));
      }
    }).observe(document, {
      childList: true,
      subtree: true,
      characterData: true
    });
  });
  // The completion request: sent, answered, its first token's bytes in the page.
  await tapTokenStream(page, '/chapyter-ext/complete');
  await lab.open();
  const file = await lab.newNotebook('bench-inline-completion', [
    {
      id: 'data',
      source:
        "import pandas as pd\nweather = pd.DataFrame({'city': ['Oslo', 'Lima'], 'temp_c': [3, 19]})"
    },
    { id: 'work', source: '' }
  ]);
  await lab.runCell(file, 'data', 'Shift+Enter'); // runs the data cell, moves to the empty one
  await lab.waitForCells(
    file,
    cells => cells[0].executionCount === 1,
    'the data cell ran'
  );
  return file;
}

test.use({ autoOpen: false });

test('inline completion: last keystroke to ghost text painted', async ({
  lab
}) => {
  const page = lab.page;
  const load = os.loadavg();
  const file = await setUp(lab);
  const work = (await lab.cellLocator(file, 'work')).locator('.cm-content');
  const keyToPaint: number[] = [];
  const keyToFetch: number[] = [];
  const fetchToDom: number[] = [];
  const fetchToBytes: number[] = [];
  const bytesToDom: number[] = [];
  const domToFrame: number[] = [];
  for (let i = 0; i < WARMUP + ASKS; i++) {
    await page.keyboard.press('Escape'); // dismiss the last ghost text (command mode)
    await page.evaluate(() => {
      const panel = (window as any).jupyterapp.shell.currentWidget;
      panel.content.model.cells.get(1).sharedModel.setSource('');
    });
    await work.click();
    await expect(page.locator('.jp-GhostText')).toHaveCount(0);
    await page.evaluate(() => {
      const w = window as any;
      w.__bench = { ...w.__benchStart, armed: true };
    });
    await page.keyboard.type(TYPED);
    await page.waitForFunction(() => (window as any).__bench.frame > 0, null, {
      timeout: 30_000
    });
    const b = await page.evaluate(() => {
      const bench = (window as any).__bench;
      bench.armed = false;
      return { ...bench };
    });
    await expect(page.locator('.jp-GhostText')).toContainText(SUGGESTION);
    if (i >= WARMUP) {
      keyToPaint.push(b.frame - b.key);
      keyToFetch.push(b.fetch - b.key);
      fetchToDom.push(b.dom - b.fetch);
      fetchToBytes.push(b.tokenBytes - b.fetch);
      bytesToDom.push(b.dom - b.tokenBytes);
      domToFrame.push(b.frame - b.dom);
    }
  }
  const paint = stats(keyToPaint);
  const result = {
    benchmark: 'inline completion: last keystroke to first ghost text painted',
    command:
      process.env.BENCH_COMMAND ?? 'bash benchmarks/inline_completion/run.sh',
    debounce_ms: DEBOUNCE_MS,
    key_to_paint: paint,
    beyond_debounce: stats(keyToPaint.map(x => x - DEBOUNCE_MS)),
    key_to_fetch: stats(keyToFetch),
    fetch_to_dom: stats(fetchToDom),
    fetch_to_token_bytes: stats(fetchToBytes),
    token_bytes_to_dom: stats(bytesToDom),
    dom_to_frame: stats(domToFrame),
    raw_key_to_paint_ms: keyToPaint.map(x => Math.round(x * 10) / 10),
    loadavg_before: load,
    loadavg_after: os.loadavg(),
    chromium: chromiumVersion()
  };
  writeResult(result);
});
