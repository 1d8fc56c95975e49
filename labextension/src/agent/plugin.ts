/**
 * The agent mode plugin: plugs agent turns into the AI Chat through {@link IChatExtension}
 * (its mode, the steps drawn in answers), drives the notebooks the turns run in, and keeps
 * the Agent toggle and policy in the chat's settings.
 */

import {
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';
import { ISettingRegistry } from '@jupyterlab/settingregistry';

import {
  ChatPluginIDs,
  DEFAULT_CHAT_SETTINGS,
  IChatExtension,
  IChatSettings
} from '../chat/tokens';
import { AgentClient } from './client';
import { AgentController } from './controller';
import { agentMode } from './mode';
import { NotebookDriver } from './notebook';
import { StepsView } from './steps';

/** The plugin's id. */
export const AGENT_PLUGIN_ID = 'chapyter-ext:agent';

function readSettings(settings: ISettingRegistry.ISettings): IChatSettings {
  return {
    ...DEFAULT_CHAT_SETTINGS,
    ...(settings.composite as Partial<IChatSettings>)
  };
}

/** Agent mode in the AI Chat. */
const agentPlugin: JupyterFrontEndPlugin<void> = {
  id: AGENT_PLUGIN_ID,
  description:
    'Agent mode in the AI Chat: the model runs code in new cells of the notebook, with approval and undo.',
  autoStart: true,
  requires: [IChatExtension, INotebookTracker],
  optional: [ISettingRegistry],
  activate: (
    app: JupyterFrontEnd,
    chat: IChatExtension,
    tracker: INotebookTracker,
    settingRegistry: ISettingRegistry | null
  ) => {
    const agent = new AgentController({
      client: new AgentClient(),
      notebook: path => {
        const found = tracker.find(p => p.context.path === path);
        return found
          ? new NotebookDriver(found, p => app.shell.activateById(p.id))
          : null;
      },
      describeModel: name => {
        const info = chat.modelInfo(name || null);
        return { model: info?.model ?? name, endpoint: info?.host };
      }
    });
    // Step links say "Cell N": follow every notebook's cells (also once it has loaded).
    const followCells = (notebook: NotebookPanel) =>
      void notebook.context.ready.then(() => {
        agent.notifyCells();
        notebook.content.model?.cells.changed.connect(() =>
          agent.notifyCells()
        );
      });
    tracker.forEach(followCells);
    tracker.widgetAdded.connect((_, notebook) => followCells(notebook));
    void chat
      .config()
      .then(config => {
        agent.setServerPolicy(config.agent?.policy, config.agent?.policy_floor);
        agent.setServerAvailable(config.features?.agent !== false);
        agent.setServerTools(config.agent?.tools, config.agent?.mcp_servers);
      })
      .catch(() => undefined);

    chat.setMode(agentMode(agent));
    chat.addMessagePart(message =>
      message.role === 'assistant'
        ? new StepsView(message, { agent, notebookPath: () => chat.notebook })
        : null
    );

    // The Agent toggle and the policy are the chat's settings, remembered per user.
    void settingRegistry
      ?.load(ChatPluginIDs.chat)
      .then(settings => {
        const apply = () => {
          const saved = readSettings(settings);
          agent.enabled = saved.agentMode;
          agent.setPolicySetting(saved.agentPolicy);
        };
        apply();
        settings.changed.connect(apply);
        agent.changed.connect(() => {
          const saved = readSettings(settings);
          if (agent.enabled !== saved.agentMode) {
            void settings.set('agentMode', agent.enabled);
          }
          if (agent.policySetting !== saved.agentPolicy) {
            void settings.set('agentPolicy', agent.policySetting);
          }
        });
      })
      .catch(reason => {
        console.warn('chapyter-ext: could not load the agent settings', reason);
      });
  }
};

/** The agent's plugins, for the extension's entry point. */
export default [agentPlugin];
