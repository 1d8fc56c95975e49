/** chapyter-ext's JupyterLab plugins. */

import {
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { ICommandPalette } from '@jupyterlab/apputils';
import {
  INotebookCellExecutor,
  INotebookTracker,
  NotebookActions,
  NotebookPanel
} from '@jupyterlab/notebook';
import { ISettingRegistry } from '@jupyterlab/settingregistry';
import { refreshIcon } from '@jupyterlab/ui-components';

import agentPlugins from './agent/plugin';
import chatPlugins from './chat/plugin';
import completePlugins from './complete/plugin';
import fixPlugins from './fix/plugin';
import { PairDecorator } from './notebook/decorations';
import notebookPlugins from './notebook/plugin';
import outsidePlugins from './outside/plugin';
import outsideTokensPlugins from './outside/tokensPlugin';
import planPlugins from './plan/plugin';
import savedSecretsPlugins from './savedSecrets/plugin';
import { findGeneratedIndex, findPromptIndex, isPromptCell } from './contract';
import { cellViews } from './notebook/cells';
import { PromptCellExecutor } from './notebook/executor';
import {
  CommandIDs,
  DEFAULT_NOTEBOOK_SETTINGS,
  INotebookSettings,
  PluginIDs
} from './tokens';

/** Replaces JupyterLab's cell executor (registered later, so this one is used). */
const executorPlugin: JupyterFrontEndPlugin<INotebookCellExecutor> = {
  id: PluginIDs.executor,
  description: 'Runs %%ai prompt cells and the cells generated from them.',
  autoStart: true,
  provides: INotebookCellExecutor,
  activate: (): INotebookCellExecutor => new PromptCellExecutor()
};

/** The prompt cell of the active cell's pair, with its index, if any. */
function activePair(
  panel: NotebookPanel | null
): { prompt: number; generated: number } | null {
  const notebook = panel?.content;
  if (!notebook?.model || !notebook.activeCell) {
    return null;
  }
  const views = cellViews(notebook.model);
  const active = notebook.activeCellIndex;
  if (isPromptCell(views[active])) {
    return { prompt: active, generated: findGeneratedIndex(views, active) };
  }
  const prompt = findPromptIndex(views, active);
  return prompt >= 0 ? { prompt, generated: active } : null;
}

/** Settings, commands and pairing styles for prompt and generated cells. */
const notebookPlugin: JupyterFrontEndPlugin<void> = {
  id: PluginIDs.notebook,
  description: 'Settings, Regenerate and pairing styles for %%ai cells.',
  autoStart: true,
  requires: [INotebookTracker, INotebookCellExecutor],
  optional: [ISettingRegistry, ICommandPalette],
  activate: (
    app: JupyterFrontEnd,
    tracker: INotebookTracker,
    executor: INotebookCellExecutor,
    settingRegistry: ISettingRegistry | null,
    palette: ICommandPalette | null
  ) => {
    const promptExecutor =
      executor instanceof PromptCellExecutor ? executor : null;
    if (promptExecutor) {
      promptExecutor.tracker = tracker;
    } else {
      console.warn(
        'chapyter-ext: another extension replaced the notebook cell executor; ' +
          '%%ai cells fall back to inserting code without running it.'
      );
    }

    if (settingRegistry) {
      void settingRegistry.load(PluginIDs.notebook).then(settings => {
        const apply = () => {
          const composite = settings.composite as unknown as INotebookSettings;
          if (promptExecutor) {
            promptExecutor.settings = {
              ...DEFAULT_NOTEBOOK_SETTINGS,
              ...composite
            };
          }
        };
        apply();
        settings.changed.connect(apply);
      });
    }

    tracker.widgetAdded.connect((_, panel) => {
      void panel.context.ready.then(() => new PairDecorator(panel));
    });

    app.commands.addCommand(CommandIDs.regenerate, {
      label: 'Regenerate with AI',
      caption:
        'Ask the model again for this prompt and replace the generated code',
      describedBy: {
        args: {
          type: 'object',
          properties: {
            toolbar: {
              type: 'boolean',
              description: 'Whether the command is shown in the cell toolbar'
            }
          }
        }
      },
      icon: args => (args.toolbar ? refreshIcon : undefined),
      isVisible: () => activePair(tracker.currentWidget) !== null,
      execute: async () => {
        const panel = tracker.currentWidget;
        const pair = activePair(panel);
        if (!panel || !pair) {
          return;
        }
        const prompt = panel.content.widgets[pair.prompt];
        promptExecutor?.forceRegenerate(prompt.model.id);
        await NotebookActions.runCells(
          panel.content,
          [prompt],
          panel.sessionContext
        );
      }
    });

    app.commands.addCommand(CommandIDs.goToLinked, {
      label: 'Go to Linked AI Cell',
      caption: 'Select the prompt or the generated cell paired with this one',
      describedBy: { args: { type: 'object', properties: {} } },
      isVisible: () => activePair(tracker.currentWidget) !== null,
      execute: () => {
        const panel = tracker.currentWidget;
        const pair = activePair(panel);
        if (!panel || !pair) {
          return;
        }
        const target =
          panel.content.activeCellIndex === pair.prompt
            ? pair.generated
            : pair.prompt;
        if (target >= 0) {
          panel.content.activeCellIndex = target;
          panel.content.deselectAll();
        }
      }
    });

    palette?.addItem({ command: CommandIDs.regenerate, category: 'AI' });
    palette?.addItem({ command: CommandIDs.goToLinked, category: 'AI' });
  }
};

export default [
  executorPlugin,
  notebookPlugin,
  ...notebookPlugins,
  ...chatPlugins,
  ...agentPlugins,
  ...planPlugins,
  ...fixPlugins,
  ...completePlugins,
  ...outsidePlugins,
  ...savedSecretsPlugins,
  ...outsideTokensPlugins
];
