/**
 * Fix / Explain by error outputs, the diff review in the cell (Accept, Accept and run,
 * Reject, undo), a cause in an earlier cell, and Edit with AI.
 */

import { Locator } from '@playwright/test';

import {
  expect,
  fenced,
  Lab,
  LOAD_EXT,
  model,
  outputText as text,
  test
} from './fixtures';

const BAD = 'print(undefined_zz + 1)';
const GOOD = "undefined_zz = 41\nprint('fixed', undefined_zz + 1)";

/** A notebook whose `bad` cell raised: the file and that cell's DOM. */
async function failedCell(
  lab: Lab,
  name: string
): Promise<{ file: string; cell: Locator }> {
  const file = await lab.aiNotebook(name, [{ id: 'bad', source: BAD }]);
  await lab.runCell(file, 'bad');
  return { file, cell: await lab.cellLocator(file, 'bad') };
}

function fixAnswer(id: string, code: string, why: string): string {
  return `Cell: ${id}\n${fenced(code)}\n${why}`;
}

test('Fix sends the code and traceback, shows a diff; Reject leaves the cell; Explain asks the chat', async ({
  lab
}) => {
  const { file, cell } = await failedCell(lab, 'fix-reject');
  const bar = cell.locator('.jp-Chapyter-errorActions');
  const fix = bar.getByRole('button', { name: 'Fix', exact: true });
  await expect(fix).toBeVisible({ timeout: 60_000 });
  await expect(
    bar.getByRole('button', { name: 'Explain', exact: true })
  ).toBeVisible();
  await lab.screenshot('fix-01-error-actions', cell);

  await model.script(
    fixAnswer('bad', GOOD, 'The name was never defined; define it first.')
  );
  await fix.click();
  const review = cell.locator('.jp-Chapyter-review');
  await expect(review).toBeVisible();
  await expect(
    review.locator('.jp-Chapyter-diffLine.jp-mod-added')
  ).toHaveCount(2);
  await expect(
    review.locator('.jp-Chapyter-diffLine.jp-mod-removed')
  ).toHaveText(['- ' + BAD]);
  await expect(review).toContainText('The name was never defined');
  await lab.screenshot('fix-02-diff', cell);

  const requests = await model.chatRequests();
  expect(requests).toHaveLength(1);
  const sent = JSON.stringify(requests[0].body.messages);
  expect(sent).toContain('undefined_zz + 1');
  expect(sent).toContain("name 'undefined_zz' is not defined");

  // A second proposal for the same cell is refused with one line.
  await fix.click();
  await expect(bar.locator('.jp-Chapyter-errorStatus')).toHaveText(
    'A proposal for cell [2] is already open.'
  );
  expect(await model.chatRequests()).toHaveLength(1);

  await review.getByRole('button', { name: 'Reject' }).click();
  await expect(review).toHaveCount(0);
  const after = await lab.cell(file, 'bad');
  expect(after.source).toBe(BAD);
  expect(after.chapyter).toBeNull();

  // Explain: the chat opens and streams an answer to "Explain why cell [2] failed".
  await model.script('The name `undefined_zz` is used before it is defined.');
  await bar.getByRole('button', { name: 'Explain', exact: true }).click();
  const chat = lab.page.locator('#jp-chapyter-chat');
  await expect(chat).toContainText('Explain why cell [2] failed', {
    timeout: 30_000
  });
  await expect(chat).toContainText('is used before it is defined', {
    timeout: 30_000
  });
  const explain = (await model.chatRequests())[1];
  expect(JSON.stringify(explain.body.messages)).toContain('NameError');
  await lab.screenshot('fix-03-explain');
});

