/**
 * Plan first, plugged into the AI Chat through {@link IChatExtension}: `/plan WHAT` asks the
 * model for numbered steps only (nothing runs), the answer's plan is drawn as an editable
 * list, and Run plan sends the edited steps as an agent turn (`plan_steps`), whose steps are
 * marked done, failed or skipped as it goes (docs/plans.md).
 */

import {
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';

import { IChatExtension } from '../chat/tokens';
import { runMessage } from './logic';
import { PlanView } from './view';

/** The plugin's id. */
export const PLAN_PLUGIN_ID = 'chapyter-ext:plan';

/** Plan first in the AI Chat. */
const planPlugin: JupyterFrontEndPlugin<void> = {
  id: PLAN_PLUGIN_ID,
  description:
    'Plan first in the AI Chat: /plan asks for steps, edited in the chat, then run as an agent turn.',
  autoStart: true,
  requires: [IChatExtension],
  activate: (app: JupyterFrontEnd, chat: IChatExtension): void => {
    chat.addSlashCommand({
      name: 'plan',
      args: 'WHAT',
      description:
        'Ask for a plan of numbered steps (nothing runs); edit it, then run it',
      run: async args => {
        if (!args) {
          return 'Usage: /plan WHAT, e.g. /plan find the best-selling region';
        }
        await chat.send(args, { plan: true }, false);
      }
    });
    chat.addMessagePart(message =>
      message.role === 'assistant'
        ? new PlanView(message, {
            run: steps =>
              chat.send(runMessage(steps), { plan_steps: steps }, true)
          })
        : null
    );
  }
};

/** The plan plugins, for the extension's entry point. */
export default [planPlugin];
