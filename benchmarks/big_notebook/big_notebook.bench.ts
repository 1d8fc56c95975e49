/**
 * Chat Send → answer painted in notebooks of 10 to 1,000 cells with outputs
 * (`ui-tests/tests/bigNotebook.ts`), and the part of it the browser spends before the
 * `POST chat` leaves (the snapshot of the notebook). Each size is its own notebook, opened with
 * the last cell active (where a user of a long notebook works); each ask is a new chat with a
 * short scripted answer from a model that answers at once.
 *
 * - `send_to_paint`: the click on Send (a capture listener, before the panel's handler) to the
 *   `requestAnimationFrame` after the answer's first text is in the DOM (the frame that paints it).
 * - `send_to_chat_fetch`: the click to the `POST chat`'s fetch start (resource timing).
 * - `body_bytes` (the `POST chat` body) and `model_chars` (the characters of the messages the
 *   model got): what is sent must not grow with the notebook either.
 * - `one_frame`: a line of the chat panel changed to one frame rendered, with no request: what
 *   every frame costs in a page that holds the notebook's cells (JupyterLab's, not the chat's).
 */

import { Locator, Page } from '@playwright/test';
import * as fs from 'fs';
import * as os from 'os';

import {
  expect,
  Lab,
  model,
  openChat,
  test
} from '../../ui-tests/tests/fixtures';
import { createBigNotebook } from '../../ui-tests/tests/bigNotebook';
import {
  machine,
  RESULTS,
  round,
  stats,
  writeResult
} from '../browser/measure';

const SIZES = (process.env.BENCH_SIZES ?? '10,200,500,1000')
  .split(',')
  .map(Number);
const ASKS = Number(process.env.BENCH_ASKS ?? 15);
const WARMUP = Number(process.env.BENCH_WARMUP ?? 3);
const ANSWER = 'The total is `part9.sum()`: **42**, printed below.';

/** One ask's timestamps (epoch ms, page clock) and sizes. */
interface IAsk {
  send: number;
  chatFetch: number;
  frame: number;
  bodyBytes: number;
  modelChars: number;
  /** The fake model wrote its first chunk (its clock, the same machine's). */
  modelFirstChunk: number;
}

/**
 * Open `file`, run its first cell (the kernel's variables), make its last cell active, and wait until
 * JupyterLab has rendered every cell (it renders them on idle time after opening; asks made
 * meanwhile would measure that instead).
 */
async function openBig(lab: Lab, file: string, count: number): Promise<void> {
  await lab.openNotebook(file);
  await lab.page.evaluate(
    async ({ file, count }) => {
      const app = (window as any).jupyterapp;
      const panel = Array.from(app.shell.widgets('main')).find(
        (w: any) => w.context?.path === file
      ) as any;
      app.shell.activateById(panel.id);
      // The first cell makes the kernel's variables.
      panel.content.activeCellIndex = 0;
      await app.commands.execute('notebook:run-cell');
      panel.content.activeCellIndex = count - 1;
    },
    { file, count }
  );
  await expect
    .poll(
      () =>
        lab.page.evaluate(file => {
          const app = (window as any).jupyterapp;
          const panel = Array.from(app.shell.widgets('main')).find(
            (w: any) => w.context?.path === file
          ) as any;
          return panel.content.widgets.filter((c: any) => c.isPlaceholder())
            .length;
        }, file),
      { timeout: 300_000, message: `every cell of ${file} rendered` }
    )
    .toBe(0);
}

/** Close `file` and shut its kernel down, so the next size starts alone. */
async function closeBig(page: Page, file: string): Promise<void> {
  await page.evaluate(async file => {
    const app = (window as any).jupyterapp;
    const panel = Array.from(app.shell.widgets('main')).find(
      (w: any) => w.context?.path === file
    ) as any;
    await panel.sessionContext.shutdown();
    panel.dispose();
  }, file);
}

