/**
 * Outside agents' tokens, reached from the AI Chat (`/agents`) and the command palette: a
 * main-area tab holding {@link OutsideTokensView} (docs/outside-agents.md). A tab, not a
 * dialog: a dialog takes Enter for its own buttons, which the form and its buttons need.
 */

import {
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import {
  Clipboard,
  ICommandPalette,
  MainAreaWidget
} from '@jupyterlab/apputils';

import { IChatExtension } from '../chat/tokens';
import { OutsideTokensView } from './tokensView';

/** The plugin's id. */
export const OUTSIDE_TOKENS_PLUGIN_ID = 'chapyter-ext:outside-tokens';

/** The command that opens the tokens. */
export const OUTSIDE_TOKENS_COMMAND = 'chapyter-ext:outside-agents';

/** Outside agents' tokens in the AI Chat. */
const outsideTokensPlugin: JupyterFrontEndPlugin<void> = {
  id: OUTSIDE_TOKENS_PLUGIN_ID,
  description:
    'Outside agents: the tokens MCP clients use to work in the open notebooks.',
  autoStart: true,
  optional: [IChatExtension, ICommandPalette],
  activate: (
    app: JupyterFrontEnd,
    chat: IChatExtension | null,
    palette: ICommandPalette | null
  ): void => {
    let tab: MainAreaWidget<OutsideTokensView> | null = null;
    // One tab; closing it forgets a new token's secret with it.
    const open = (): void => {
      if (!tab || tab.isDisposed) {
        const view = new OutsideTokensView({
          copy: text => Clipboard.copyToSystem(text)
        });
        tab = new MainAreaWidget({ content: view });
        tab.id = 'jp-Chapyter-outsideAgents';
        tab.title.label = 'Outside agents';
        tab.title.caption = 'Tokens of the MCP clients that use this server';
        tab.title.closable = true;
        app.shell.add(tab, 'main');
      }
      app.shell.activateById(tab.id);
    };
    app.commands.addCommand(OUTSIDE_TOKENS_COMMAND, {
      label: 'Outside Agents (MCP Tokens)',
      caption: 'Create and revoke the tokens MCP clients use',
      describedBy: { args: { type: 'object', properties: {} } },
      execute: open
    });
    palette?.addItem({ command: OUTSIDE_TOKENS_COMMAND, category: 'AI' });
    chat?.addSlashCommand({
      name: 'agents',
      description: 'Outside agents (MCP): create, copy and revoke their tokens',
      run: () => open()
    });
  }
};

/** The outside agents' token plugins, for the extension's entry point. */
export default [outsideTokensPlugin];
