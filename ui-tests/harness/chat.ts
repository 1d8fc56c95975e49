/** The AI Chat panel: opened, asked, its answers. */

import { expect, Locator } from '@playwright/test';

import { Lab } from './lab';

/** The AI Chat panel, opened through its command (as the palette does). */
export async function openChat(lab: Lab): Promise<Locator> {
  await lab.command('chapyter-ext:open-chat');
  const panel = lab.page.getByRole('region', { name: 'AI Chat' });
  await expect(panel).toBeVisible();
  return panel;
}

/** The answers (assistant messages) in the chat panel. */
export function chatAnswers(panel: Locator): Locator {
  return panel.locator('.jp-Chapyter-chatMessage.jp-mod-assistant');
}

/** Send `text` from the chat's input, as a person does (Enter). */
export async function ask(panel: Locator, text: string): Promise<void> {
  const input = panel.getByRole('textbox', { name: 'Ask AI' });
  await input.fill(text);
  await input.press('Enter');
}

/** Send `text` and wait until the answer has ended (Send is back). */
export async function askAndWait(panel: Locator, text: string): Promise<void> {
  await ask(panel, text);
  await expect(panel.getByRole('button', { name: 'Send' })).toBeVisible();
}
