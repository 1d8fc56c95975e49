/** The chat sidebar plugin: wires the model, the notebook side and the view together. */

import {
  ILayoutRestorer,
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { ICommandPalette } from '@jupyterlab/apputils';
import { IEditorLanguageRegistry } from '@jupyterlab/codemirror';
import { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';
import { IRenderMimeRegistry } from '@jupyterlab/rendermime';
import { ISettingRegistry } from '@jupyterlab/settingregistry';

import { AgentClient } from '../agent/client';
import { AgentController } from '../agent/controller';
import { NotebookDriver } from '../agent/notebook';
import { CodeActions } from './actions';
import { ChatClient } from './client';
import { chatIcon } from './icons';
import { ChatModel } from './model';
import { NotebookContextCollector } from './notebookContext';
import {
  ChatCommandIDs,
  ChatPluginIDs,
  DEFAULT_CHAT_SETTINGS,
  IChatSettings
} from './tokens';
import { ChatPanel } from './panel';

/** How long the chip waits for the notebook to settle before reading it again, in ms. */
const CONTEXT_DEBOUNCE_MS = 300;

/** Rank of the panel among the side area's tabs. */
const SIDEBAR_RANK = 600;

function readSettings(
  settings: ISettingRegistry.ISettings | null
): IChatSettings {
  const composite = (settings?.composite ?? {}) as Partial<IChatSettings>;
  return { ...DEFAULT_CHAT_SETTINGS, ...composite };
}

/** The "AI Chat" side panel, its commands and settings. */
const chatPlugin: JupyterFrontEndPlugin<void> = {
  id: ChatPluginIDs.chat,
  description:
    'A chat in the side area that knows the active notebook and its kernel.',
  autoStart: true,
  requires: [INotebookTracker, IRenderMimeRegistry],
  optional: [
    ICommandPalette,
    ILayoutRestorer,
    ISettingRegistry,
    IEditorLanguageRegistry
  ],
  activate: (
    app: JupyterFrontEnd,
    tracker: INotebookTracker,
    rendermime: IRenderMimeRegistry,
    palette: ICommandPalette | null,
    restorer: ILayoutRestorer | null,
    settingRegistry: ISettingRegistry | null,
    languages: IEditorLanguageRegistry | null
  ) => {
    const client = new ChatClient();
    const collector = new NotebookContextCollector(tracker, client);
    const model = new ChatModel({
      client,
      context: message => collector.collect(message),
      snapshot: () => collector.snapshot()
    });
    const agent = new AgentController({
      client: new AgentClient(),
      notebook: path => {
        const found = tracker.find(p => p.context.path === path);
        return found
          ? new NotebookDriver(found, p => app.shell.activateById(p.id))
          : null;
      },
      describeModel: name => {
        const info = model.modelInfo(name || null);
        return { model: info?.model ?? name, endpoint: info?.host };
      }
    });
    model.agent = agent;
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
    void client
      .config()
      .then(config => {
        agent.setServerPolicy(config.agent?.policy);
        agent.setServerTools(config.agent?.tools, config.agent?.mcp_servers);
      })
      .catch(() => undefined);
    const panel = new ChatPanel({
      model,
      rendermime,
      languages,
      actions: new CodeActions(tracker),
      agent
    });
    panel.id = 'jp-chapyter-chat';
    panel.title.icon = chatIcon;
    panel.title.caption = 'AI Chat';

    let side: IChatSettings['side'] = DEFAULT_CHAT_SETTINGS.side;
    app.shell.add(panel, side, { rank: SIDEBAR_RANK, type: 'AI Chat' });
    restorer?.add(panel, 'chapyter-ext-chat');

    const applySettings = (settings: IChatSettings) => {
      collector.settings = settings;
      model.contextDefault = settings.sendContext;
      model.preferredModel = settings.model;
      agent.enabled = settings.agentMode;
      agent.setPolicySetting(settings.agentPolicy);
      if (settings.side !== side) {
        const wasVisible = panel.isVisible;
        side = settings.side;
        app.shell.add(panel, side, { rank: SIDEBAR_RANK, type: 'AI Chat' });
        if (wasVisible) {
          app.shell.activateById(panel.id);
        }
      }
      void model.refreshContext();
    };
    if (settingRegistry) {
      void settingRegistry
        .load(ChatPluginIDs.chat)
        .then(settings => {
          applySettings(readSettings(settings));
          settings.changed.connect(() => applySettings(readSettings(settings)));
          // The model picked in the panel is remembered for the next session.
          model.modelSelected.connect((_, name) => {
            if ((name ?? '') !== readSettings(settings).model) {
              void settings.set('model', name ?? '');
            }
          });
          // The Agent toggle and the policy are remembered per user.
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
          console.warn(
            'chapyter-ext: could not load the chat settings',
            reason
          );
        });
    }

    // The chat follows the active notebook, also across renames.
    let followed: NotebookPanel | null = null;
    const onPathChanged = () =>
      void model.setNotebook(followed?.context.path ?? null);
    const follow = (notebook: NotebookPanel | null) => {
      followed?.context.pathChanged.disconnect(onPathChanged);
      followed = notebook;
      followed?.context.pathChanged.connect(onPathChanged);
      void model.setNotebook(notebook?.context.path ?? null);
    };
    tracker.currentChanged.connect((_, notebook) => follow(notebook));
    follow(tracker.currentWidget);

    // The chip reads the kernel, so only while someone can see it.
    let timer: ReturnType<typeof setTimeout> | null = null;
    collector.changed.connect(() => {
      if (timer !== null) {
        clearTimeout(timer);
      }
      timer = setTimeout(() => {
        timer = null;
        if (panel.isVisible) {
          void model.refreshContext();
        }
      }, CONTEXT_DEBOUNCE_MS);
    });

    void model.loadConfig();

    app.commands.addCommand(ChatCommandIDs.open, {
      label: 'Open AI Chat',
      caption: 'Chat about the active notebook in the side panel',
      describedBy: { args: { type: 'object', properties: {} } },
      icon: chatIcon,
      execute: () => {
        app.shell.activateById(panel.id);
        panel.focusInput();
      }
    });
    app.commands.addCommand(ChatCommandIDs.newChat, {
      label: 'New AI Chat',
      caption:
        'Start a new chat for the active notebook (earlier chats are kept)',
      describedBy: { args: { type: 'object', properties: {} } },
      isEnabled: () => !!model.notebook && model.state === 'idle',
      execute: async () => {
        app.shell.activateById(panel.id);
        await model.newChat();
        panel.focusInput();
      }
    });
    app.commands.addCommand(ChatCommandIDs.ask, {
      label: 'Ask AI Chat',
      caption: 'Show the chat and send a message with the notebook context',
      describedBy: {
        args: {
          type: 'object',
          properties: { text: { type: 'string', description: 'The message' } }
        }
      },
      execute: async args => {
        app.shell.activateById(panel.id);
        const text = typeof args.text === 'string' ? args.text : '';
        if (!(await model.send(text))) {
          throw new Error('the chat is busy with another reply');
        }
      }
    });
    app.commands.addCommand(ChatCommandIDs.snapshot, {
      label: 'Notebook Context Snapshot',
      describedBy: { args: { type: 'object', properties: {} } },
      execute: () =>
        model.contextDefault ? collector.snapshot() : Promise.resolve(null)
    });
    palette?.addItem({ command: ChatCommandIDs.open, category: 'AI' });
    palette?.addItem({ command: ChatCommandIDs.newChat, category: 'AI' });
  }
};

/** The chat's plugins, for the extension's entry point. */
export default [chatPlugin];
