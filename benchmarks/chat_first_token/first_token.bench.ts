/**
 * How long the AI Chat takes to paint the first token of an answer. Two numbers, asked in
 * turn in one page (each ask in a fresh chat, so every ask does the same work):
 *
 * - `first_byte_to_paint`: from the fake model writing its first SSE content chunk (its wall
 *   clock, `first_chunk_at`) to the first answer text painted in the browser. The model waits
 *   `DELAY_S` before answering, so the request's own overhead is over by then.
 * - `send_to_paint`: from the click on Send to the first answer text painted, with a model
 *   that answers at once: everything chapyter-ext adds (context, server, SSE, rendering).
 *
 * "Painted" is a `requestAnimationFrame` callback queued by a MutationObserver on the message
 * list as soon as the answer has text: the frame that paints it. Page times are
 * `performance.timeOrigin + performance.now()`; the fake model and the page share the
 * machine's clock, and `clock_offset_ms` in the output says how far the page's clock is from
 * `Date.now()` (wall clock).
 */

import { Locator, Page } from '@playwright/test';
import * as fs from 'fs';
import * as os from 'os';

import {
  chatNotebook,
  expect,
  Lab,
  LOAD_EXT,
  model,
  openChat,
  test
} from '../../ui-tests/tests/fixtures';
import {
  machine,
  quantile,
  RESULTS,
  round,
  stats,
  writeResult
} from '../browser/measure';
import { tapTokenStream } from '../browser/page-probes';

const ASKS = Number(process.env.BENCH_ASKS ?? 30);
const WARMUP = Number(process.env.BENCH_WARMUP ?? 3);
/** Seconds the model waits before its first byte in the `first_byte_to_paint` asks. */
const DELAY_S = Number(process.env.BENCH_DELAY_S ?? 0.3);

/** A short answer in small chunks, as a model streams it. */
const ANSWER =
  'Sure: `rain` has **3 rows**; add them up with `rain.sum()` and print the total.';

/** Timestamps of one ask, in epoch milliseconds. */
interface IAsk {
  send: number;
  /** The `POST chat` left the page (fetch start), its response headers arrived. */
  chatFetch: number;
  chatHeaders: number;
  /** The browser started sending it (after queueing and any connection setup). */
  chatRequestStart: number;
  /** The first `token` event's bytes reached the page (before it could draw them). */
  tokenBytes: number;
  /** The `POST context` (the chip's preview) left the page; NaN when none was made. */
  contextFetch: number;
  modelFirstChunk: number;
  dom: number;
  frame: number;
}

/**
 * JupyterLab loaded, a notebook of two cells (`%load_ext chapyter_ext`, a small variable) run
 * with its kernel idle, and the chat panel open.
 */
async function openChatOnNotebook(lab: Lab): Promise<Locator> {
  const page = lab.page;
  // When the chat stream's first `token` event reaches the page, apart from when it is drawn.
  await tapTokenStream(page, '/chapyter-ext/chat(\\?|$)');
  await lab.open();
  const file = await chatNotebook('bench-first-token', [
    { id: 'load', source: LOAD_EXT },
    { id: 'data', source: 'rain = [763, 16, 722]' }
  ]);
  await lab.openNotebook(file);
  await lab.command('notebook:run-all-cells');
  await lab.waitForCells(
    file,
    cells => cells.every(c => c.executionCount !== null),
    'the notebook ran'
  );
  await lab.waitForKernelIdle(file);
  return openChat(lab);
}

/**
 * Page-side recorders: the click on Send (capture phase, before the panel's own handler),
 * the first answer text in the message list, and the animation frame after it.
 */
async function instrument(page: Page): Promise<void> {
  await page.evaluate(() => {
    const w = window as any;
    const now = () => performance.timeOrigin + performance.now();
    w.__bench = { armed: false, send: null, dom: null, frame: null };
    // Each ask reads and clears the resource timings of its requests: never let them drop.
    performance.setResourceTimingBufferSize(100_000);
    performance.clearResourceTimings();
    document.addEventListener(
      'click',
      event => {
        const b = w.__bench;
        const target = event.target as Element | null;
        if (
          b.armed &&
          b.send === null &&
          target?.closest('.jp-Chapyter-chatSend')
        ) {
          b.send = now();
        }
      },
      true
    );
    const list = document.querySelector('.jp-Chapyter-chatMessages')!;
    new MutationObserver(() => {
      const b = w.__bench;
      if (!b.armed || b.dom !== null) {
        return;
      }
      // Each ask starts in a new chat: the only answer in the list is this ask's.
      const answer = list.querySelector(
        '.jp-mod-assistant .jp-Chapyter-chatMarkdown'
      );
      if (answer?.textContent?.trim()) {
        b.dom = now();
        requestAnimationFrame(() => {
          b.frame = now();
          b.painted();
        });
      }
    }).observe(list, { childList: true, subtree: true, characterData: true });
  });
}

