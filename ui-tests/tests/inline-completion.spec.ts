/**
 * Inline completion (ghost text) through JupyterLab's own inline completer: typing in a code
 * cell shows a suggestion from the loopback model, Tab accepts it, typing on cancels the
 * pending request (the model sees the connection close), a failing model says so in the
 * status bar and nowhere else, and the API key never reaches the page.
 */

import { Page } from '@playwright/test';

import {
  expect,
  FAKE_KEY as API_KEY,
  IRecordedRequest,
  jupyterApi,
  Lab,
  model,
  test
} from './fixtures';

const WEATHER =
  "import pandas as pd\nweather = pd.DataFrame({'city': ['Oslo', 'Lima'], 'temp_c': [3, 19]})";

/** The model's requests whose prompt has `text` right before the cursor. */
async function requestsAt(text: string): Promise<IRecordedRequest[]> {
  return (await model.requests()).filter(r =>
    JSON.stringify(r.body ?? '').includes(`${text}<CURSOR>`)
  );
}

/** Everything the page received from chapyter-ext's routes, as text. */
function watchResponses(page: Page): string[] {
  const bodies: string[] = [];
  page.on('response', async response => {
    if (response.url().includes('/chapyter-ext/')) {
      try {
        bodies.push(`${response.url()} ${await response.text()}`);
      } catch {
        // An aborted stream has no body to read.
      }
    }
  });
  return bodies;
}

const INLINE_SETTING =
  '/lab/api/settings/@jupyterlab/completer-extension:inline-completer';

/** The run's other specs complete on demand only (global-setup); these tests type. */
async function setTrigger(trigger: 'automatic' | 'onDemand'): Promise<void> {
  await jupyterApi('PUT', INLINE_SETTING, {
    raw: JSON.stringify({
      providers: { '@chapyter-ext/inline-completion': { trigger } }
    })
  });
}

test.beforeAll(async () => {
  await setTrigger('automatic');
});

test.afterAll(async () => {
  await setTrigger('onDemand');
});

async function notebookWithData(lab: Lab, name: string): Promise<string> {
  const file = await lab.newNotebook(name, [
    { id: 'data', source: WEATHER },
    { id: 'work', source: '' }
  ]);
  await lab.runCell(file, 'data');
  await lab.waitForCells(
    file,
    cells => cells[0].executionCount !== null,
    'the data cell ran'
  );
  await lab.waitForKernelIdle(file);
  return file;
}

test('typing shows ghost text from the model and Tab accepts it', async ({
  lab
}) => {
  const page = lab.page;
  const responses = watchResponses(page);
  const sentByPage: string[] = [];
  page.on('request', request => {
    if (request.url().includes('/chapyter-ext/complete')) {
      sentByPage.push(
        JSON.stringify(request.headers()) + (request.postData() ?? '')
      );
    }
  });
  await model.route('weather.gro<CURSOR>', {
    content: "upby('city').temp_c.mean()",
    chunk_size: 6,
    chunk_delay: 0.05
  });
  const file = await notebookWithData(lab, 'inline-accept');

  await lab.focusEditor(file, 'work');
  await page.keyboard.type('weather.gro', { delay: 20 });
  const ghost = page.locator('.jp-GhostText');
  await expect(ghost).toContainText("upby('city').temp_c.mean()", {
    timeout: 20_000
  });
  await lab.screenshot('inline-completion-ghost');

  await page.keyboard.press('Tab');
  await lab.waitForCells(
    file,
    cells => cells[1].source === "weather.groupby('city').temp_c.mean()",
    'the suggestion accepted into the cell'
  );
  // Its ghost text is gone (the edit may ask for a next suggestion, which is not this one).
  await expect(ghost.filter({ hasText: "upby('city')" })).toHaveCount(0);

  // The prompt had the code around the cursor, the cell above and the kernel's columns.
  const [sent] = await requestsAt('weather.gro');
  const prompt = JSON.stringify(sent.body);
  expect(prompt).toContain('columns: city, temp_c');
  expect(prompt).toContain('import pandas as pd');
  expect(sent.body.max_tokens).toBeLessThanOrEqual(64);
  // The key is used by the server, and never reaches the page.
  expect(sent.headers['authorization']).toBe(`Bearer ${API_KEY}`);
  expect(sentByPage.length).toBeGreaterThan(0);
  for (const text of [...sentByPage, ...responses, await page.content()]) {
    expect(text).not.toContain(API_KEY);
  }
});

test('typing on cancels the pending request', async ({ lab }) => {
  const page = lab.page;
  // The model takes 20 s to answer this one: only a cancellation ends it sooner.
  await model.route('slow_sum<CURSOR>', { content: '(values)', delay: 20 });
  const file = await notebookWithData(lab, 'inline-cancel');

  await lab.focusEditor(file, 'work');
  await page.keyboard.type('slow_sum', { delay: 20 });
  await expect
    .poll(async () => (await requestsAt('slow_sum')).length, {
      message: 'the request reached the model',
      timeout: 20_000
    })
    .toBe(1);
  await page.keyboard.type('(');
  await expect
    .poll(async () => (await requestsAt('slow_sum'))[0].disconnected, {
      message: 'the model saw the request cancelled',
      timeout: 10_000
    })
    .toBe(true);
  await expect(page.locator('.jp-GhostText')).not.toContainText('(values)');
  expect(await lab.cell(file, 'work')).toMatchObject({ source: 'slow_sum(' });
});

test('a failing model is silent in the editor and shown in the status bar', async ({
  lab
}) => {
  const page = lab.page;
  await model.route('broken<CURSOR>', { status: 500, error: 'model crashed' });
  const file = await notebookWithData(lab, 'inline-failing');
  const status = page.locator('.jp-Chapyter-completionStatus');
  await expect(status).toBeHidden();

  await lab.focusEditor(file, 'work');
  await page.keyboard.type('broken', { delay: 20 });
  await expect(status).toBeVisible({ timeout: 20_000 });
  await expect(status).toHaveAttribute('title', /model crashed/);
  await expect(page.locator('.jp-Dialog')).toHaveCount(0);
  await expect(page.locator('.jp-GhostText')).toHaveCount(0);
  await lab.screenshot('inline-completion-failing');
  expect(await lab.cell(file, 'work')).toMatchObject({ source: 'broken' });
});

test('on demand only: nothing is asked while typing, Alt+\\ asks', async ({
  lab
}) => {
  const page = lab.page;
  await setTrigger('onDemand');
  try {
    await model.route('weather.so<CURSOR>', { content: "rt_values('temp_c')" });
    await lab.reload();
    const file = await notebookWithData(lab, 'inline-on-demand');

    await lab.focusEditor(file, 'work');
    await page.keyboard.type('weather.so', { delay: 20 });
    await page.waitForTimeout(1500); // well past the debouncer delay
    expect(await requestsAt('weather.so')).toHaveLength(0);
    await expect(page.locator('.jp-GhostText')).toHaveCount(0);

    await page.keyboard.press('Alt+\\');
    await expect(page.locator('.jp-GhostText')).toContainText(
      "rt_values('temp_c')",
      { timeout: 20_000 }
    );
    expect(await requestsAt('weather.so')).toHaveLength(1);
  } finally {
    await setTrigger('automatic');
  }
});