test('Accept and run replaces the code in place, the re-run succeeds, undo restores', async ({
  lab
}) => {
  const { file, cell } = await failedCell(lab, 'fix-accept');
  await model.script(fixAnswer('bad', GOOD, 'Define the name first.'));
  await cell
    .locator('.jp-Chapyter-errorActions')
    .getByRole('button', { name: 'Fix', exact: true })
    .click({ timeout: 60_000 });
  const review = cell.locator('.jp-Chapyter-review');
  await review.getByRole('button', { name: 'Accept and run' }).click();
  await expect(review).toHaveCount(0);

  const cells = await lab.waitForCells(
    file,
    cells => text(cells.find(c => c.id === 'bad')).includes('fixed 42'),
    'the accepted fix ran'
  );
  const fixed = cells.find(c => c.id === 'bad')!;
  expect(fixed.source).toBe(GOOD);
  expect(fixed.outputs.some(o => o.type === 'error')).toBe(false);
  expect(fixed.chapyter).toMatchObject({ role: 'generated', source: 'fix' });
  expect(fixed.chapyter!.changes[0]).toMatchObject({ kind: 'fix' });
  expect(cells.map(c => c.id)).toEqual(['load', 'bad']);
  await expect(cell.locator('.jp-Chapyter-errorActions')).toHaveCount(0);
  // Where the proposal was: what Undo of the run will restore (the kernel's snapshot).
  const undoBar = cell.getByRole('group', { name: 'Undo the accepted fix' });
  await expect(undoBar).toContainText('Undo removes undefined_zz', {
    timeout: 30_000
  });
  await lab.screenshot('fix-04-accepted', cell);

  await lab.focusEditor(file, 'bad');
  await lab.page.keyboard.press('Control+z');
  await expect.poll(async () => (await lab.cell(file, 'bad')).source).toBe(BAD);

  // Undo of the run: the name it created is gone; the code, edited since, stays.
  await undoBar
    .getByRole('button', { name: 'Undo the accepted fix and its run' })
    .click();
  await expect(undoBar).toContainText('Removed undefined_zz.', {
    timeout: 30_000
  });
  await expect(undoBar).toContainText('edited since: left as it is');
  await undoBar.getByRole('button', { name: 'Dismiss' }).click();
  await expect(undoBar).toHaveCount(0);
});

test('a cause in an earlier cell is proposed there', async ({ lab }) => {
  const file = await lab.aiNotebook('fix-related', [
    { id: 'make', source: "sales = {'amount': 1}" },
    { id: 'use', source: "print(sales['amount_usd'])" }
  ]);
  await lab.runCell(file, 'make');
  await lab.runCell(file, 'use');
  const use = await lab.cellLocator(file, 'use');
  const fixed = "sales = {'amount': 1, 'amount_usd': 1.1}";
  await model.script(
    fixAnswer(
      'make',
      fixed,
      'The key is never created; add it where the dict is made.'
    )
  );
  await use
    .locator('.jp-Chapyter-errorActions')
    .getByRole('button', { name: 'Fix', exact: true })
    .click({ timeout: 60_000 });
  const make = await lab.cellLocator(file, 'make');
  const review = make.locator('.jp-Chapyter-review');
  await expect(review).toBeVisible();
  await expect(use.locator('.jp-Chapyter-review')).toHaveCount(0);
  await expect(use.locator('.jp-Chapyter-errorStatus')).toContainText(
    'The cause is in cell [2]'
  );
  const sent = JSON.stringify((await model.chatRequests())[0].body.messages);
  expect(sent).toContain("sales = {'amount': 1}");
  expect(sent).toContain('make');
  await lab.screenshot('fix-05-related');
  await review.getByRole('button', { name: 'Accept', exact: true }).click();
  expect((await lab.cell(file, 'make')).source).toBe(fixed);
});

test('Edit with AI asks for an instruction and shows a diff', async ({
  lab
}) => {
  const loop = 'total = 0\nfor v in [1, 2, 3]:\n    total += v';
  const file = await lab.newNotebook('fix-edit', [
    { id: 'load', source: LOAD_EXT },
    { id: 'loop', source: loop }
  ]);
  await lab.focusEditor(file, 'loop');
  await model.script(
    fixAnswer('loop', 'total = sum([1, 2, 3])', 'sum() does the loop.')
  );
  await lab.command('chapyter-ext:edit-cell', {}, false);
  const dialog = lab.page.locator('.jp-Dialog');
  await dialog.locator('input').fill('vectorise this');
  await dialog.getByRole('button', { name: 'Propose' }).click();
  const cell = await lab.cellLocator(file, 'loop');
  const review = cell.locator('.jp-Chapyter-review');
  await expect(review).toBeVisible();
  await expect(review).toContainText('Proposed edit');
  const sent = JSON.stringify((await model.chatRequests())[0].body.messages);
  expect(sent).toContain('vectorise this');
  await lab.screenshot('fix-06-edit', cell);
  await review.getByRole('button', { name: 'Reject' }).click();
  expect((await lab.cell(file, 'loop')).source).toBe(loop);
});

