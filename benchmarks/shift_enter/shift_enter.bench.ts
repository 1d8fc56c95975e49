/**
 * Shift+Enter on a `%%ai` cell to the generated cell's first output painted, in Debian's
 * Chromium, against a JupyterLab and a zero-latency fake model that run.sh started. Measured
 * page-side: a capture listener notes the keydown, the kernel connection's `anyMessage` the
 * messages as they are sent and received, a MutationObserver the output's text in the DOM,
 * and the `requestAnimationFrame` queued right after it stands in for the paint. Playwright
 * only waits between samples, never inside one.
 *
 * Two kinds of sample take turns: the prompt cell (the model answers `print('run-N')` at
 * once), and a plain cell `print('plain-N')`: the same Shift+Enter with no model, the limit
 * of a cell run on this machine that the prompt's figure is compared with.
 */

import { Page } from '@playwright/test';
import * as os from 'os';

import {
  createNotebook,
  expect,
  fenced,
  Lab,
  LOAD_EXT,
  model,
  test
} from '../../ui-tests/tests/fixtures';
import { machine, round, stats, writeResult } from '../browser/measure';

const RUNS = Number(process.env.BENCH_RUNS ?? 30);
const WARMUP = Number(process.env.BENCH_WARMUP ?? 3);
const NOTEBOOK = 'bench-shift-enter.ipynb';
/** Pause before each sample, after its cell is selected (see `sample`). */
const SETTLE_MS = Number(process.env.BENCH_SETTLE_MS ?? 600);

/** Page timestamps of one sample (epoch ms); null when it did not happen. */
interface ISample {
  key: number;
  /** First execute_request sent (the prompt cell, or the plain cell). */
  request: number;
  /** Its execute_reply received. */
  reply: number;
  /** The generated cell's execute_request sent (prompt samples only). */
  generatedRequest: number | null;
  /** The first `stream` output of the cell whose output is awaited, handled by the kernel
   * connection (`anyMessage`). */
  stream: number;
  /** The websocket frame carrying it reached the page (before the page could handle it). */
  wsStream: number;
  dom: number;
  frame: number;
  /** The fake model's first chunk written (its clock; prompt samples only). */
  modelFirstChunk: number | null;
}

async function scriptAnswer(marker: string): Promise<void> {
  await model.reset();
  await model.script({
    content: fenced(`print('${marker}')`),
    chunk_size: 1000
  });
}

/** JupyterLab loaded, the notebook open, run once, its kernel idle. */
async function openNotebook(lab: Lab): Promise<void> {
  const page = lab.page;
  // Before JupyterLab opens its kernel websocket: note when the frame carrying the awaited
  // output reaches the page, apart from when the page gets to handle it.
  await page.addInitScript(() => {
    const w = window as any;
    const Original = window.WebSocket;
    const decoder = new TextDecoder();
    class Recording extends Original {
      constructor(url: string | URL, protocols?: string | string[]) {
        super(url, protocols);
        this.addEventListener('message', event => {
          const b = w.__bench;
          if (!b?.armed || b.wsStream !== null) {
            return;
          }
          const at = performance.timeOrigin + performance.now();
          const data = event.data;
          const text =
            typeof data === 'string'
              ? data
              : data instanceof ArrayBuffer
                ? decoder.decode(data)
                : '';
          if (text.includes('"stream"') && text.includes(b.marker)) {
            b.wsStream = at;
          }
        });
      }
    }
    window.WebSocket = Recording as typeof WebSocket;
  });
  await lab.open();
  await createNotebook('bench-shift-enter', [
    { id: 'load', source: LOAD_EXT },
    { id: 'data', source: 'rain = [763, 16, 722]' },
    { id: 'prompt', source: '%%ai\nprint the total rain' },
    { id: 'plain', source: "print('plain')" }
  ]);
  await scriptAnswer('run-0');
  await lab.openNotebook(NOTEBOOK);
  await lab.command('notebook:run-all-cells');
  // Run All may leave the generated cell for a later turn: the warm-up samples run it.
  await idle(lab);
}

/** The notebook's kernel is idle (between samples, never inside one). */
async function idle(lab: Lab): Promise<void> {
  await lab.waitForKernelIdle(NOTEBOOK, 60_000);
}

