/**
 * An outside agent drives the open notebook: a Python script with the official `mcp` SDK
 * client (streamable HTTP, the Jupyter token as its bearer token, named "claude-code") calls
 * `run_code`; the page relays it to the AI Chat as a card naming the client with exactly the
 * code; Approve inserts that code as a new cell below the given one, runs it in the
 * notebook's kernel, and the script prints the output. Reject: no cell, and the script gets
 * the refusal.
 */

import { spawn } from 'child_process';
import * as path from 'path';

import { python } from '../harness/servers';
import {
  chatNotebook,
  expect,
  Lab,
  openChat,
  outputText,
  test
} from './fixtures';

const AGENT = path.join(__dirname, 'outside_agent.py');

/** What the script printed: the tool's result. */
interface IAgentResult {
  is_error: boolean;
  text: string;
  images: number;
}

/** Start the script calling `tool` with `args`; its printed result once it exits. */
function callTool(lab: Lab, tool: string, args: object): Promise<IAgentResult> {
  const url = `${lab.server.url}/chapyter-ext/mcp`;
  const child = spawn(python(), [
    AGENT,
    url,
    lab.server.token,
    tool,
    JSON.stringify(args)
  ]);
  let out = '';
  let err = '';
  child.stdout.on('data', chunk => (out += chunk));
  child.stderr.on('data', chunk => (err += chunk));
  return new Promise((resolve, reject) => {
    child.on('close', code => {
      const line = out.trim().split('\n').pop() ?? '';
      try {
        resolve(JSON.parse(line));
      } catch {
        reject(new Error(`the agent script failed (${code}): ${err || out}`));
      }
    });
  });
}

/** A notebook whose first cell defines `x`, open and run, with the chat about it. */
async function openWithX(lab: Lab, name: string) {
  const file = await chatNotebook(name, [{ id: 'first', source: 'x = 6 * 7' }]);
  await lab.openNotebook(file);
  await lab.runCell(file, 'first');
  await lab.waitForCells(
    file,
    cells => cells[0].executionCount !== null,
    'the first cell ran'
  );
  await lab.waitForKernelIdle(file);
  const panel = await openChat(lab);
  return { file, panel };
}

const CODE = "print('answer', x)";

test('an outside agent runs code after the user approves it in the chat', async ({
  lab
}) => {
  const { file, panel } = await openWithX(lab, 'outside-approve');
  const result = callTool(lab, 'run_code', {
    notebook: file,
    code: CODE,
    below_cell_id: 'first'
  });

  const card = panel.locator('.jp-Chapyter-outsideCard');
  await expect(card).toBeVisible({ timeout: 60_000 });
  await expect(card).toContainText('claude-code wants to run this cell');
  await expect(card.getByLabel('The code that would run')).toHaveText(CODE);
  await lab.screenshot('outside-agent-card', panel);
  // Nothing ran before the approval.
  expect((await lab.cells(file)).length).toBe(1);

  // Keyboard reachable: Approve answered with Enter.
  const approve = card.getByRole('button', { name: 'Approve' });
  await approve.focus();
  await lab.page.keyboard.press('Enter');

  const answer = await result;
  expect(answer.is_error).toBe(false);
  expect(answer.text).toContain('answer 42');
  const cells = await lab.waitForCells(
    file,
    cells => cells.length === 2 && cells[1].executionCount !== null,
    'the outside cell ran'
  );
  expect(cells[1].source).toBe(CODE);
  expect(outputText(cells[1])).toContain('answer 42');
  expect(cells[1].chapyter).toMatchObject({
    generated_by: 'outside',
    client: 'claude-code 1.2'
  });
  await expect(card).toContainText('Done');
  await lab.screenshot('outside-agent-ran');
});

test('an outside agent gets a refusal when the user rejects', async ({
  lab
}) => {
  const { file, panel } = await openWithX(lab, 'outside-reject');
  const result = callTool(lab, 'run_code', { notebook: file, code: CODE });

  const card = panel.locator('.jp-Chapyter-outsideCard');
  await expect(card).toContainText('claude-code wants to run this cell', {
    timeout: 60_000
  });
  await card.getByRole('button', { name: 'Reject' }).click();

  const answer = await result;
  expect(answer.text).toContain('rejected');
  expect((await lab.cells(file)).map(c => c.source)).toEqual(['x = 6 * 7']);
  await lab.screenshot('outside-agent-rejected', panel);
});
