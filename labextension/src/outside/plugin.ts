/**
 * Outside agents (MCP clients such as Claude Code) in this page: the one subscription to the
 * server's relay, the open notebooks reported to it, each call carried out in its notebook
 * (`calls.ts`, `notebook.ts`), and the approval cards shown in the AI Chat through
 * {@link IChatExtension}.
 */

import {
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { INotebookTracker } from '@jupyterlab/notebook';

import { IChatExtension } from '../chat/tokens';
import { OutsideCalls } from './calls';
import { OutsideCard } from './card';
import { OutsideClient, OutsideSubscription } from './client';
import { TrackedNotebooks } from './notebook';

/** Plugin id. */
export const OUTSIDE_PLUGIN_ID = 'chapyter-ext:outside';

/** The page's subscription (one per page, whatever activates it). */
let subscription: OutsideSubscription | null = null;

function pageId(): string {
  const random = new Uint32Array(4);
  crypto.getRandomValues(random);
  return Array.from(random, n => n.toString(16).padStart(8, '0')).join('');
}

const outsidePlugin: JupyterFrontEndPlugin<void> = {
  id: OUTSIDE_PLUGIN_ID,
  description:
    'Carries out the calls of outside agents (MCP clients) in the open notebooks, with approval in the AI Chat.',
  autoStart: true,
  requires: [INotebookTracker, IChatExtension],
  activate: (
    app: JupyterFrontEnd,
    tracker: INotebookTracker,
    chat: IChatExtension
  ) => {
    if (subscription) {
      return;
    }
    const client = new OutsideClient(pageId());
    const notebooks = new TrackedNotebooks(tracker);
    const calls = new OutsideCalls(notebooks, client, (request, stop) => {
      const card = new OutsideCard(request, stop, () => shown.dispose());
      const shown = chat.showCard({
        notebook: request.call.notebook,
        node: card.node
      });
      // No focus taken: a key typed in a cell at that moment must not answer the card.
      return card;
    });
    let reported = '';
    const report = (force = false) => {
      if (!subscription?.connected) {
        return;
      }
      const open = notebooks.all().map(n => n.describe());
      const key = JSON.stringify(open.map(n => [n.path, n.kernel]));
      if (key === reported && !force) {
        return;
      }
      reported = key;
      void client.notebooks(open).catch(error => {
        reported = '';
        console.warn(
          'chapyter-ext: could not report the open notebooks',
          error
        );
      });
    };
    subscription = new OutsideSubscription(client.pageId, {
      call: call => void calls.handle(call),
      cancel: ({ callId, reason }) => calls.cancel(callId, reason),
      connected: () => report(true)
    });
    tracker.widgetAdded.connect((_, panel) => {
      void panel.context.ready.then(() => report());
      panel.context.pathChanged.connect(() => report());
      panel.sessionContext.kernelChanged.connect(() => report());
      panel.disposed.connect(() => setTimeout(() => report(), 0));
    });
    void app.restored.then(() => subscription?.start());
  }
};

export default [outsidePlugin];
