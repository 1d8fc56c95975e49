/**
 * The bar after Fix's **Accept and run**, where the proposal was: what Undo will and will
 * not restore (the kernel's preview, one line), Undo (the variables back, and the cell's code
 * as it was before Accept when it still holds the accepted code), Dismiss (the kernel lets its
 * copy go). No JupyterLab runtime imports, so it is tested in jsdom.
 */

import type { Cell } from '@jupyterlab/cells';
import { Widget } from '@lumino/widgets';

import { button, element } from '../common/dom';
import type { KernelUndo } from '../common/kernelUndo';

const TITLE =
  "Put the kernel's variables back as they were before the run, and the cell's code " +
  'as it was before Accept';

/** "Undo the accepted fix": what it will restore, Undo, Dismiss. */
export class UndoRunBar extends Widget {
  /** Offer to undo `turn` (the run of `accepted`, which replaced `before` in `cell`). */
  constructor(
    private _undo: KernelUndo,
    private _turn: string,
    private _cell: Cell,
    private _before: string,
    private _accepted: string
  ) {
    super();
    this.addClass('jp-Chapyter-undoRun');
    this.node.setAttribute('role', 'group');
    this.node.setAttribute('aria-label', 'Undo the accepted fix');
    this._line = element('span', 'jp-Chapyter-undoRunLine', {
      role: 'status'
    });
    this._button = button(
      'jp-Chapyter-undoRunUndo',
      'Undo the accepted fix and its run',
      'Undo',
      null,
      TITLE
    );
    const dismiss = button(
      'jp-Chapyter-undoRunDismiss',
      'Dismiss',
      'Dismiss',
      null,
      'Keep the change (the kernel lets its copy go)'
    );
    this._button.addEventListener('click', () => void this._restore());
    dismiss.addEventListener('click', () => this.dispose());
    this.node.append(this._button, this._line, dismiss);
    this._line.textContent = 'The kernel kept its state from before the run.';
    void this._undo.preview(this._turn, 0).then(preview => {
      if (!this.isDisposed && !this._done) {
        this._line.textContent = preview.line;
        this._button.title = `${TITLE}. ${preview.line}`;
      }
    });
  }

  /** Let the kernel's copy go. */
  dispose(): void {
    if (this.isDisposed) {
      return;
    }
    void this._undo.release(this._turn);
    super.dispose();
  }

  private async _restore(): Promise<void> {
    this._button.disabled = true;
    this._line.textContent = 'Restoring the variables…';
    const answer = await this._undo.restore(this._turn, 0);
    this._done = true;
    if (this.isDisposed) {
      return;
    }
    let code = '';
    const shared = this._cell.isDisposed ? null : this._cell.model.sharedModel;
    if (shared && shared.getSource() === this._accepted) {
      shared.setSource(this._before);
      code = " The cell's code is back as before (its outputs are the run's).";
    } else if (shared) {
      code = " The cell's code was edited since: left as it is.";
    }
    this._line.textContent = answer.line + code;
    this._button.hidden = true;
  }

  private _line: HTMLElement;
  private _button: HTMLButtonElement;
  private _done = false;
}
