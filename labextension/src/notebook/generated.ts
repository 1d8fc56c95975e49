/**
 * Putting generated code under its prompt: into the linked cell (replacing its code and
 * provenance) or into a new cell inserted below, linked both ways. Hand-edited code is only
 * replaced once the user agrees.
 */

import { Dialog, showDialog } from '@jupyterlab/apputils';
import { ICellModel, ICodeCellModel } from '@jupyterlab/cells';
import { INotebookModel } from '@jupyterlab/notebook';

import {
  findGeneratedIndex,
  IGeneratedMetadata,
  IGeneration,
  isEdited,
  linkGenerated,
  METADATA_KEY,
  promptMetadata
} from '../contract';
import { INotebookSettings } from '../tokens';
import { cellView, cellViews, indexOfModel } from './cells';
import { StreamIntoCell } from './stream';

/** The metadata a generated cell is given: its provenance, collapsed input if so set. */
export function generatedCellMetadata(
  metadata: IGeneratedMetadata,
  settings: INotebookSettings
): { [key: string]: any } {
  const result: { [key: string]: any } = { [METADATA_KEY]: metadata };
  if (settings.collapseGeneratedInput) {
    result.jupyter = { source_hidden: true };
  }
  return result;
}

/**
 * Put a generation into the prompt's generated cell (inserted if there is none); returns
 * that cell, or null when nothing changed (the prompt is gone, or the user kept edits).
 */
export async function upsertGenerated(
  notebook: INotebookModel,
  prompt: ICellModel,
  generation: IGeneration,
  stream: StreamIntoCell | null,
  settings: INotebookSettings
): Promise<ICellModel | null> {
  const code = generation.code;
  const promptIndex = indexOfModel(notebook, prompt);
  if (promptIndex < 0) {
    stream?.undo();
    return null;
  }
  const views = cellViews(notebook);
  const index = stream?.target
    ? indexOfModel(notebook, stream.target)
    : findGeneratedIndex(views, promptIndex);
  const metadata = linkGenerated(generation.metadata, prompt.id);
  if (index < 0) {
    notebook.sharedModel.insertCell(promptIndex + 1, {
      cell_type: 'code',
      source: code,
      metadata: generatedCellMetadata(metadata, settings)
    });
    const inserted = notebook.cells.get(promptIndex + 1);
    prompt.setMetadata(METADATA_KEY, promptMetadata(inserted.id));
    return inserted;
  }
  const existing = notebook.cells.get(index);
  const before = stream?.originalSource ?? existing.sharedModel.getSource();
  const view = { ...cellView(existing), source: before };
  if (isEdited(view) && settings.confirmOverwriteEdited) {
    stream?.undo();
    existing.setMetadata(METADATA_KEY, {
      ...(existing.getMetadata(METADATA_KEY) as object),
      edited: true
    });
    const answer = await showDialog({
      title: 'Replace edited code?',
      body:
        'The cell generated from this prompt was edited by hand. Replace it with the ' +
        'new answer? Undo (Ctrl+Z in that cell) brings your code back.',
      buttons: [
        Dialog.cancelButton({ label: 'Keep my edits' }),
        Dialog.warnButton({ label: 'Replace' })
      ],
      // Enter must never overwrite hand-written code.
      defaultButton: 0
    });
    if (!answer.button.accept) {
      (prompt as ICodeCellModel).outputs.add({
        output_type: 'stream',
        name: 'stdout',
        text: 'Kept your edited code below; the new answer was not used.\n'
      });
      return null;
    }
  }
  if (stream?.target === existing) {
    // Streaming wrote many small edits: fold them so that one undo restores the old code.
    existing.sharedModel.setSource(stream.originalSource ?? '');
    existing.sharedModel.clearUndoHistory();
  }
  existing.sharedModel.transact(() => {
    if (existing.sharedModel.getSource() !== code) {
      existing.sharedModel.setSource(code);
    }
    for (const [key, value] of Object.entries(
      generatedCellMetadata(metadata, settings)
    )) {
      existing.setMetadata(key, value);
    }
  });
  if (existing.type === 'code') {
    // Outside the transaction: the outputs model re-applies a transaction's delta on
    // commit, which would undo changes made to it inside one.
    (existing as ICodeCellModel).outputs.clear();
    (existing as ICodeCellModel).executionCount = null;
  }
  prompt.setMetadata(METADATA_KEY, promptMetadata(existing.id));
  return existing;
}
