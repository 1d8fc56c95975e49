/**
 * Outside agents' tokens, from the command palette's "Outside Agents (MCP Tokens)": a token
 * made with a name shows its secret once with the `mcpServers` configuration, the list names
 * it, and Revoke removes it; the server refuses the revoked token.
 */

import { expect, test } from './fixtures';

test('a token is made, shown once with its configuration, and revoked', async ({
  lab
}) => {
  const page = lab.page;
  await page.evaluate(() =>
    (window as any).jupyterapp.commands.execute('chapyter-ext:outside-agents')
  );
  const name = page.getByLabel('Token name', { exact: false }).first();
  await name.fill('claude-code');
  await page.getByRole('button', { name: /create/i }).click();
  const secret = page.getByLabel('Token claude-code');
  await expect(secret).toBeVisible();
  const token =
    ((await secret.textContent()) ?? '').trim() || (await secret.inputValue());
  expect(token).toMatch(/^chx-/);
  await expect(page.getByLabel('mcpServers configuration')).toContainText(
    'chapyter-ext/mcp'
  );
  await lab.screenshot('outside-tokens-made');

  const mcp = `${lab.server.url}/chapyter-ext/mcp`;
  const accepted = await fetch(mcp, {
    method: 'POST',
    headers: {
      Authorization: `Bearer ${token}`,
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream'
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' })
  });
  expect(accepted.status).not.toBe(401);
  expect(accepted.status).not.toBe(403);

  await page.getByRole('button', { name: 'Revoke claude-code' }).click();
  await expect(
    page.getByRole('button', { name: 'Revoke claude-code' })
  ).toHaveCount(0);
  await lab.screenshot('outside-tokens-revoked');
  const refused = await fetch(mcp, {
    method: 'POST',
    headers: {
      Authorization: `Bearer ${token}`,
      'Content-Type': 'application/json'
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'ping' })
  });
  expect(refused.status).toBe(403);
});