/** The click on Send and the frame after the answer's first text (see the module's doc). */
async function instrument(page: Page): Promise<void> {
  await page.evaluate(() => {
    const w = window as any;
    const now = () => performance.timeOrigin + performance.now();
    performance.setResourceTimingBufferSize(100_000);
    performance.clearResourceTimings();
    w.__bench = { armed: false };
    document.addEventListener(
      'click',
      event => {
        const b = w.__bench;
        if (
          b.armed &&
          !b.send &&
          (event.target as Element | null)?.closest('.jp-Chapyter-chatSend')
        ) {
          b.send = now();
          if (b.profile) {
            console.profile('ask');
          }
          performance.mark('bench-send');
        }
      },
      true
    );
    const list = document.querySelector('.jp-Chapyter-chatMessages')!;
    new MutationObserver(() => {
      const b = w.__bench;
      if (!b.armed || b.dom) {
        return;
      }
      const answer = list.querySelector(
        '.jp-mod-assistant .jp-Chapyter-chatMarkdown'
      );
      if (answer?.textContent?.trim()) {
        b.dom = now();
        requestAnimationFrame(() => {
          b.frame = now();
          if (b.profile) {
            console.profileEnd('ask');
          }
          performance.mark('bench-frame');
          b.painted();
        });
      }
    }).observe(list, { childList: true, subtree: true, characterData: true });
  });
}

/**
 * The page's cost of one frame, for comparison: a line of text changed in the chat panel
 * (as a token does) to the second animation frame after it, i.e. one frame rendered.
 */
async function oneFrame(page: Page): Promise<number> {
  return page.evaluate(
    () =>
      new Promise<number>(resolve => {
        const hint = document.querySelector('.jp-Chapyter-chatHint')!;
        const start = performance.now();
        hint.textContent = (hint.textContent ?? '') + ' ';
        requestAnimationFrame(() =>
          requestAnimationFrame(() => {
            hint.textContent = (hint.textContent ?? '').trimEnd();
            resolve(performance.now() - start);
          })
        );
      })
  );
}

/** One ask in a new chat; the `POST chat` body's size from `bodies`. */
async function ask(
  page: Page,
  panel: Locator,
  bodies: number[],
  profile = false
): Promise<IAsk> {
  const send = panel.getByRole('button', { name: 'Send' });
  await expect(send).toBeVisible();
  await panel.getByRole('button', { name: 'New chat' }).click();
  await expect(panel.locator('.jp-Chapyter-chatMessage')).toHaveCount(0);
  await model.reset();
  await model.script({ content: ANSWER, chunk_size: 8 });
  await panel
    .getByRole('textbox', { name: 'Ask AI' })
    .fill('Why does the sum fail?');
  bodies.length = 0;
  await page.evaluate(profile => {
    const b: any = { armed: true, profile };
    b.finished = new Promise<void>(resolve => (b.painted = resolve));
    (window as any).__bench = b;
  }, profile);
  await send.click();
  await page.evaluate(() => (window as any).__bench.finished);
  await expect(send).toBeVisible();
  await expect(panel.locator('.jp-mod-assistant')).toContainText(
    'printed below'
  );
  const marks = await page.evaluate(() => {
    const b = (window as any).__bench;
    b.armed = false;
    const at = (t: number) => performance.timeOrigin + t;
    const chat = (
      performance.getEntriesByType('resource') as PerformanceResourceTiming[]
    ).filter(
      e =>
        new URL(e.name).pathname.endsWith('/chapyter-ext/chat') &&
        at(e.startTime) >= b.send
    )[0];
    performance.clearResourceTimings();
    return {
      send: b.send as number,
      frame: b.frame as number,
      chatFetch: chat ? at(chat.startTime) : NaN
    };
  });
  const requests = await model.chatRequests();
  expect(requests).toHaveLength(1);
  expect(bodies).toHaveLength(1);
  const messages: { content?: unknown }[] = requests[0].body.messages ?? [];
  const modelChars = messages.reduce(
    (sum, m) => sum + (typeof m.content === 'string' ? m.content.length : 0),
    0
  );
  return {
    ...marks,
    bodyBytes: bodies[0],
    modelChars,
    modelFirstChunk: (requests[0].first_chunk_at ?? NaN) * 1000
  };
}

test.use({ autoOpen: false });

