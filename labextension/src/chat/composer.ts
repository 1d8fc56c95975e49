/**
 * What the chat panel's composer gets beyond its input: the follow-ups queue
 * below the thread (`followUps.ts`), the attachments (`attachments.ts`: the paperclip after
 * the input, the chips above it, drop on the panel, paste into the input), and Send reading
 * "Queue" while an answer streams. The plugin builds it over the panel's node, so `panel.ts`
 * keeps only its hooks (Send stays shown; it sends the attached files).
 */

import type { INotebookTracker } from '@jupyterlab/notebook';
import type { Contents } from '@jupyterlab/services';

import { AttachmentTray, setTableLoader } from './attachments';
import { FollowUpsView, sendLabel } from './followUps';
import { TableLoader } from './loadTable';
import type { ChatModel } from './model';

/** The queue and the attachment tray, placed around the panel's input row. */
export class ComposerExtras {
  /**
   * Place them in `panel` (the chat panel's node, which takes dropped files); with `notebooks`,
   * a sent table offers "Load as variable" (saved through their contents manager).
   */
  constructor(
    readonly model: ChatModel,
    panel: HTMLElement,
    notebooks?: { contents: Contents.IManager; tracker: INotebookTracker }
  ) {
    const inputRow = panel.querySelector('.jp-Chapyter-chatInputRow');
    const input = panel.querySelector('textarea');
    if (!inputRow || !input) {
      throw new Error('The chat panel has no input.');
    }
    this._send = inputRow.querySelector('.jp-Chapyter-chatSend');
    this.followUps = new FollowUpsView(model);
    this.attachments = new AttachmentTray(model.attachments, panel, input);
    // The queue right below the thread (the top of the footer), the files above the input.
    (inputRow.parentElement ?? panel).prepend(this.followUps.node);
    inputRow.before(this.attachments.node);
    input.after(this.attachments.button);
    model.changed.connect(this._update, this);
    this._update();
    if (notebooks) {
      setTableLoader(
        new TableLoader(
          notebooks.contents,
          notebooks.tracker,
          model.attachments.sent,
          () => model.notebook
        )
      );
    }
  }

  /** The queued messages. */
  readonly followUps: FollowUpsView;
  /** The files to send. */
  readonly attachments: AttachmentTray;

  private _update(): void {
    const model = this.model;
    this.attachments.enabled = !!model.notebook && !model.chatOff;
    if (this._send) {
      sendLabel(this._send, model.state === 'streaming');
    }
  }

  private _send: HTMLButtonElement | null;
}
