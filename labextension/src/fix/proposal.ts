/**
 * A Fix / Edit proposal as it is reviewed and applied: the one string that is both diffed
 * and put in the cell, and the Accept that puts it there. Pure: no DOM.
 */

import type { ICellModel } from '@jupyterlab/cells';

import { acceptedChange, cellCode, METADATA_KEY } from '../contract';
import { IFixProposal } from './client';
import { IDiffLine, lineDiff } from './logic';

/**
 * The code a proposal puts in the cell, as every cell insert does ({@link cellCode}: one
 * kind of line end, no trailing newlines): what the diff shows is what Accept applies.
 */
export function proposedSource(proposal: IFixProposal): string {
  return cellCode(proposal.code);
}

/** The diff a reviewer reads: the cell's code now against {@link proposedSource}. */
export function proposalDiff(
  before: string,
  proposal: IFixProposal
): IDiffLine[] {
  return lineDiff(before, proposedSource(proposal));
}

/**
 * Replace the cell's code with the proposal in one transaction (one undo step) and record
 * the change in its `chapyter` metadata. Returns an error line, and changes nothing, when
 * the cell's code is no longer what the proposal was made from.
 */
export function applyProposal(
  model: ICellModel,
  proposal: IFixProposal,
  before: string
): string | null {
  const shared = model.sharedModel;
  if (shared.getSource() !== before) {
    return 'The cell changed since this proposal was made; ask again.';
  }
  const code = proposedSource(proposal);
  const metadata = acceptedChange(model.getMetadata(METADATA_KEY), {
    kind: proposal.kind,
    model: proposal.model,
    code,
    request_sha256: proposal.request_sha256,
    previous_code: before
  });
  const undo = (shared as { undoManager?: { stopCapturing(): void } | null })
    .undoManager;
  undo?.stopCapturing();
  shared.transact(() => {
    shared.setSource(code);
    model.setMetadata(METADATA_KEY, metadata);
  });
  undo?.stopCapturing();
  return null;
}
