/**
 * The chat in a notebook of 1,000 cells with outputs answers, sends a body no larger than
 * with 10 cells, and its context follows the notebook as the user works: a new error, its output cleared,
 * the error cell deleted (the snapshot no longer walks every cell, it follows them).
 */

import { Locator, Page } from '@playwright/test';

import { bigCellId, createBigNotebook, errorCellIndex } from './bigNotebook';
import { chatAnswers, expect, Lab, model, openChat, test } from './fixtures';

const ANSWER = 'Look at **the KeyError**: the column is `rain_mm`.';

/** The `POST chat` bodies the page sent, as parsed JSON with their size in bytes. */
function recordChatBodies(page: Page): { bytes: number; body: any }[] {
  const bodies: { bytes: number; body: any }[] = [];
  page.on('request', request => {
    if (
      request.method() === 'POST' &&
      new URL(request.url()).pathname.endsWith('/chapyter-ext/chat')
    ) {
      const text = request.postData() ?? '';
      bodies.push({ bytes: Buffer.byteLength(text), body: JSON.parse(text) });
    }
  });
  return bodies;
}

/** Open the big notebook, run its first cell (the kernel's variables), last cell active. */
async function openBig(lab: Lab, file: string, count: number): Promise<void> {
  await lab.openNotebook(file);
  await lab.runCell(file, bigCellId(0));
  await lab.waitForCells(
    file,
    cells => cells[0].executionCount !== null && cells[0].outputs.length === 0,
    'the first cell ran'
  );
  await lab.waitForKernelIdle(file);
  await onCell(lab, file, count - 1);
}

/** Send in a new chat and wait for the whole answer; the body posted and the model's text. */
async function send(
  lab: Lab,
  panel: Locator,
  bodies: { bytes: number; body: any }[]
): Promise<{ bytes: number; body: any; modelText: string }> {
  await panel.getByRole('button', { name: 'New chat' }).click();
  await expect(panel.locator('.jp-Chapyter-chatMessage')).toHaveCount(0);
  await model.reset();
  await model.script(ANSWER);
  const sent = bodies.length;
  const input = panel.getByRole('textbox', { name: 'Ask AI' });
  await input.fill('Why does my cell fail?');
  // Send is enabled once the new chat is ready (Enter before that sends nothing).
  await panel.getByRole('button', { name: 'Send' }).click();
  await expect(chatAnswers(panel).last()).toContainText('the column is');
  await expect(panel.getByRole('button', { name: 'Send' })).toBeVisible();
  expect(bodies).toHaveLength(sent + 1);
  const requests = await model.chatRequests();
  expect(requests).toHaveLength(1);
  const modelText = (requests[0].body.messages as { content?: unknown }[])
    .map(m => (typeof m.content === 'string' ? m.content : ''))
    .join('\n');
  return { ...bodies[sent], modelText };
}

/**
 * Make the big notebook's cell `index` active (JupyterLab renders a long notebook's cells
 * lazily: one far down may not be on the page to click yet) and run command `id` on it.
 */
async function onCell(
  lab: Lab,
  file: string,
  index: number,
  id = ''
): Promise<void> {
  await lab.page.evaluate(
    async ({ file, index, id }) => {
      const app = (window as any).jupyterapp;
      const panel = Array.from(app.shell.widgets('main')).find(
        (w: any) => w.context?.path === file
      ) as any;
      app.shell.activateById(panel.id);
      panel.content.activeCellIndex = index;
      if (id) {
        await app.commands.execute(id);
      }
    },
    { file, index, id }
  );
}

/** Give cell `index` the source `code`, run it, and wait until it shows error `ename`. */
async function runAs(
  lab: Lab,
  file: string,
  index: number,
  code: string,
  ename: string
): Promise<void> {
  await lab.setSource(file, bigCellId(index), code);
  await onCell(lab, file, index, 'notebook:run-cell');
  await lab.waitForCells(
    file,
    cells =>
      cells
        .find(c => c.id === bigCellId(index))!
        .outputs.some(o => o.type === 'error' && o.text.includes(ename)),
    `cell ${index} shows ${ename}`
  );
  await lab.waitForKernelIdle(file);
}

test('a 1,000-cell notebook: Send answers, the body stays as small as with 10 cells, the context follows the cells', async ({
  lab
}) => {
  test.setTimeout(600_000);
  const bodies = recordChatBodies(lab.page);

  // The same notebook with 10 cells: the size to compare with.
  const small = await createBigNotebook('first-hour-big-10', 10);
  await openBig(lab, small, 10);
  let panel = await openChat(lab);
  const ten = await send(lab, panel, bodies);
  expect(ten.body.context.cell_count).toBe(10);
  expect(ten.body.context.last_error).toMatchObject({
    cell_index: errorCellIndex(10),
    ename: 'KeyError'
  });
  await lab.shutdownSessions();

  const count = 1000;
  const big = await createBigNotebook('first-hour-big-1000', count);
  await openBig(lab, big, count);
  panel = await openChat(lab);
  const first = await send(lab, panel, bodies);
  await lab.screenshot('big-notebook-answer', panel);
  const context = first.body.context;
  expect(context.cell_count).toBe(count);
  expect(context.active.index).toBe(count - 1);
  expect(context.above.map((c: any) => c.index)).toEqual([count - 2]);
  expect(context.last_error).toMatchObject({
    cell_index: errorCellIndex(count),
    cell_prompt: errorCellIndex(count) + 1,
    ename: 'KeyError'
  });
  // The body and what the model got are as large as with 10 cells (a few digits more).
  expect(first.bytes).toBeLessThan(ten.bytes * 1.1);
  expect(first.modelText.length).toBeLessThan(ten.modelText.length * 1.1);
  expect(first.modelText).toContain('KeyError');

  // The error cell runs again and fails otherwise: its new error is the last one. Its count,
  // 2, is also the one the 2nd cell was saved with, so it is not named by it.
  const middle = errorCellIndex(count);
  await runAs(lab, big, middle, "int('x')", 'ValueError');
  const again = await send(lab, panel, bodies);
  expect(again.body.context.last_error).toMatchObject({
    cell_index: middle,
    cell_prompt: null,
    ename: 'ValueError'
  });

  // A later error in the last cell is the last error now...
  await runAs(lab, big, count - 1, '1 / 0', 'ZeroDivisionError');
  const later = await send(lab, panel, bodies);
  expect(later.body.context.last_error).toMatchObject({
    cell_index: count - 1,
    ename: 'ZeroDivisionError'
  });

  // ...until its output is cleared: the middle cell's error is the last one again...
  await onCell(lab, big, count - 1, 'notebook:clear-cell-output');
  const cleared = await send(lab, panel, bodies);
  expect(cleared.body.context.last_error).toMatchObject({
    cell_index: middle,
    ename: 'ValueError'
  });

  // ...and once that cell is deleted, no error is shown anywhere.
  await onCell(lab, big, middle, 'notebook:delete-cell');
  await onCell(lab, big, count - 2);
  const deleted = await send(lab, panel, bodies);
  expect(deleted.body.context.cell_count).toBe(count - 1);
  expect(deleted.body.context.last_error).toBeNull();
  expect(deleted.modelText).not.toContain('ValueError');
});
