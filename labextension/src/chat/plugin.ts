/**
 * The chat sidebar plugin: wires the model, the notebook side and the view together, and
 * provides {@link IChatExtension} for the plugins that plug into the chat.
 */

import {
  ILayoutRestorer,
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import {
  Dialog,
  ICommandPalette,
  Notification,
  showDialog
} from '@jupyterlab/apputils';
import { IEditorLanguageRegistry } from '@jupyterlab/codemirror';
import { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';
import { IRenderMimeRegistry } from '@jupyterlab/rendermime';
import { ISettingRegistry } from '@jupyterlab/settingregistry';

import { NotebookContextCollector } from '../common/notebookSnapshot';
import { CodeActions } from './actions';
import { setUpChatInput } from './chatInput';
import { ChatClient } from './client';
import { downloadMarkdown, exportNextToNotebook } from './exportChat';
import { chatIcon } from './icons';
import { TrackerIdentity } from './identity';
import { ChatExtension } from './extension';
import { ChatModel, errorMessage } from './model';
import {
  ChatCommandIDs,
  ChatPluginIDs,
  DEFAULT_CHAT_SETTINGS,
  IChatExtension,
  IChatSettings
} from './tokens';
import { ChatPanel } from './panel';
import { ChatCards } from './cards';
import { ComposerExtras } from './composer';
import { addServerCommands } from './serverCommands';
import { hintWhenFirstShown, sendWarmUpHint } from './warmUp';

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
const chatPlugin: JupyterFrontEndPlugin<IChatExtension> = {
  id: ChatPluginIDs.chat,
  description:
    'A chat in the side area that knows the active notebook and its kernel.',
  autoStart: true,
  provides: IChatExtension,
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
  ): IChatExtension => {
    const client = new ChatClient();
    const collector = new NotebookContextCollector(tracker, client);
    const model = new ChatModel({
      client,
      context: message => collector.collect(message),
      snapshot: () => collector.snapshot(),
      identity: new TrackerIdentity(tracker)
    });
    const extension = new ChatExtension({
      model,
      config: () => client.config(),
      snapshot: () => collector.snapshot(),
      show: () => app.shell.activateById(panel.id)
    });
    // What `@` lists, and the built-in slash commands (/plan: the plan mode's).
    setUpChatInput(app, tracker, model, extension, p => collector.variables(p));
    // ...and the server's (`GET commands`), whose messages name their command.
    void addServerCommands({
      registry: extension.slashCommands,
      send: text => model.send(text),
      setCommandFor: commandFor => (model.commandFor = commandFor)
    });
    const panel = new ChatPanel({
      model,
      rendermime,
      languages,
      actions: new CodeActions(tracker),
      extension,
      exportChat: () => app.commands.execute(ChatCommandIDs.exportChat)
    });
    panel.id = 'jp-chapyter-chat';
    new ComposerExtras(model, panel.node, {
      contents: app.serviceManager.contents,
      tracker
    });
    new ChatCards(model, extension, panel.node);
    panel.title.icon = chatIcon;
    panel.title.caption = 'AI Chat';

    let side: IChatSettings['side'] = DEFAULT_CHAT_SETTINGS.side;
    app.shell.add(panel, side, { rank: SIDEBAR_RANK, type: 'AI Chat' });
    restorer?.add(panel, 'chapyter-ext-chat');
    // The server loads its model SDK when a user first opens the chat, not at start.
    hintWhenFirstShown(panel, sendWarmUpHint);

    const applySettings = (settings: IChatSettings) => {
      collector.settings = settings;
      model.contextDefault = settings.sendContext;
      model.preferredModel = settings.model;
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
        })
        .catch(reason => {
          console.warn(
            'chapyter-ext: could not load the chat settings',
            reason
          );
        });
    }

    // The chat follows the active notebook. A notebook renamed or moved (the file browser,
    // Rename, Save As) keeps its thread, a reply streaming in it included.
    const paths = new WeakMap<NotebookPanel['context'], string>();
    const followRenames = (notebook: NotebookPanel) => {
      const context = notebook.context;
      if (paths.has(context)) {
        return; // another view of the same notebook
      }
      paths.set(context, context.path);
      context.pathChanged.connect((_, newPath) => {
        const oldPath = paths.get(context);
        paths.set(context, newPath);
        if (oldPath && oldPath !== newPath) {
          void model.renameNotebook(oldPath, newPath).then(() => {
            if (panel.isVisible) {
              void model.refreshContext();
            }
          });
        }
      });
    };
    tracker.forEach(followRenames);
    tracker.widgetAdded.connect((_, notebook) => followRenames(notebook));
    tracker.currentChanged.connect(
      (_, notebook) => void model.setNotebook(notebook?.context.path ?? null)
    );
    void model.setNotebook(tracker.currentWidget?.context.path ?? null);
    // Another tab may have added to this notebook's chat while this one was away.
    const catchUp = () => {
      if (document.visibilityState === 'visible' && panel.isVisible) {
        void model.refreshHistory();
      }
    };
    window.addEventListener('focus', catchUp);
    document.addEventListener('visibilitychange', catchUp);

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
      execute: args =>
        extension.ask(typeof args.text === 'string' ? args.text : '')
    });
    app.commands.addCommand(ChatCommandIDs.snapshot, {
      label: 'Notebook Context Snapshot',
      describedBy: { args: { type: 'object', properties: {} } },
      execute: () => extension.snapshot()
    });
    const canExport = () =>
      !!model.notebook && !!model.chatId && model.state === 'idle';
    app.commands.addCommand(ChatCommandIDs.exportChat, {
      label: 'Export AI Chat as Markdown',
      caption:
        "Write the current chat (questions, answers, the agent's steps) as <notebook>.chat.md " +
        'next to the notebook, secrets redacted, and open it',
      describedBy: { args: { type: 'object', properties: {} } },
      isEnabled: canExport,
      execute: async () => {
        try {
          // Written by the server: never through a link, never outside its root.
          const path = await exportNextToNotebook(model, async question => {
            const answer = await showDialog({
              title: question.title,
              body: question.body,
              buttons: [
                Dialog.cancelButton(),
                Dialog.warnButton({
                  label: 'Replace',
                  ariaLabel: `Replace ${question.path}`
                })
              ]
            });
            return answer.button.accept;
          });
          if (!path) {
            return;
          }
          // As text: a Markdown preview would load the answers' remote images.
          await app.commands.execute('docmanager:open', {
            path,
            factory: 'Editor'
          });
        } catch (error) {
          Notification.error(
            `Could not export the chat: ${errorMessage(error)}`,
            {
              autoClose: 8000,
              actions: [
                {
                  label: 'Download instead',
                  caption: 'Download the chat as Markdown (nothing is written)',
                  callback: () =>
                    void app.commands.execute(ChatCommandIDs.downloadChat)
                }
              ]
            }
          );
        }
      }
    });
    app.commands.addCommand(ChatCommandIDs.downloadChat, {
      label: 'Download AI Chat as Markdown',
      caption:
        'Download the current chat as a Markdown file, secrets redacted (nothing is written next to the notebook)',
      describedBy: { args: { type: 'object', properties: {} } },
      isEnabled: canExport,
      execute: async () => {
        try {
          const exported = await model.exportChat();
          if (exported) {
            downloadMarkdown(exported.filename, exported.markdown);
          }
        } catch (error) {
          Notification.error(
            `Could not export the chat: ${errorMessage(error)}`,
            { autoClose: 8000 }
          );
        }
      }
    });
    palette?.addItem({ command: ChatCommandIDs.open, category: 'AI' });
    palette?.addItem({ command: ChatCommandIDs.newChat, category: 'AI' });
    palette?.addItem({ command: ChatCommandIDs.exportChat, category: 'AI' });
    palette?.addItem({ command: ChatCommandIDs.downloadChat, category: 'AI' });
    return extension;
  }
};

/** The chat's plugins, for the extension's entry point. */
export default [chatPlugin];
