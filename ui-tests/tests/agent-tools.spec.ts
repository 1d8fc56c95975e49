/**
 * The agent's tools beyond running code: an MCP server's tool (a real one, mcp-server-time,
 * configured in Jupyter's config path by the global setup) shown like a code step with its
 * server, tool, arguments, Run / Skip and result; a figure shown with `plt.show()` in a
 * stock kernel reaching the model as a digest; the project's rules named in the chip.
 */

import {
  agentCells,
  agentNotebook,
  agentWithData,
  openAgent,
  resetAgentSettings,
  runCode
} from './agent-helpers';
import {
  ask,
  chatAnswers,
  chatNotebook,
  expect,
  jupyterApi,
  model,
  openChat,
  test
} from './fixtures';

test.afterEach(resetAgentSettings);

test('an MCP step asks with its server, tool and arguments; Run calls it and shows the result', async ({
  lab
}) => {
  await model.script(
    {
      content: 'Let me check the clock.',
      tool_calls: [
        {
          name: 'time__get_current_time',
          arguments: { timezone: 'Asia/Tokyo' }
        }
      ]
    },
    {
      tool_calls: [
        {
          name: 'time__get_current_time',
          arguments: { timezone: 'Europe/Oslo' }
        }
      ]
    },
    'It is evening in Tokyo; I did not look up Oslo.'
  );
  const file = await agentNotebook('agent-mcp');
  await lab.openNotebook(file);
  await lab.focusEditor(file, 'data');
  const panel = await openAgent(lab, 'Ask before every run');
  // The chip says which tools the agent has: the server's records, not a list of our own.
  await expect(panel.locator('.jp-Chapyter-chatContextText')).toContainText(
    'Agent tools: run code, read a cell, list the variables'
  );
  await expect(panel.locator('.jp-Chapyter-chatContextText')).toContainText(
    'MCP servers: time'
  );
  await ask(panel, 'What time is it in Tokyo?');

  const answer = chatAnswers(panel);
  const approval = answer.getByRole('group', { name: 'Approve the step' });
  const run = approval.getByRole('button', { name: 'Run' });
  await expect(run).toBeVisible({ timeout: 90_000 });
  // What the server will call, exactly: the server, the tool, the arguments.
  await expect(answer).toContainText(
    'MCP server “time” · tool “get_current_time”'
  );
  await expect(answer.getByLabel('Arguments')).toContainText(
    '"timezone": "Asia/Tokyo"'
  );
  await expect(approval.getByRole('button', { name: 'Edit' })).toHaveCount(0);
  const steps = answer.locator('.jp-Chapyter-agentStep');
  await expect(steps.nth(0)).toContainText(
    'time · get_current_time (wants to call)'
  );
  await lab.screenshot('agent-tools-01-mcp-approval', panel);
  await run.click();

  // The second call is skipped: the model is told, nothing is called.
  await expect(answer.getByLabel('Arguments')).toContainText('Europe/Oslo', {
    timeout: 60_000
  });
  await approval.getByRole('button', { name: 'Skip' }).click();
  await expect(answer).toContainText('evening in Tokyo', { timeout: 60_000 });

  await expect(steps).toHaveCount(2);
  await expect(steps.nth(1)).toHaveClass(/jp-mod-skipped/);
  const result = steps.nth(0).locator('.jp-Chapyter-agentStepResult');
  await result.locator('summary').click();
  await expect(result.getByLabel('Result')).toContainText('Asia/Tokyo');
  await lab.screenshot('agent-tools-02-mcp-result', panel);

  // No cell was inserted: the server ran the tool, not the kernel.
  expect(agentCells(await lab.cells(file))).toHaveLength(0);
  const requests = await model.chatRequests();
  expect(requests).toHaveLength(3);
  const tools = requests[0].body.tools.map((t: any) => t.function.name);
  expect(tools).toContain('time__get_current_time');
  expect(JSON.stringify(requests[1].body.messages)).toContain('Asia/Tokyo');
  expect(JSON.stringify(requests[2].body.messages).toLowerCase()).toContain(
    'skipped'
  );
});

test('plt.show() in a stock kernel: the model gets the figure digest', async ({
  lab
}) => {
  // pyplot is first imported by the step itself, and plt.show() closes the figure in the
  // cell: the digest must still be there (no %load_ext chapyter_ext in this kernel).
  const plot =
    "import matplotlib.pyplot as plt\nplt.bar(rain['city'], rain['rain_mm'], label='rain')\n" +
    "plt.title('Rain' + ' by city')\nplt.xlabel('city')\nplt.show()";
  await model.script(runCode(plot, 'Plot the rain'), 'Oslo is the wettest.');
  const { file, panel } = await agentWithData(
    lab,
    'agent-plt-show',
    'Never ask'
  );
  await ask(panel, 'Plot the rain');
  const answer = chatAnswers(panel);
  await expect(answer).toContainText('Oslo is the wettest.', {
    timeout: 60_000
  });
  const [cell] = agentCells(await lab.cells(file));
  expect(cell.source.endsWith('plt.show()')).toBe(true);
  expect(cell.outputs.some(o => o.mimes.includes('image/png'))).toBe(true);
  const requests = await model.chatRequests();
  expect(requests).toHaveLength(2);
  const seen = JSON.stringify(requests[1].body.messages);
  expect(seen).toContain('Figure 1');
  expect(seen).toContain("title 'Rain by city'");
  expect(seen).toContain("x 'city'");
  expect(seen).not.toContain('no description of it is available');
  await lab.screenshot('agent-tools-03-plt-show', panel);
});

test("the chip names the project's rules, and the model gets them", async ({
  lab
}) => {
  await jupyterApi('PUT', '/api/contents/ruled', { type: 'directory' });
  await jupyterApi('PUT', '/api/contents/ruled/AGENTS.md', {
    type: 'file',
    format: 'text',
    content: 'Always round money to whole euros.\n'
  });
  const file = await chatNotebook('ruled/rules', [
    { id: 'data', source: 'x = 1' }
  ]);
  await model.script('Noted.');
  await lab.openNotebook(file);
  const panel = await openChat(lab);
  await expect(panel.locator('.jp-Chapyter-chatChipSummary')).toContainText(
    'Rules: ruled/AGENTS.md'
  );
  await lab.screenshot('agent-tools-04-rules-chip', panel);
  await ask(panel, 'How should I show prices?');
  await expect(chatAnswers(panel)).toContainText('Noted.', { timeout: 60_000 });
  const [request] = await model.chatRequests();
  expect(request.body.messages[0].content).toContain(
    'Always round money to whole euros.'
  );
});
