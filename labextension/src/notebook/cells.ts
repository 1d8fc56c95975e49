/** Views of a notebook's cell models for the contract's link rules. */

import { ICellModel } from '@jupyterlab/cells';
import { INotebookModel } from '@jupyterlab/notebook';

import { ICellView, METADATA_KEY } from '../contract';

/** A view of a cell model for the link logic. */
export function cellView(model: ICellModel): ICellView {
  return {
    id: model.id,
    type: model.type,
    source: model.sharedModel.getSource(),
    chapyter: model.getMetadata(METADATA_KEY) ?? null
  };
}

/** All cells of a notebook model as views. */
export function cellViews(notebook: INotebookModel): ICellView[] {
  const views: ICellView[] = [];
  for (let i = 0; i < notebook.cells.length; i++) {
    views.push(cellView(notebook.cells.get(i)));
  }
  return views;
}

/** Position of a cell model in its notebook, or -1. */
export function indexOfModel(
  notebook: INotebookModel,
  model: ICellModel
): number {
  for (let i = 0; i < notebook.cells.length; i++) {
    if (notebook.cells.get(i) === model) {
      return i;
    }
  }
  return -1;
}