/** Page-side recorders, armed per sample (see the module's comment). */
async function instrument(page: Page): Promise<void> {
  await page.evaluate(() => {
    const w = window as any;
    const now = () => performance.timeOrigin + performance.now();
    const panel = w.jupyterapp.shell.currentWidget;
    const notebook = panel.content;
    w.__bench = { armed: false };
    document.addEventListener(
      'keydown',
      event => {
        const b = w.__bench;
        if (
          b.armed &&
          b.key === null &&
          event.key === 'Enter' &&
          event.shiftKey
        ) {
          b.key = now();
        }
      },
      true
    );
    const kernel = panel.sessionContext.session.kernel;
    kernel.anyMessage.connect((_: unknown, args: any) => {
      const b = w.__bench;
      if (!b.armed) {
        return;
      }
      const t = now();
      const msg = args.msg;
      const type = msg.header.msg_type;
      b.log.push([
        Math.round((t - b.key) * 10) / 10,
        args.direction,
        type,
        type === 'execute_request'
          ? `${msg.content.silent ? 'silent ' : ''}${String(msg.content.code).slice(0, 30)}${JSON.stringify(msg.content.user_expressions ?? {}).slice(0, 60)}`
          : ''
      ]);
      if (args.direction === 'send') {
        // Silent requests are not the cells' (the chat reads the variables that way).
        if (type === 'execute_request' && !msg.content.silent) {
          b.requests.push({ id: msg.header.msg_id, at: t });
        }
        return;
      }
      const parent = msg.parent_header?.msg_id;
      const index = b.requests.findIndex((r: any) => r.id === parent);
      if (index < 0) {
        return;
      }
      const request = b.requests[index];
      if (type === 'execute_reply' && request.reply === undefined) {
        request.reply = t;
      }
      if (type === 'stream' && request.stream === undefined) {
        request.stream = t;
      }
    });
    new MutationObserver(() => {
      const b = w.__bench;
      if (!b.armed || b.dom !== null) {
        return;
      }
      const target = notebook.widgets[b.targetIndex()];
      const text =
        target?.node.querySelector('.jp-OutputArea-output')?.textContent ?? '';
      if (text.includes(b.marker)) {
        b.dom = now();
        requestAnimationFrame(() => {
          b.frame = now();
          b.painted();
        });
      }
    }).observe(notebook.node, {
      childList: true,
      subtree: true,
      characterData: true
    });
  });
}

/** One Shift+Enter on the prompt cell (`prompt`) or the plain cell; its timestamps. */
async function sample(
  lab: Lab,
  kind: 'prompt' | 'plain',
  n: number
): Promise<ISample> {
  const page = lab.page;
  const marker = `${kind === 'prompt' ? 'run' : 'plain'}-${n}`;
  if (kind === 'prompt') {
    await scriptAnswer(marker);
  }
  await page.evaluate(
    ({ kind, marker }) => {
      const w = window as any;
      const notebook = w.jupyterapp.shell.currentWidget.content;
      const index = (id: string) =>
        notebook.widgets.findIndex((c: any) => c.model.id === id);
      if (kind === 'plain') {
        notebook.widgets[index('plain')].model.sharedModel.setSource(
          `print('${marker}')`
        );
      }
      notebook.activeCellIndex = index(kind);
      notebook.deselectAll();
      notebook.mode = 'command';
      notebook.node.focus();
    },
    { kind, marker }
  );
  // Let what the edit and the selection set off (the inline completer's read of the
  // kernel's names) finish first: a request still queued on the kernel would be counted.
  await page.waitForTimeout(SETTLE_MS);
  await idle(lab);
  await page.evaluate(
    ({ kind, marker }) => {
      const w = window as any;
      const notebook = w.jupyterapp.shell.currentWidget.content;
      const index = (id: string) =>
        notebook.widgets.findIndex((c: any) => c.model.id === id);
      let painted = () => {};
      const finished = new Promise<void>(resolve => (painted = resolve));
      w.__bench = {
        // Resolved by the frame's callback: waiting for it polls nothing in the page.
        finished,
        painted,
        armed: true,
        marker,
        // The generated cell is the one below the prompt, whatever was inserted.
        targetIndex: () =>
          kind === 'prompt' ? index('prompt') + 1 : index('plain'),
        key: null,
        wsStream: null,
        log: [],
        requests: [],
        dom: null,
        frame: null
      };
    },
    { kind, marker }
  );
  await page.keyboard.press('Shift+Enter');
  await page.evaluate(() => (window as any).__bench.finished);
  await idle(lab);
  const marks = await page.evaluate(() => {
    const b = (window as any).__bench;
    b.armed = false;
    return {
      log: b.log,
      key: b.key,
      wsStream: b.wsStream,
      requests: b.requests,
      dom: b.dom,
      frame: b.frame
    };
  });
  const [first, second] = marks.requests;
  let modelFirstChunk: number | null = null;
  if (kind === 'prompt') {
    const requests = await model.chatRequests();
    expect(requests).toHaveLength(1);
    modelFirstChunk = requests[0].first_chunk_at! * 1000;
  }
  if (process.env.BENCH_LOG_MESSAGES) {
    // A diagnostic: every kernel message of the sample, ms after the keydown.
    console.error(kind, JSON.stringify(marks.log));
  }
  const target = kind === 'prompt' ? second : first;
  return {
    key: marks.key,
    request: first.at,
    reply: first.reply,
    generatedRequest: kind === 'prompt' ? second.at : null,
    stream: target.stream,
    wsStream: marks.wsStream,
    dom: marks.dom,
    frame: marks.frame,
    modelFirstChunk
  };
}