test('chat: Send to answer painted, notebooks of 10 to 1,000 cells', async ({
  lab
}) => {
  const page = lab.page;
  const bodies: number[] = [];
  page.on('request', request => {
    if (
      request.method() === 'POST' &&
      new URL(request.url()).pathname.endsWith('/chapyter-ext/chat')
    ) {
      bodies.push(Buffer.byteLength(request.postData() ?? ''));
    }
  });
  await lab.open();
  const loadBefore = os.loadavg();
  const sizes: { [cells: string]: object } = {};
  const medians: { [cells: number]: { paint: number; before: number } } = {};
  let panel: Locator | null = null;
  for (const count of SIZES) {
    const file = await createBigNotebook(`bench-big-${count}`, count);
    await openBig(lab, file, count);
    if (!panel) {
      panel = await openChat(lab);
      await instrument(page);
    }
    for (let i = 0; i < WARMUP; i++) {
      await ask(page, panel, bodies);
    }
    const asks: IAsk[] = [];
    const frames: number[] = [];
    for (let i = 0; i < ASKS; i++) {
      asks.push(await ask(page, panel, bodies));
      frames.push(await oneFrame(page));
    }
    if (process.env.BENCH_PROFILE && count === Math.max(...SIZES)) {
      // One more ask under the CPU profiler, from the click to the frame (console.profile in
      // the page): where the page's time goes. A diagnostic, not a figure.
      const cdp = await page.context().newCDPSession(page);
      await cdp.send('Profiler.enable');
      await cdp.send('Profiler.setSamplingInterval', { interval: 100 });
      const finished = new Promise<any>(resolve =>
        cdp.once('Profiler.consoleProfileFinished', event =>
          resolve(event.profile)
        )
      );
      const probe = await ask(page, panel, bodies, true);
      fs.writeFileSync(
        RESULTS.replace(/\.json$/, `.${count}.cpuprofile`),
        JSON.stringify({ ...(await finished), bench: probe })
      );
    }
    if (process.env.BENCH_TRACE && count === Math.max(...SIZES)) {
      // One more ask under Chromium's tracing (bench-send / bench-frame marks): the main
      // thread's tasks, style and layout included. A diagnostic, not a figure.
      const cdp = await page.context().newCDPSession(page);
      const events: any[] = [];
      cdp.on('Tracing.dataCollected', (data: any) =>
        events.push(...data.value)
      );
      const done = new Promise<void>(resolve =>
        cdp.once('Tracing.tracingComplete', () => resolve())
      );
      await cdp.send('Tracing.start', {
        categories:
          process.env.BENCH_TRACE_CATEGORIES ??
          'devtools.timeline,blink.user_timing,disabled-by-default-devtools.timeline',
        transferMode: 'ReportEvents'
      });
      await ask(page, panel, bodies);
      await cdp.send('Tracing.end');
      await done;
      fs.writeFileSync(
        RESULTS.replace(/\.json$/, `.${count}.trace.json`),
        JSON.stringify(events)
      );
    }
    const paint = stats(asks.map(a => a.frame - a.send));
    const before = stats(asks.map(a => a.chatFetch - a.send));
    medians[count] = { paint: paint.median_ms, before: before.median_ms };
    sizes[count] = {
      send_to_paint: paint,
      send_to_chat_fetch: before,
      chat_fetch_to_model_first_chunk: stats(
        asks.map(a => a.modelFirstChunk - a.chatFetch)
      ),
      model_first_chunk_to_paint: stats(
        asks.map(a => a.frame - a.modelFirstChunk)
      ),
      body_bytes: stats(
        asks.map(a => a.bodyBytes),
        { digits: 0 }
      ),
      model_chars: stats(
        asks.map(a => a.modelChars),
        { digits: 0 }
      ),
      one_frame: stats(frames),
      raw_send_to_paint_ms: asks.map(a => round(a.frame - a.send))
    };
    await closeBig(page, file);
  }
  const least = Math.min(...SIZES);
  const most = Math.max(...SIZES);
  writeResult({
    command: process.env.BENCH_COMMAND ?? 'bash benchmarks/big_notebook/run.sh',
    when: new Date().toISOString(),
    asks_per_size: ASKS,
    warmup_asks_per_size: WARMUP,
    sizes,
    ratio_most_to_least: {
      cells: `${most}/${least}`,
      send_to_paint: round(medians[most].paint / medians[least].paint, 2),
      send_to_chat_fetch: round(medians[most].before / medians[least].before, 2)
    },
    machine: machine(loadBefore)
  });
});