test('a chat code block like an existing cell offers Apply to the Nth cell, as a diff', async ({
  lab
}) => {
  const loop = 'total = 0\nfor v in [1, 2, 3]:\n    total += v\nprint(total)';
  const better =
    'total = 0\nfor v in [1, 2, 3, 4]:\n    total += v\nprint(total)';
  const file = await lab.newNotebook('fix-apply', [
    { id: 'load', source: LOAD_EXT },
    { id: 'loop', source: loop }
  ]);
  await lab.focusEditor(file, 'loop');
  await model.script(`Add 4 to the list:\n\n${fenced(better)}`);
  await lab.command('chapyter-ext:ask-chat', { text: 'include 4 too' });
  const chat = lab.page.locator('#jp-chapyter-chat');
  const apply = chat.getByRole('button', { name: 'Apply to the 2nd cell' });
  await expect(apply).toBeVisible({ timeout: 30_000 });
  await apply.click();
  const cell = await lab.cellLocator(file, 'loop');
  const review = cell.locator('.jp-Chapyter-review');
  await expect(review).toBeVisible();
  await expect(review.locator('.jp-mod-added')).toHaveText([
    '+ for v in [1, 2, 3, 4]:'
  ]);
  await lab.screenshot('fix-07-apply');
  await review.getByRole('button', { name: 'Accept', exact: true }).click();
  const after = await lab.cell(file, 'loop');
  expect(after.source).toBe(better);
  expect(after.id).toBe('loop');
  expect(after.chapyter!.changes[0]).toMatchObject({ kind: 'edit' });
});

test('what fails the guard rails is never offered: a broken fix is one line, a broken block is Copy only', async ({
  lab
}) => {
  const { file, cell } = await failedCell(lab, 'fix-guarded');
  const bar = cell.locator('.jp-Chapyter-errorActions');

  // A proposal that does not parse: no diff to accept, one line saying so.
  await model.script(fixAnswer('bad', 'print(undefined_zz + 1', 'Fixed.'));
  await bar.getByRole('button', { name: 'Fix', exact: true }).click({
    timeout: 60_000
  });
  await expect(bar.locator('.jp-Chapyter-errorStatus')).toHaveText(
    "The model's proposal is not offered: it does not parse " +
      "(line 1: '(' was never closed). Try again."
  );
  await expect(cell.locator('.jp-Chapyter-review')).toHaveCount(0);
  expect((await lab.cell(file, 'bad')).source).toBe(BAD);

  // In the chat, the server's verdict decides each block's buttons.
  await model.script(
    `Either:\n\n${fenced(GOOD)}\n\nor:\n\n${fenced('print(undefined_zz')}`
  );
  await lab.command('chapyter-ext:ask-chat', { text: 'how do I fix it?' });
  const chat = lab.page.locator('#jp-chapyter-chat');
  const blocks = chat.locator('.jp-Chapyter-codeBlock');
  await expect(blocks).toHaveCount(2, { timeout: 30_000 });
  await expect(
    blocks.nth(0).getByRole('button', { name: 'Insert and run' })
  ).toBeVisible();
  const broken = blocks.nth(1);
  await expect(broken.getByRole('button', { name: 'Copy' })).toBeVisible();
  await expect(broken.getByRole('button', { name: /Insert/ })).toHaveCount(0);
  await expect(broken).toContainText(
    "Not offered to run: it does not parse (line 1: '(' was never closed)."
  );
  await lab.screenshot('fix-08-guarded', chat);
});