test.use({ autoOpen: false });

test('Shift+Enter on a %%ai cell to the generated output painted', async ({
  lab
}) => {
  await openNotebook(lab);
  await instrument(lab.page);
  const loadBefore = os.loadavg();
  let n = 1;
  for (let i = 0; i < WARMUP; i++) {
    await sample(lab, 'prompt', n++);
    await sample(lab, 'plain', n++);
  }
  const prompt: ISample[] = [];
  const plain: ISample[] = [];
  for (let i = 0; i < RUNS; i++) {
    prompt.push(await sample(lab, 'prompt', n++));
    plain.push(await sample(lab, 'plain', n++));
  }
  const d = (xs: ISample[], f: (s: ISample) => number) => stats(xs.map(f));
  const result = {
    command: process.env.BENCH_COMMAND ?? 'bash benchmarks/shift_enter/run.sh',
    when: new Date().toISOString(),
    runs_per_kind: RUNS,
    warmup_runs_per_kind: WARMUP,
    prompt_key_to_paint: {
      what: 'Shift+Enter on the %%ai cell -> rAF after the generated cell shows its first output (model answering at once)',
      ...d(prompt, s => s.frame - s.key),
      // Where the time goes, in order.
      key_to_execute_request: d(prompt, s => s.request - s.key),
      execute_request_to_model_first_chunk: d(
        prompt,
        s => s.modelFirstChunk! - s.request
      ),
      model_first_chunk_to_prompt_reply: d(
        prompt,
        s => s.reply - s.modelFirstChunk!
      ),
      prompt_reply_to_generated_request: d(
        prompt,
        s => s.generatedRequest! - s.reply
      ),
      generated_request_to_stream: d(
        prompt,
        s => s.stream - s.generatedRequest!
      ),
      generated_request_to_stream_frame_in_page: d(
        prompt,
        s => s.wsStream - s.generatedRequest!
      ),
      stream_to_dom: d(prompt, s => s.dom - s.stream),
      dom_to_frame: d(prompt, s => s.frame - s.dom)
    },
    plain_key_to_paint: {
      what: 'Shift+Enter on a plain print() cell -> rAF after its output: the limit of one cell run here',
      ...d(plain, s => s.frame - s.key),
      key_to_execute_request: d(plain, s => s.request - s.key),
      execute_request_to_stream: d(plain, s => s.stream - s.request),
      execute_request_to_stream_frame_in_page: d(
        plain,
        s => s.wsStream - s.request
      ),
      stream_to_dom: d(plain, s => s.dom - s.stream),
      dom_to_frame: d(plain, s => s.frame - s.dom)
    },
    machine: machine(loadBefore),
    raw_ms: {
      prompt_key_to_paint: prompt.map(s => round(s.frame - s.key)),
      plain_key_to_paint: plain.map(s => round(s.frame - s.key))
    }
  };
  writeResult(result);
});
