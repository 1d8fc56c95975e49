/**
 * The open notebooks' own metadata, as the chat needs it (`INotebookIdentity`): the stable id
 * under `metadata.chapyter.notebook_id` and the chat a notebook may carry under
 * `metadata.chapyter.chat` (`contract/notebookChat.ts`), read through the notebook tracker.
 */

import { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';

import {
  METADATA_KEY,
  notebookChatInfo,
  STORED_CHAT_KEY,
  withNotebookId
} from '../contract';
import { INotebookChatMetadata, INotebookIdentity } from './tokens';

/** {@link INotebookIdentity} over the notebooks open in JupyterLab. */
export class TrackerIdentity implements INotebookIdentity {
  /** Read and write the metadata of the notebooks `tracker` knows. */
  constructor(private readonly _tracker: INotebookTracker) {}

  /** The notebook's chat metadata once its content is loaded; null if it is not open. */
  async read(path: string): Promise<INotebookChatMetadata | null> {
    const panel = this._find(path);
    if (!panel) {
      return null;
    }
    // Before its content is loaded a notebook's metadata is empty: an id read then is lost.
    // A notebook closed before it loaded never gets ready: stop waiting then.
    await new Promise<void>(resolve => {
      if (panel.isDisposed) {
        resolve();
        return;
      }
      const done = () => {
        panel.disposed.disconnect(done);
        resolve();
      };
      panel.disposed.connect(done);
      panel.context.ready.then(done, done);
    });
    const model = panel.model;
    if (panel.isDisposed || !model || panel.context.path !== path) {
      return null;
    }
    const chapyter = model.getMetadata(METADATA_KEY);
    const info = notebookChatInfo({ [METADATA_KEY]: chapyter });
    return {
      notebookId: info.notebook_id,
      storedChat: info.stored_chat ? chapyter[STORED_CHAT_KEY] : null
    };
  }

  /** Set the notebook's id in its metadata (other `chapyter` fields are kept). */
  write(path: string, notebookId: string): boolean {
    const panel = this._find(path);
    const model = panel?.model;
    if (!panel?.context.isReady || !model) {
      return false;
    }
    model.setMetadata(
      METADATA_KEY,
      withNotebookId(model.getMetadata(METADATA_KEY), notebookId)
    );
    return true;
  }

  private _find(path: string): NotebookPanel | null {
    return this._tracker.find(panel => panel.context.path === path) ?? null;
  }
}
