/**
 * Every block the chat draws as code goes through the same guard as a
 * fenced block: an indented block that does not parse, indented lines of a Markdown list and a
 * raw `<pre>` are never offered to insert or run, a valid indented block is; Fix and the agent
 * never run list lines. "Open AI Chat" (the command, the palette, the sidebar icon, its
 * shortcut) puts the cursor in the chat's input, which comes before the Agent box in tab order.
 */

import { Page } from '@playwright/test';

import {
  chatNotebook,
  expect,
  fenced,
  Lab,
  model,
  openChat,
  RAIN,
  test
} from './fixtures';
import { agentCells, agentWithData, resetAgentSettings } from './agent-helpers';

test.afterEach(resetAgentSettings);

const GOOD = "total = rain['rain_mm'].sum()\nprint('total', total)";
const indent = (code: string) =>
  code
    .split('\n')
    .map(line => '    ' + line)
    .join('\n');

test('indented blocks, list lines and raw <pre> are guarded like fenced blocks', async ({
  lab
}) => {
  const file = await chatNotebook('blocks-guarded', [
    { id: 'data', source: RAIN },
    { id: 'after', source: 'rain.head()' }
  ]);
  await lab.openNotebook(file);
  await lab.runCell(file, 'data');
  await lab.waitForCells(
    file,
    cells => cells[0].executionCount !== null,
    'the data cell ran'
  );
  await lab.focusEditor(file, 'data');
  const answer = [
    'First try:',
    '',
    indent("totals = rain.groupby('city'"),
    '',
    'The values are:',
    '',
    indent('- 12.\n- 13.'),
    '',
    '<pre>',
    "rain['rain_mm'].sum(",
    '</pre>',
    '',
    'This one works:',
    '',
    indent(GOOD),
    ''
  ].join('\n');
  await model.script(answer);
  const panel = await openChat(lab);
  const input = panel.getByRole('textbox', { name: 'Ask AI' });
  await input.fill('Add up the rain');
  await input.press('Enter');
  await expect(panel.getByRole('button', { name: 'Send' })).toBeVisible({
    timeout: 30_000
  });
  const reply = panel.locator('.jp-Chapyter-chatMessage.jp-mod-assistant');
  await expect(reply).toContainText('This one works');
  const blocks = reply.locator('.jp-Chapyter-codeBlock');
  await expect(blocks).toHaveCount(3);

  // The indented block that does not parse: the server's verdict, Copy only.
  const broken = blocks.nth(0);
  await expect(broken.locator('pre')).toHaveText(
    "totals = rain.groupby('city'"
  );
  await expect(broken.getByRole('button', { name: /Insert/ })).toHaveCount(0);
  await expect(broken).toContainText(
    "Not offered to run: it does not parse (line 1: '(' was never closed)."
  );
  // The list lines parse (negative numbers), yet they are a list: Copy only.
  const list = blocks.nth(1);
  await expect(list.locator('pre')).toHaveText('- 12.\n- 13.');
  await expect(list.getByRole('button', { name: /Insert/ })).toHaveCount(0);
  await expect(list).toContainText(
    'Not offered to run: it is a Markdown list, not code.'
  );
  await expect(list.getByRole('button', { name: 'Copy' })).toBeVisible();
  // Raw <pre> is text: no buttons at all.
  const raw = reply.locator('.jp-Chapyter-rawHtml');
  await expect(raw).toContainText("rain['rain_mm'].sum(");
  await expect(raw.getByRole('button')).toHaveCount(0);
  await lab.screenshot('blocks-01-guarded', panel);

  // The valid indented block passed the same guard: offered, and runs as shown.
  const good = blocks.nth(2);
  await expect(good).not.toContainText('Not offered');
  await good.getByRole('button', { name: 'Insert and run' }).click();
  const cells = await lab.waitForCells(
    file,
    cells => cells.some(c => c.source === GOOD && c.executionCount !== null),
    'the indented block was inserted and ran'
  );
  expect(cells.map(c => c.id).slice(0, 1)).toEqual(['data']);
  const inserted = cells.find(c => c.source === GOOD)!;
  expect(cells.indexOf(inserted)).toBe(1);
  expect(inserted.outputs.map(o => o.text).join('')).toContain('total 1501');
  expect(cells.filter(c => c.source.includes('- 12.'))).toHaveLength(0);
});

