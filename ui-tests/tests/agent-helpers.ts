/** What the agent specs share: a notebook with data, the chat in agent mode. */

import { Locator } from '@playwright/test';

import {
  chatNotebook,
  expect,
  ICellInfo,
  jupyterApi,
  Lab,
  openChat,
  RAIN
} from './fixtures';

const SETTINGS = '/lab/api/settings/chapyter-ext:chat';

/** Put the chat's agent settings back, so the other specs start with a plain chat. */
export async function resetAgentSettings(): Promise<void> {
  const current = await jupyterApi('GET', SETTINGS);
  let raw: { [key: string]: unknown } = {};
  try {
    raw = JSON.parse(current.raw || '{}');
  } catch {
    // The settings file holds comments: the defaults are all that is set.
    raw = {};
  }
  delete raw.agentMode;
  delete raw.agentPolicy;
  await jupyterApi('PUT', SETTINGS, { raw: JSON.stringify(raw, null, 2) });
}

/** A run_code tool call of the fake model. */
export function runCode(code: string, purpose = '') {
  return { tool_calls: [{ name: 'run_code', arguments: { code, purpose } }] };
}

/** A notebook (`data`, then `after`) with no chat history. */
export async function agentNotebook(name: string): Promise<string> {
  return chatNotebook(name, [
    { id: 'data', source: RAIN },
    { id: 'after', source: 'rain.head()' }
  ]);
}

/**
 * A new agent notebook (see {@link agentNotebook}) opened, its data cell run, and the chat
 * open in agent mode with `policy`: the file and the chat panel.
 */
export async function agentWithData(
  lab: Lab,
  name: string,
  policy: string
): Promise<{ file: string; panel: Locator }> {
  return agentWithFirstCell(lab, await agentNotebook(name), policy);
}

/**
 * The notebook `file` opened, its first cell run, and the chat open in agent mode with
 * `policy`: the file and the chat panel.
 */
export async function agentWithFirstCell(
  lab: Lab,
  file: string,
  policy: string
): Promise<{ file: string; panel: Locator }> {
  await lab.openNotebook(file);
  const first = (await lab.cells(file))[0];
  await lab.runCell(file, first.id);
  await lab.waitForCells(
    file,
    cells => cells[0].executionCount !== null,
    'the first cell ran'
  );
  return { file, panel: await openAgent(lab, policy) };
}

/** Open the chat with agent mode on and the given policy. */
export async function openAgent(lab: Lab, policy: string): Promise<Locator> {
  const panel = await openChat(lab);
  const toggle = panel.getByRole('checkbox', { name: 'Agent mode' });
  await expect(toggle).not.toBeChecked();
  await toggle.check();
  const select = panel.getByRole('combobox', { name: 'Approval policy' });
  await expect(select).toBeVisible();
  await select.selectOption({ label: policy });
  return panel;
}

/** The cells an agent turn inserted. */
export function agentCells(cells: ICellInfo[]): ICellInfo[] {
  return cells.filter(c => c.chapyter?.source === 'agent');
}
