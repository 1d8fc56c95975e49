/**
 * @-mentions: `@` in the chat input lists the kernel's variables, the notebook's cells and
 * the server's files; each one picked is a chip, and goes with the message (the variable's
 * summary, the cell's source and outputs, the file's head) pinned ahead of the context; a chip
 * removed is not sent; after a reload the stored message still shows its chips.
 */

import type { Locator } from '@playwright/test';

import {
  chatNotebook,
  expect,
  jupyterApi,
  model,
  openChat,
  RAIN,
  test
} from './fixtures';

const CSV = 'mentions-targets.csv';
const TOTAL = "rain['rain_mm'].sum()";

/** Type `query` after `@` and pick the option whose name matches `option`. */
async function mention(
  panel: Locator,
  query: string,
  option: RegExp
): Promise<void> {
  const input = panel.getByRole('textbox', { name: 'Ask AI' });
  await input.press('End');
  await input.pressSequentially(` @${query}`);
  const menu = panel.getByRole('listbox', { name: 'Suggestions' });
  await menu.getByRole('option', { name: option }).first().click();
  await expect(menu).toBeHidden();
}

/** The pinned part of the context the model got last: what was mentioned. */
async function pinned(): Promise<string> {
  const requests = await model.chatRequests();
  const messages = requests[requests.length - 1].body.messages;
  // The message being answered (the earlier ones are the chat's history).
  const text = String(messages[messages.length - 1].content);
  const start = text.indexOf('Mentioned by the user (always sent):');
  return start < 0 ? '' : text.slice(start, text.indexOf('\n\n', start));
}

test('a variable, a cell and a file @-mentioned go with the message, and stay as chips', async ({
  lab
}) => {
  await jupyterApi('PUT', `/api/contents/${CSV}`, {
    type: 'file',
    format: 'text',
    content: 'city,target_mm\nOslo,800\nLima,20\nPune,700\n'
  });
  const file = await chatNotebook('mentions', [
    { id: 'data', source: RAIN },
    { id: 'total', source: TOTAL }
  ]);
  await lab.openNotebook(file);
  await lab.waitForKernelIdle(file);
  await lab.runCell(file, 'data');
  await lab.waitForKernelIdle(file);
  await lab.runCell(file, 'total');
  await expect(await lab.cellLocator(file, 'total')).toContainText('1501');
  await lab.waitForKernelIdle(file);

  const panel = await openChat(lab);
  await model.script('Noted.', 'Noted again.');
  const input = panel.getByRole('textbox', { name: 'Ask AI' });
  await input.fill('Compare these:');
  await mention(panel, 'rai', /^rain\b.*DataFrame/);
  await mention(panel, 'cell', /rain_mm'\]\.sum/);
  await mention(panel, 'mentions-tar', /mentions-targets\.csv/);
  const chips = panel.getByRole('list', {
    name: 'Mentions sent with the next message'
  });
  await expect(chips.getByRole('listitem')).toHaveText([
    /rain/,
    /cell \[2\]/,
    /mentions-targets\.csv/
  ]);
  await lab.screenshot('mentions-01-chips', panel);

  await input.press('Enter');
  await expect(panel.getByRole('button', { name: 'Send' })).toBeVisible();
  let sent = await pinned();
  // The variable's schema and rows, the cell's source and output, the file's head.
  expect(sent).toContain('Variable rain:');
  expect(sent).toMatch(/rain \(DataFrame\): 3 rows × 2 columns/);
  expect(sent).toContain('Oslo | 763');
  expect(sent).toContain(`Cell [2]:\n${TOTAL}\nOutputs:\n`);
  expect(sent).toMatch(/Outputs:\n(np\.int64\()?1501/);
  expect(sent).toContain(`File ${CSV} (whole file, 4 lines):`);
  expect(sent).toContain('Pune,700');
  await expect(chips.getByRole('listitem')).toHaveCount(0); // sent with that message
  const stored = panel
    .locator('.jp-Chapyter-chatMessage.jp-mod-user')
    .getByRole('list', { name: 'Mentioned' });
  await expect(stored.getByRole('listitem')).toHaveText([
    /rain/,
    /cell \[2\]/,
    /mentions-targets\.csv/
  ]);
  await lab.screenshot('mentions-02-sent', panel);

  // Mentioned again, the cell's chip removed; the context toggle off: the variable's summary
  // is read through the kernel, the removed cell is not sent.
  await input.fill('Only the data now:');
  await mention(panel, 'rai', /^rain\b.*DataFrame/);
  await mention(panel, 'cell', /rain_mm'\]\.sum/);
  await chips.getByRole('button', { name: 'Remove mention cell [2]' }).click();
  await expect(chips.getByRole('listitem')).toHaveText([/rain/]);
  await panel
    .getByRole('checkbox', { name: 'Include notebook context' })
    .uncheck();
  await input.press('End');
  await input.press('Enter');
  await expect(panel.getByRole('button', { name: 'Send' })).toBeVisible();
  sent = await pinned();
  expect(sent).toContain('Variable rain:');
  expect(sent).toContain('Oslo | 763');
  expect(sent).not.toContain('Cell [2]');
  expect(sent).not.toContain(TOTAL);

  await lab.reload();
  await lab.openNotebook(file);
  const again = await openChat(lab);
  const messages = again.locator('.jp-Chapyter-chatMessage.jp-mod-user');
  await expect(messages).toHaveCount(2);
  await expect(
    messages
      .first()
      .getByRole('list', { name: 'Mentioned' })
      .getByRole('listitem')
  ).toHaveText([/rain/, /cell \[2\]/, /mentions-targets\.csv/]);
  await expect(
    messages
      .nth(1)
      .getByRole('list', { name: 'Mentioned' })
      .getByRole('listitem')
  ).toHaveText([/rain/]);
  await lab.screenshot('mentions-03-reloaded', again);
});
