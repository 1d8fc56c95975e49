/**
 * A user's own config the server could not use as it is: a default model that is
 * not in its list, a policy that is not one, agent mode turned off. The extension is there
 * all the same: the chat says in one line each what the server used instead, answers with the
 * model it fell back to, and greys the Agent toggle; the server's log has the same lines.
 */

import {
  askAndWait,
  chatAnswers,
  expect,
  model,
  openChat,
  ownLab,
  ownLabPort,
  test
} from './fixtures';

const LINES = [
  "Chapyter.agent_policy must be one of ask, risky, never, not 'sometimes'; the default " +
    "'ask' is used instead.",
  "ChapyterExtApp.default_model 'gpt-5' is not one of the models ('fast', 'slow'); 'fast' " +
    'is used instead.'
];

test.describe('settings the server could not use', () => {
  const server = ownLab({
    name: 'jupyterlab-settings',
    // Not the start script's port: Playwright may start the next file's server (starter's)
    // before this one's afterAll has stopped it.
    port: ownLabPort() + 1,
    model: { url: process.env.CHAPYTER_UI_LLM_URL! },
    config: {
      // The user's own ~/.jupyter/jupyter_server_config.json.
      'jupyter_server_config.json': {
        ChapyterExtApp: {
          models: {
            fast: { model: 'fake-model' },
            slow: { model: 'fake-model-slow' }
          },
          default_model: 'gpt-5'
        },
        Chapyter: { agent: false, agent_policy: 'sometimes' }
      }
    }
  });

  test('a broken config is one line each in the chat, which still answers', async ({
    lab
  }) => {
    await model.script('Still here.');
    await lab.newNotebook('server-settings', [{ id: 'one', source: 'x = 1' }]);
    const panel = await openChat(lab);
    const notices = panel.getByRole('note', { name: "The server's settings" });
    await expect(notices.locator('.jp-Chapyter-chatServerNotice')).toHaveText(
      LINES
    );
    await expect(panel.getByRole('combobox', { name: 'Model' })).toHaveValue(
      'fast'
    );
    // Agent mode is off on this server: the toggle is greyed and says why.
    await expect(
      panel.getByRole('checkbox', { name: 'Agent mode' })
    ).toBeDisabled();
    await expect(panel.locator('.jp-Chapyter-agentToggle')).toHaveAttribute(
      'title',
      'Agent mode is turned off on this server (Chapyter.agent).'
    );
    await lab.screenshot('server-settings-notices', panel);

    await askAndWait(panel, 'Are you there?');
    await expect(chatAnswers(panel)).toContainText('Still here.');
    const asked = await model.chatRequests();
    expect(asked[asked.length - 1].body.model).toBe('fake-model');

    const log = server().output();
    for (const line of LINES) {
      expect(log).toContain(`chapyter-ext: ${line}`);
    }

    await notices
      .getByRole('button', { name: "Dismiss the server's notices" })
      .click();
    await expect(notices).toBeHidden();
  });
});
