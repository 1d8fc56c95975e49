/**
 * Fix, Explain, Edit with AI and Apply to cell: the commands, the error bars and the diff
 * review in cells. The server side is `POST chapyter-ext/fix`.
 */

import {
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import {
  ICommandPalette,
  InputDialog,
  Notification
} from '@jupyterlab/apputils';
import { Cell, CodeCell } from '@jupyterlab/cells';
import {
  INotebookTracker,
  NotebookActions,
  NotebookPanel
} from '@jupyterlab/notebook';
import {
  bugIcon,
  editIcon,
  infoIcon,
  LabIcon,
  refreshIcon
} from '@jupyterlab/ui-components';

import { cellNameIn } from '../cellNames';
import { IChatExtension } from '../chat/tokens';
import { armGuard, kernelTrial, TrialOutcome } from '../common/kernelTrial';
import { requestSha256 } from '../contract';
import {
  IFixProposal,
  IFixRequest,
  requestFix,
  requestFixTrial
} from './client';
import { cellError, errorBarKind, errorBarOf, followErrors } from './errorBar';
import { findDefiningCells, ICellCode, similarCell } from './logic';
import { proposedSource } from './proposal';
import { runAccepted } from './undoRun';
import {
  applyProposal,
  claim,
  DiffReview,
  insertAboveEditor,
  isBusy,
  release
} from './review';

/** The commands of Fix / Explain / Edit with AI. */
export namespace FixCommandIDs {
  /** Ask for a corrected version of the active (or given) failing cell. */
  export const fix = 'chapyter-ext:fix-cell';
  /** Explain the active (or given) cell's error in the AI Chat. */
  export const explain = 'chapyter-ext:explain-error';
  /** Ask for a change of the active cell, in words. */
  export const edit = 'chapyter-ext:edit-cell';
}

/** The code cells of a notebook as the finder reads them. */
function codeCells(panel: NotebookPanel): ICellCode[] {
  return panel.content.widgets
    .map((cell, index) => ({ cell, index }))
    .filter(({ cell }) => cell.model.type === 'code')
    .map(({ cell, index }) => ({
      id: cell.model.id,
      index,
      source: cell.model.sharedModel.getSource()
    }));
}

/** The cell at `index` as the user reads it: "cell [4]", else "the 5th cell" (cellNames.ts). */
function cellLabel(panel: NotebookPanel, index: number): string {
  return cellNameIn(
    panel.content.widgets.map(cell => cell.model),
    index
  );
}

function cellOf(panel: NotebookPanel, id: string): Cell | null {
  return panel.content.widgets.find(c => c.model.id === id) ?? null;
}

function target(
  tracker: INotebookTracker,
  args: { cellId?: unknown }
): { panel: NotebookPanel; cell: Cell } | null {
  const panel = tracker.currentWidget;
  if (!panel) {
    return null;
  }
  const cell =
    typeof args.cellId === 'string'
      ? cellOf(panel, args.cellId)
      : panel.content.activeCell;
  return cell ? { panel, cell } : null;
}

/** One line where the user looks: the cell's error bar, else a notification. */
function say(cell: Cell, text: string): void {
  const bar = errorBarOf(cell);
  if (bar) {
    bar.setStatus(text, true);
  } else {
    Notification.error(text, { autoClose: 6000 });
  }
}

/** A line about the cell where the user looks: its error bar, else a notification. */
function tell(cell: Cell, text: string): void {
  const bar = errorBarOf(cell);
  if (bar) {
    bar.setStatus(text, false);
  } else if (text) {
    Notification.info(text, { autoClose: 6000 });
  }
}

/**
 * **Accept and run** of a proposal the analysis could not prove harmless (already accepted):
 * try it in a confined copy of the kernel; run it, guarded, only if the server's decision on
 * the trial says so, else say why it waits.
 */
async function runAfterTrial(
  panel: NotebookPanel,
  cell: Cell,
  proposal: IFixProposal,
  context: unknown,
  before: string
): Promise<void> {
  const kernel = panel.sessionContext.session?.kernel;
  if (!kernel || !proposal.trial) {
    tell(cell, 'Accepted, not run: the notebook has no kernel.');
    return;
  }
  tell(cell, 'Accepted; trying it in a confined copy of the kernel…');
  let outcome: TrialOutcome;
  try {
    outcome = await kernelTrial(kernel, proposal.trial);
  } catch (error) {
    outcome = { failure: { ename: 'Error', evalue: (error as Error).message } };
  }
  try {
    const decided = await requestFixTrial({
      code: proposedSource(proposal),
      ...outcome,
      ...(context ? { context } : {})
    });
    if (!decided.run) {
      tell(cell, `Accepted, not run: ${decided.why}.`);
      return;
    }
    if (decided.guard && !(await armGuard(kernel, decided.guard))) {
      tell(cell, 'Accepted, not run: the kernel could not arm the guard.');
      return;
    }
  } catch (error) {
    tell(cell, `Accepted, not run: ${(error as Error).message}`);
    return;
  }
  tell(cell, '');
  await runAccepted(panel, cell, before, proposedSource(proposal));
}

/** Show a proposal as a diff in its cell; the cell must already be claimed. */
function review(
  panel: NotebookPanel,
  cell: Cell,
  proposal: IFixProposal,
  asked: Cell = cell,
  context: unknown = null
): void {
  const before = cell.model.sharedModel.getSource();
  const id = cell.model.id;
  const close = () => {
    widget.dispose();
    release(id);
    errorBarOf(asked)?.setStatus('');
    errorBarOf(cell)?.setStatus('');
  };
  const widget = new DiffReview(proposal, before, choice => {
    if (choice === 'reject') {
      close();
      return;
    }
    const error = applyProposal(cell.model, proposal, before);
    if (error) {
      widget.setStatus(error);
      return;
    }
    close();
    // Run with a snapshot of the kernel first, so Undo can put the variables back.
    if (choice === 'run' && proposal.trial) {
      void runAfterTrial(panel, cell, proposal, context, before);
    } else if (choice === 'run') {
      void runAccepted(panel, cell, before, proposedSource(proposal));
    }
  });
  insertAboveEditor(cell, widget);
  cell.disposed.connect(() => release(id));
  widget.focus();
  // Above the editor of a cell whose traceback may be a screen long, while the click was
  // at its bottom: bring the proposal itself into view, within the notebook's scroller.
  void panel.content
    .scrollToCell(cell)
    .catch(() => undefined)
    .then(() => {
      if (!widget.isDisposed) {
        requestAnimationFrame(() =>
          widget.node.scrollIntoView({ block: 'nearest' })
        );
      }
    });
}

/** Ask the server and open the proposal in the cell it names. */
async function propose(
  chat: IChatExtension | null,
  panel: NotebookPanel,
  cell: Cell,
  body: Omit<IFixRequest, 'notebook'>
): Promise<void> {
  const index = panel.content.widgets.indexOf(cell);
  const id = cell.model.id;
  if (!claim(id)) {
    say(cell, `A proposal for ${cellLabel(panel, index)} is already open.`);
    return;
  }
  const bar = errorBarOf(cell);
  bar?.setStatus('Asking the model…');
  bar?.setBusy(body.mode === 'fix');
  let proposal: IFixProposal;
  // The chat's snapshot, as its settings say (none without the chat).
  let context: unknown = null;
  try {
    context = chat ? await chat.snapshot().catch(() => null) : null;
    proposal = await requestFix({
      notebook: panel.context.path,
      ...body,
      ...(context ? { context } : {})
    });
  } catch (error) {
    release(id);
    bar?.setBusy(false);
    say(cell, (error as Error).message);
    return;
  }
  bar?.setBusy(false);
  if (proposal.runnable === false) {
    // Nothing that passes the checks: one line, never a diff to accept.
    release(id);
    say(cell, proposal.explanation);
    return;
  }
  bar?.setStatus('');
  const changed = cellOf(panel, proposal.cell_id) ?? cell;
  if (changed !== cell) {
    release(id);
    if (!claim(changed.model.id)) {
      const other = panel.content.widgets.indexOf(changed);
      say(cell, `A proposal for ${cellLabel(panel, other)} is already open.`);
      return;
    }
    bar?.setStatus(
      `The cause is in ${cellLabel(panel, panel.content.widgets.indexOf(changed))}: see the proposal there.`
    );
  }
  if (changed.isDisposed) {
    release(changed.model.id);
    return;
  }
  review(panel, changed, proposal, cell, context);
}

/** Fix / Explain / Edit with AI and the chat's Apply to cell. */
const fixPlugin: JupyterFrontEndPlugin<void> = {
  id: 'chapyter-ext:fix',
  description: 'Fix and Explain by errors, Edit with AI, reviewed as diffs.',
  autoStart: true,
  requires: [INotebookTracker],
  optional: [ICommandPalette, IChatExtension],
  activate: (
    app: JupyterFrontEnd,
    tracker: INotebookTracker,
    palette: ICommandPalette | null,
    chat: IChatExtension | null
  ) => {
    const { commands } = app;
    const fix = (panel: NotebookPanel, cell: Cell) => {
      const error = cellError(cell);
      const index = panel.content.widgets.indexOf(cell);
      if (!error) {
        say(cell, `There is no error to fix in ${cellLabel(panel, index)}.`);
        return;
      }
      const cells = codeCells(panel);
      const failing = cells.find(c => c.id === cell.model.id)!;
      void propose(chat, panel, cell, {
        mode: 'fix',
        cell: failing,
        error,
        related: findDefiningCells(cells, failing, error)
      });
    };
    const explain = (panel: NotebookPanel, cell: Cell) => {
      const index = panel.content.widgets.indexOf(cell);
      const text = `Explain why ${cellLabel(panel, index)} failed and how to fix it.`;
      errorBarOf(cell)?.setStatus('');
      if (!chat) {
        say(cell, 'Could not ask the chat: the AI Chat is not installed.');
        return;
      }
      void chat.ask(text).catch(error => {
        say(cell, `Could not ask the chat: ${(error as Error).message}`);
      });
    };
    // A `%%ai` whose model call failed: run it alone again, which asks the model again.
    const askAgain = (panel: NotebookPanel, cell: Cell) => {
      errorBarOf(cell)?.setStatus('');
      void NotebookActions.runCells(
        panel.content,
        [cell],
        panel.sessionContext
      );
    };
    tracker.widgetAdded.connect((_, panel) => {
      void panel.context.ready.then(() =>
        followErrors(
          panel,
          {
            fix: (p, c: CodeCell) => fix(p, c),
            explain: (p, c: CodeCell) => explain(p, c),
            askAgain: (p, c: CodeCell) => askAgain(p, c)
          },
          [bugIcon, infoIcon, refreshIcon]
        )
      );
    });

    // chapyter-ext's own failure line has no code to fix or explain: Ask again is offered.
    const hasError = () => {
      const cell = tracker.currentWidget?.content.activeCell;
      const error = cell ? cellError(cell) : null;
      return !!error && errorBarKind(error) === 'code';
    };
    const describedBy = {
      args: {
        type: 'object',
        properties: {
          cellId: { type: 'string', description: 'The cell (default: active)' }
        }
      }
    };
    // Fix and Explain act on a cell with an error: the one named, or the active one.
    const errorCommand = (
      id: string,
      label: string,
      caption: string,
      icon: LabIcon,
      act: (panel: NotebookPanel, cell: Cell) => void
    ) =>
      commands.addCommand(id, {
        label,
        caption,
        icon,
        describedBy,
        isEnabled: args =>
          typeof args.cellId === 'string' ? true : hasError(),
        execute: args => {
          const found = target(tracker, args);
          if (found) {
            act(found.panel, found.cell);
          }
        }
      });
    errorCommand(
      FixCommandIDs.fix,
      'Fix Cell with AI',
      'Ask the model to correct the failing cell; review it as a diff',
      bugIcon,
      fix
    );
    errorCommand(
      FixCommandIDs.explain,
      'Explain Error with AI',
      "Explain the cell's error in the AI Chat",
      infoIcon,
      explain
    );
    commands.addCommand(FixCommandIDs.edit, {
      label: 'Edit Cell with AI…',
      caption: 'Describe a change; the proposal is shown as a diff in the cell',
      icon: editIcon,
      describedBy: {
        args: {
          type: 'object',
          properties: {
            cellId: {
              type: 'string',
              description: 'The cell (default: active)'
            },
            instruction: { type: 'string', description: 'What to change' }
          }
        }
      },
      isEnabled: () =>
        tracker.currentWidget?.content.activeCell?.model.type === 'code',
      execute: async args => {
        const found = target(tracker, args);
        if (!found || found.cell.model.type !== 'code') {
          return;
        }
        const { panel, cell } = found;
        const index = panel.content.widgets.indexOf(cell);
        if (isBusy(cell.model.id)) {
          say(
            cell,
            `A proposal for ${cellLabel(panel, index)} is already open.`
          );
          return;
        }
        let instruction =
          typeof args.instruction === 'string' ? args.instruction : '';
        if (!instruction) {
          const answer = await InputDialog.getText({
            title: `Edit ${cellLabel(panel, index)} with AI`,
            placeholder: 'e.g. vectorise this, add type hints',
            okLabel: 'Propose'
          });
          instruction = answer.button.accept ? (answer.value ?? '').trim() : '';
        }
        if (!instruction) {
          return;
        }
        await propose(chat, panel, cell, {
          mode: 'edit',
          cell: codeCells(panel).find(c => c.id === cell.model.id)!,
          instruction
        });
      }
    });
    for (const command of Object.values(FixCommandIDs)) {
      palette?.addItem({ command, category: 'AI' });
    }

    // "Apply to cell N" under the chat's code blocks.
    chat?.addCodeAction((code, origin) => {
      const panel = tracker.currentWidget;
      if (!panel) {
        return null;
      }
      const cells = codeCells(panel);
      const found = similarCell(cells, code, panel.content.activeCellIndex);
      if (!found) {
        return null;
      }
      return {
        label: `Apply to ${cellLabel(panel, found.index)}`,
        apply: () => {
          const cell = cellOf(panel, found.id);
          if (!cell) {
            return;
          }
          if (!claim(found.id)) {
            say(
              cell,
              `A proposal for ${cellLabel(panel, found.index)} is already open.`
            );
            return;
          }
          review(panel, cell, {
            cell_id: found.id,
            code,
            explanation: 'Proposed in the AI Chat.',
            model: origin.model,
            kind: 'edit',
            request_sha256: requestSha256(code),
            hold: origin.hold ?? null
          });
        }
      };
    });
  }
};

export default [fixPlugin];