/** Median offset of the page's high-resolution clock from its wall clock, in ms. */
async function clockOffset(page: Page): Promise<number> {
  const offsets: number[] = await page.evaluate(() => {
    const out: number[] = [];
    for (let i = 0; i < 200; i++) {
      const hires = performance.timeOrigin + performance.now();
      out.push(Date.now() - hires);
    }
    return out;
  });
  // Date.now() truncates to whole ms: add half a ms so a perfect clock reads ~0.
  return round(quantile(offsets, 0.5) + 0.5);
}

/** One ask in a fresh chat: the model scripted, Send clicked, timestamps collected. */
async function ask(page: Page, panel: Locator, delay: number): Promise<IAsk> {
  const send = panel.getByRole('button', { name: 'Send' });
  await expect(send).toBeVisible();
  await panel.getByRole('button', { name: 'New chat' }).click();
  await expect(panel.locator('.jp-Chapyter-chatMessage')).toHaveCount(0);
  await model.reset();
  await model.script({
    content: ANSWER,
    delay,
    chunk_size: 8,
    chunk_delay: 0.01
  });
  await panel
    .getByRole('textbox', { name: 'Ask AI' })
    .fill('How much rain fell in all?');
  await page.evaluate(() => {
    const b: any = {
      armed: true,
      send: null,
      dom: null,
      frame: null
    };
    // Resolved by the frame's callback: waiting for it polls nothing in the page.
    b.finished = new Promise<void>(resolve => (b.painted = resolve));
    (window as any).__bench = b;
  });
  await send.click();
  await page.evaluate(() => (window as any).__bench.finished);
  // The answer finishes before the next ask (Send is back once the chat is idle).
  await expect(send).toBeVisible();
  await expect(panel.locator('.jp-mod-assistant')).toContainText(
    'print the total'
  );
  const marks = await page.evaluate(() => {
    const b = (window as any).__bench;
    b.armed = false;
    // Resource timing of this ask's requests: when each left the page, when its response
    // headers came back (page clock, epoch ms).
    const at = (t: number) => performance.timeOrigin + t;
    const entries = performance.getEntriesByType(
      'resource'
    ) as PerformanceResourceTiming[];
    const find = (path: string) =>
      entries.filter(
        e =>
          new URL(e.name).pathname.endsWith(path) && at(e.startTime) >= b.send
      )[0];
    const chat = find('/chapyter-ext/chat');
    const context = find('/chapyter-ext/context');
    performance.clearResourceTimings();
    return {
      send: b.send,
      dom: b.dom,
      frame: b.frame,
      tokenBytes: b.tokenBytes ? at(b.tokenBytes) : NaN,
      chatFetch: chat ? at(chat.startTime) : NaN,
      chatHeaders: chat ? at(chat.responseStart) : NaN,
      chatRequestStart: chat ? at(chat.requestStart) : NaN,
      contextFetch: context ? at(context.startTime) : NaN
    };
  });
  const requests = await model.chatRequests();
  expect(requests).toHaveLength(1);
  const first = requests[0].first_chunk_at;
  expect(typeof first).toBe('number');
  return { ...marks, modelFirstChunk: first! * 1000 };
}

test.use({ autoOpen: false });

