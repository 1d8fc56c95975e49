/**
 * The render gate of a notebook: outputs of cells the model wrote (`metadata.chapyter.role`
 * "generated": `%%ai`, the chat, the agent, Fix) and untrusted outputs render through
 * `gatedRender.ts` (no scripts, no fetch from another host until a click, styles scoped);
 * every other output goes to JupyterLab's renderer unchanged.
 *
 * How: each notebook's own rendermime (the panel's clone) gets its factories wrapped, same
 * rank and order. A wrapped renderer is JupyterLab's own, with `renderModel` checked first:
 * the OutputArea hands it the output's model, which is already in its cell's output list, so
 * the cell that owns it is found by identity. Markdown cells and anything else that is no
 * cell's output are left alone. The rendermime's sanitizer is wrapped too (see
 * `gatedSanitizer`), for JupyterLab's own reading of output HTML.
 */

import { ICellModel, ICodeCellModel } from '@jupyterlab/cells';
import { INotebookModel } from '@jupyterlab/notebook';
import { IRenderMime, IRenderMimeRegistry } from '@jupyterlab/rendermime';

import { METADATA_KEY } from '../contract';
import { gateHtml } from '../untrusted/htmlGate';
import { gateOf, renderGated } from './gatedRender';

/** Whether a cell is one the model wrote (`metadata.chapyter.role` "generated"). */
function isGenerated(cell: ICellModel): boolean {
  const chapyter = cell.getMetadata(METADATA_KEY) as
    { role?: unknown } | undefined;
  return chapyter?.role === 'generated';
}

/** The code cell whose outputs hold `model` (by identity), or null. */
export function outputOwner(
  notebook: INotebookModel,
  model: unknown
): ICellModel | null {
  for (let i = 0; i < notebook.cells.length; i++) {
    const cell = notebook.cells.get(i);
    if (cell.type !== 'code') {
      continue;
    }
    const outputs = (cell as ICodeCellModel).outputs;
    for (let j = 0; j < outputs.length; j++) {
      if (outputs.get(j) === model) {
        return cell;
      }
    }
  }
  return null;
}

/** Whether an output renders through the gate: a generated cell's, or untrusted. */
export function isGatedOutput(
  notebook: INotebookModel | null,
  model: IRenderMime.IMimeModel
): boolean {
  const cell = notebook ? outputOwner(notebook, model) : null;
  return cell !== null && (!model.trusted || isGenerated(cell));
}

/** Whether `html` is the HTML of a gated output of the notebook (a string compare). */
export function isGatedHtml(
  notebook: INotebookModel | null,
  html: string
): boolean {
  for (let i = 0; notebook && i < notebook.cells.length; i++) {
    const cell = notebook.cells.get(i);
    if (cell.type !== 'code') {
      continue;
    }
    const generated = isGenerated(cell);
    const outputs = (cell as ICodeCellModel).outputs;
    for (let j = 0; j < outputs.length; j++) {
      const output = outputs.get(j);
      if (!generated && output.trusted) {
        continue;
      }
      for (const [mime, value] of Object.entries(output.data)) {
        const text = Array.isArray(value) ? value.join('\n') : value;
        if (mime.includes('html') && text === html) {
          return true;
        }
      }
    }
  }
  return false;
}

/**
 * The rendermime's sanitizer, with the remote fetches taken out of what it returns for a
 * gated output's HTML. JupyterLab reads a code cell's HTML outputs for their headings (the
 * table of contents) by sanitising them and parsing the result in a detached element of the
 * page, where `<img src>` is fetched at once: without this, a gated output would still fetch.
 */
function gatedSanitizer(
  sanitizer: IRenderMime.ISanitizer,
  notebook: () => INotebookModel | null
): IRenderMime.ISanitizer {
  const gated = Object.create(sanitizer) as IRenderMime.ISanitizer;
  gated.sanitize = (dirty, options) => {
    const clean = sanitizer.sanitize(dirty, options);
    return isGatedHtml(notebook(), dirty)
      ? gateHtml(clean, 'sanitized').root.innerHTML
      : clean;
  };
  return gated;
}

/** The rendermimes already wrapped (a notebook is tracked once, but be sure). */
const wrapped = new WeakSet<IRenderMimeRegistry>();

/** JupyterLab's factory with its renderers' `renderModel` checked by `gated` first. */
function gatedFactory(
  factory: IRenderMime.IRendererFactory,
  mimeType: string,
  gated: (model: IRenderMime.IMimeModel) => boolean
): IRenderMime.IRendererFactory {
  return {
    safe: factory.safe,
    mimeTypes: [mimeType],
    defaultRank: factory.defaultRank,
    createRenderer: options => {
      const renderer = factory.createRenderer(options);
      if (gateOf(mimeType) === 'as-is') {
        return renderer;
      }
      // JupyterLab's renderers take a second argument (`keepExisting`): passed on as is.
      const original = renderer.renderModel.bind(renderer) as (
        model: IRenderMime.IMimeModel,
        keepExisting?: boolean
      ) => Promise<void>;
      const renderModel = (
        model: IRenderMime.IMimeModel,
        keepExisting?: boolean
      ): Promise<void> =>
        gated(model)
          ? renderGated(renderer, model, mimeType, options, () =>
              original(model)
            )
          : original(model, keepExisting);
      renderer.renderModel = renderModel;
      return renderer;
    }
  };
}

/** Wrap every factory of a notebook's rendermime (see the file's comment). */
export function gateRendermime(
  rendermime: IRenderMimeRegistry,
  notebook: () => INotebookModel | null
): void {
  if (wrapped.has(rendermime)) {
    return;
  }
  wrapped.add(rendermime);
  // Read by the cells when they need it: replaced in place, for every cell of the notebook.
  (rendermime as { sanitizer: IRenderMime.ISanitizer }).sanitizer =
    gatedSanitizer(rendermime.sanitizer, notebook);
  const gated = (model: IRenderMime.IMimeModel) =>
    isGatedOutput(notebook(), model);
  // In their order of preference, so that equal ranks keep their order.
  for (const mimeType of rendermime.mimeTypes) {
    const factory = rendermime.getFactory(mimeType);
    const rank = rendermime.getRank(mimeType);
    if (factory) {
      rendermime.addFactory(gatedFactory(factory, mimeType, gated), rank);
    }
  }
}