test('Fix and the agent never run list lines', async ({ lab }) => {
  // Fix: an answer whose only "code" is indented list lines holds no code.
  const file = await lab.aiNotebook('blocks-fix', [
    { id: 'bad', source: 'print(undefined_zz + 1)' }
  ]);
  await lab.runCell(file, 'bad');
  const cell = await lab.cellLocator(file, 'bad');
  const bar = cell.locator('.jp-Chapyter-errorActions');
  await model.script(`Cell: bad\n\n${indent('- 12.\n- 13.')}\n`);
  await bar.getByRole('button', { name: 'Fix', exact: true }).click({
    timeout: 60_000
  });
  await expect(bar.locator('.jp-Chapyter-errorStatus')).toContainText(
    'holds no code',
    { timeout: 30_000 }
  );
  await expect(cell.locator('.jp-Chapyter-review')).toHaveCount(0);
  // A fenced block of list lines is refused by the same guard.
  await model.script(`Cell: bad\n${fenced('- 12.\n- 13.')}\nThe values.`);
  await bar.getByRole('button', { name: 'Fix', exact: true }).click();
  await expect(bar.locator('.jp-Chapyter-errorStatus')).toContainText(
    "The model's proposal is not offered: it is a Markdown list, not code.",
    { timeout: 30_000 }
  );
  await expect(cell.locator('.jp-Chapyter-review')).toHaveCount(0);
  expect((await lab.cell(file, 'bad')).source).toBe('print(undefined_zz + 1)');

  // The agent, never asking: a run_code step of list lines is refused, nothing is inserted.
  await model.script({
    tool_calls: [
      {
        name: 'run_code',
        arguments: { code: '- 12.\n- 13.', purpose: 'List the values' }
      }
    ]
  });
  const agent = await agentWithData(lab, 'blocks-agent', 'Never ask');
  const input = agent.panel.getByRole('textbox', { name: 'Ask AI' });
  await input.fill('List the rain values');
  await input.press('Enter');
  await expect(agent.panel).toContainText(
    "Stopped: the model's code was not run: it is a Markdown list, not code.",
    { timeout: 60_000 }
  );
  await expect(agent.panel.getByRole('button', { name: 'Send' })).toBeVisible();
  expect(agentCells(await lab.cells(agent.file))).toHaveLength(0);
  await lab.screenshot('blocks-02-agent-refused', agent.panel);
});

/** What has the keyboard focus: its aria-label, else its tag. */
async function focused(page: Page): Promise<string> {
  return page.evaluate(() => {
    const active = document.activeElement as HTMLElement | null;
    return active?.getAttribute('aria-label') || active?.tagName || '';
  });
}

/** Put the keyboard in the notebook's first cell and hide the chat (collapse its side). */
async function awayFromChat(lab: Lab, file: string, id: string) {
  await lab.focusEditor(file, id);
  await lab.command('application:toggle-right-area');
  await expect(lab.page.locator('#jp-chapyter-chat')).toBeHidden();
  await lab.focusEditor(file, id);
  expect(await focused(lab.page)).not.toBe('Ask AI');
}

test('Open AI Chat puts the cursor in the input, before the Agent box in tab order', async ({
  lab
}) => {
  const file = await chatNotebook('blocks-keyboard', [
    { id: 'data', source: RAIN }
  ]);
  await lab.openNotebook(file);
  const page = lab.page;
  const chat = page.locator('#jp-chapyter-chat');
  const input = chat.getByRole('textbox', { name: 'Ask AI' });

  // The command (what the palette runs).
  await lab.command('chapyter-ext:open-chat');
  await expect(input).toBeFocused();

  // The command palette, by name.
  await awayFromChat(lab, file, 'data');
  await page.keyboard.press('Control+Shift+C');
  const palette = page.locator('#command-palette input');
  await expect(palette).toBeFocused();
  await palette.fill('Open AI Chat');
  await page.keyboard.press('Enter');
  await expect(input).toBeFocused();

  // The documented shortcut, from inside a cell's editor.
  await awayFromChat(lab, file, 'data');
  await page.keyboard.press('Control+Alt+C');
  await expect(chat).toBeVisible();
  await expect(input).toBeFocused();

  // The sidebar icon.
  await awayFromChat(lab, file, 'data');
  await page.locator('.jp-SideBar [data-id="jp-chapyter-chat"]').click();
  await expect(input).toBeFocused();
  await lab.screenshot('blocks-03-focused', chat);

  // Tab order: from the message list, Tab reaches the input before the Agent box.
  const toggle = chat.getByRole('checkbox', { name: 'Agent mode' });
  await expect(toggle).toBeEnabled();
  await chat.getByRole('log', { name: 'Messages' }).focus();
  const order: string[] = [];
  for (let i = 0; i < 30; i++) {
    await page.keyboard.press('Tab');
    const name = await focused(page);
    order.push(name);
    if (name === 'Agent mode') {
      break;
    }
  }
  expect(order).toContain('Agent mode');
  expect(order.indexOf('Ask AI')).toBeGreaterThanOrEqual(0);
  expect(order.indexOf('Ask AI')).toBeLessThan(order.indexOf('Agent mode'));
  // And the policy select follows the box once agent mode is on.
  await toggle.check();
  const policy = chat.getByRole('combobox', { name: 'Approval policy' });
  await input.focus();
  const after: string[] = [];
  for (let i = 0; i < 10; i++) {
    await page.keyboard.press('Tab');
    after.push(await focused(page));
    if (after[after.length - 1] === 'Approval policy') {
      break;
    }
  }
  await expect(policy).toBeFocused();
  expect(after.indexOf('Agent mode')).toBeLessThan(
    after.indexOf('Approval policy')
  );
});