test('chat: first byte of the model to first token painted', async ({
  lab
}) => {
  const page = lab.page;
  const panel = await openChatOnNotebook(lab);
  await instrument(page);
  const offsetBefore = await clockOffset(page);
  const loadBefore = os.loadavg();

  // Warm-up (lazy Markdown and highlighting code, first history file): not counted.
  for (let i = 0; i < WARMUP; i++) {
    await ask(page, panel, DELAY_S);
    await ask(page, panel, 0);
  }
  // Alternate the two kinds of ask, so a busy spell of the machine hits both alike.
  const delayed: IAsk[] = [];
  const immediate: IAsk[] = [];
  for (let i = 0; i < ASKS; i++) {
    delayed.push(await ask(page, panel, DELAY_S));
    immediate.push(await ask(page, panel, 0));
  }
  if (process.env.BENCH_TRACE) {
    // One more immediate ask under Chromium's tracing: the main thread's tasks, to see
    // what the page does between Send and the first token (a diagnostic, not a figure).
    const cdp = await page.context().newCDPSession(page);
    const events: any[] = [];
    cdp.on('Tracing.dataCollected', (data: any) => events.push(...data.value));
    const done = new Promise<void>(resolve =>
      cdp.once('Tracing.tracingComplete', () => resolve())
    );
    await cdp.send('Tracing.start', {
      categories:
        'devtools.timeline,blink.user_timing,disabled-by-default-devtools.timeline',
      transferMode: 'ReportEvents'
    });
    await page.evaluate(() => {
      const list = document.querySelector('.jp-Chapyter-chatMessages')!;
      document.addEventListener(
        'click',
        event => {
          if (
            (event.target as Element | null)?.closest('.jp-Chapyter-chatSend')
          ) {
            performance.mark('bench-click');
          }
        },
        { capture: true }
      );
      const observer = new MutationObserver(() => {
        if (
          performance.getEntriesByName('bench-click').length &&
          list
            .querySelector('.jp-mod-assistant .jp-Chapyter-chatMarkdown')
            ?.textContent?.trim()
        ) {
          performance.mark('bench-dom');
          observer.disconnect();
        }
      });
      observer.observe(list, {
        childList: true,
        subtree: true,
        characterData: true
      });
    });
    await ask(page, panel, 0);
    await cdp.send('Tracing.end');
    await done;
    fs.writeFileSync(
      RESULTS.replace(/\.json$/, '.trace.json'),
      JSON.stringify(events)
    );
  }
  if (process.env.BENCH_PROFILE) {
    // One more immediate ask under the CPU profiler: where the page's time goes.
    const cdp = await page.context().newCDPSession(page);
    await cdp.send('Profiler.enable');
    await cdp.send('Profiler.setSamplingInterval', { interval: 200 });
    await cdp.send('Profiler.start');
    const probe = await ask(page, panel, 0);
    const { profile } = await cdp.send('Profiler.stop');
    fs.writeFileSync(
      RESULTS.replace(/\.json$/, '.cpuprofile'),
      JSON.stringify({ ...profile, bench: probe })
    );
  }
  const offsetAfter = await clockOffset(page);

  const result = {
    command:
      process.env.BENCH_COMMAND ?? 'bash benchmarks/chat_first_token/run.sh',
    when: new Date().toISOString(),
    asks_per_scenario: ASKS,
    warmup_asks_per_scenario: WARMUP,
    first_byte_to_paint: {
      what: `model's first SSE content chunk written (model waits ${DELAY_S} s) -> rAF after the first answer text is in the DOM`,
      ...stats(delayed.map(a => a.frame - a.modelFirstChunk)),
      to_dom: stats(delayed.map(a => a.dom - a.modelFirstChunk)),
      dom_to_frame: stats(delayed.map(a => a.frame - a.dom))
    },
    send_to_paint: {
      what: 'click on Send -> rAF after the first answer text is in the DOM, model answering at once',
      ...stats(immediate.map(a => a.frame - a.send)),
      // Close to constant when the answer waits for the render throttle (see README).
      send_to_dom: stats(immediate.map(a => a.dom - a.send)),
      send_to_model_first_chunk: stats(
        immediate.map(a => a.modelFirstChunk - a.send)
      ),
      model_first_chunk_to_dom: stats(
        immediate.map(a => a.dom - a.modelFirstChunk)
      ),
      model_first_chunk_to_paint: stats(
        immediate.map(a => a.frame - a.modelFirstChunk)
      ),
      // Where the time before the model goes: the page before its POST chat, the server
      // before the model's first byte, the response headers (the `start` event).
      send_to_chat_fetch: stats(immediate.map(a => a.chatFetch - a.send)),
      chat_fetch_to_model_first_chunk: stats(
        immediate.map(a => a.modelFirstChunk - a.chatFetch)
      ),
      model_first_chunk_to_token_bytes_in_page: stats(
        immediate.map(a => a.tokenBytes - a.modelFirstChunk)
      ),
      token_bytes_in_page_to_dom: stats(
        immediate.map(a => a.dom - a.tokenBytes)
      ),
      chat_fetch_to_request_start: stats(
        immediate.map(a => a.chatRequestStart - a.chatFetch)
      ),
      chat_fetch_to_response_headers: stats(
        immediate.map(a => a.chatHeaders - a.chatFetch)
      ),
      context_previews_before_chat: immediate.filter(
        a => a.contextFetch < a.chatFetch
      ).length
    },
    clock_offset_ms: { before: offsetBefore, after: offsetAfter },
    machine: machine(loadBefore),
    raw_ms: {
      first_byte_to_paint: delayed.map(a => round(a.frame - a.modelFirstChunk)),
      send_to_paint: immediate.map(a => round(a.frame - a.send))
    }
  };
  writeResult(result);
});
