/** The notebook's render gate for outputs of cells the model wrote (`outputGate.ts`). */

import {
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import {
  INotebookTracker,
  INotebookWidgetFactory,
  NotebookPanel,
  NotebookWidgetFactory
} from '@jupyterlab/notebook';

import { PluginIDs } from '../tokens';
import { gateRendermime } from './outputGate';

/** Wraps each notebook's rendermime as the notebook is made, before any output renders. */
const outputGatePlugin: JupyterFrontEndPlugin<void> = {
  id: PluginIDs.outputGate,
  description:
    'Outputs of cells the model wrote, and untrusted outputs, render with no scripts and ' +
    'load nothing from another host until a click.',
  autoStart: true,
  requires: [INotebookTracker],
  optional: [INotebookWidgetFactory],
  activate: (
    _app: JupyterFrontEnd,
    tracker: INotebookTracker,
    factory: NotebookWidgetFactory.IFactory | null
  ) => {
    const gate = (panel: NotebookPanel) =>
      gateRendermime(panel.content.rendermime, () => panel.content.model);
    // The factory says so as soon as a notebook is made, before its cells load.
    factory?.widgetCreated.connect((_, panel: NotebookPanel) => gate(panel));
    tracker.forEach(gate);
    tracker.widgetAdded.connect((_, panel) => gate(panel));
  }
};

export default [outputGatePlugin];
