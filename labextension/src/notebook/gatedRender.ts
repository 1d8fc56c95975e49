/**
 * How a gated output renders (`outputGate.ts` decides which are gated), by MIME type:
 * HTML and Markdown through the HTML gate (no scripts, remote fetches as placeholders that
 * load on a click, styles scoped to the output); JavaScript never runs; types whose renderers
 * may fetch and that are not sanitised here (vega, plotly, widgets, geojson, ...) wait behind a
 * "Render" button naming the hosts their data names; text, errors, base64 images, SVG (shown
 * as an image, which fetches nothing), LaTeX and the JSON tree render at once, unchanged.
 */

import { IRenderMime, removeMath, replaceMath } from '@jupyterlab/rendermime';

import {
  gateHtml,
  IHeldResource,
  restore,
  showGated
} from '../untrusted/htmlGate';
import {
  IRemoteResource,
  isJsonMime,
  jsonAddresses,
  remoteOnly
} from '../untrusted/remoteContent';
import { resourcePlaceholder } from '../untrusted/render';

/** What the gate does with a MIME type. */
export type Gate = 'as-is' | 'html' | 'markdown' | 'script' | 'on-click';

/** Types JupyterLab renders without fetching from another host or running code. */
const AS_IS = new Set([
  'text/plain',
  'application/vnd.jupyter.stdout',
  'application/vnd.jupyter.stderr',
  'image/png',
  'image/jpeg',
  'image/gif',
  'image/webp',
  'image/bmp',
  'image/svg+xml',
  'application/json',
  'text/latex',
  'application/pdf'
]);

const SCRIPTS = new Set([
  'application/javascript',
  'text/javascript',
  'application/x-javascript',
  'application/ecmascript'
]);

/** The gate of a MIME type. */
export function gateOf(mimeType: string): Gate {
  if (AS_IS.has(mimeType)) {
    return 'as-is';
  }
  if (mimeType === 'text/html') {
    return 'html';
  }
  if (mimeType === 'text/markdown') {
    return 'markdown';
  }
  return SCRIPTS.has(mimeType) ? 'script' : 'on-click';
}

/** What a placeholder calls a fetch of each kind. */
const NOUNS: { [kind: string]: string } = {
  image: 'image',
  stylesheet: 'stylesheet',
  font: 'font',
  frame: 'embedded page',
  media: 'media',
  data: 'data'
};

let scopes = 0;

function note(text: string): HTMLElement {
  const element = document.createElement('div');
  element.className = 'jp-Chapyter-gateNote';
  element.setAttribute('role', 'note');
  element.textContent = text;
  return element;
}

/** A stylesheet of the notebook's own server, fetched and scoped like the output's own. */
function localStylesheet(
  resolver: IRenderMime.IResolver | null
): (url: string, root: HTMLElement) => void {
  return (url, root) => {
    void (async () => {
      const path = resolver ? await resolver.resolveUrl(url) : url;
      const address = resolver ? await resolver.getDownloadUrl(path) : url;
      await restore(root, {
        resource: { url: address, host: location.host, kind: 'stylesheet' },
        restore: { type: 'stylesheet', url: address }
      });
    })().catch(error =>
      console.warn(`chapyter-ext: stylesheet ${url} not loaded`, error)
    );
  };
}

/** Relative addresses read against the notebook, as JupyterLab does for its outputs. */
async function resolveLocal(
  root: HTMLElement,
  options: IRenderMime.IRendererOptions
): Promise<void> {
  const resolver = options.resolver;
  for (const element of Array.from(root.querySelectorAll('[src], a[href]'))) {
    const name = element.hasAttribute('src') ? 'src' : 'href';
    const value = element.getAttribute(name) ?? '';
    if (element instanceof HTMLAnchorElement) {
      element.target = '_blank';
      element.rel = 'noopener noreferrer';
    }
    if (!resolver || value.startsWith('#') || !resolver.isLocal?.(value)) {
      continue;
    }
    try {
      const path = await resolver.resolveUrl(value);
      const url = await resolver.getDownloadUrl(path);
      if (name === 'href' && options.linkHandler) {
        element.removeAttribute('target');
        options.linkHandler.handleLink(element as HTMLElement, path);
      } else {
        element.setAttribute(name, url);
      }
    } catch {
      // Left as written: it points at the server, and fails there.
    }
  }
}

/** Untrusted HTML into `host`, gated. */
async function showHtml(
  host: HTMLElement,
  html: string,
  options: IRenderMime.IRendererOptions
): Promise<HTMLElement> {
  const gated = gateHtml(html, `o${++scopes}`);
  const root = showGated(
    host,
    gated,
    (held: IHeldResource, live: HTMLElement) =>
      resourcePlaceholder({
        noun: NOUNS[held.resource.kind] ?? held.resource.kind,
        detail: held.detail,
        host: held.resource.host,
        url: held.resource.url,
        load: () => restore(live, held)
      }),
    localStylesheet(options.resolver)
  );
  root.classList.add('jp-Chapyter-gatedRoot');
  if (gated.scripts) {
    host.prepend(
      note(
        `${gated.scripts === 1 ? 'A script' : `${gated.scripts} scripts`} in this output did not run: ` +
          'it was written by the model or is not trusted.'
      )
    );
  }
  await resolveLocal(root, options);
  return root;
}

/** The hosts a data-driven output names, for its "Render" button. */
function namedHosts(model: IRenderMime.IMimeModel, mimeType: string): string[] {
  const data = model.data[mimeType];
  let value: unknown = data;
  if (typeof data === 'string' && isJsonMime(mimeType)) {
    try {
      value = JSON.parse(data);
    } catch {
      value = null;
    }
  }
  const found: IRemoteResource[] = remoteOnly(jsonAddresses(value));
  return [...new Set(found.map(resource => resource.host))];
}

/** A button that renders the output with JupyterLab's renderer once clicked. */
function renderOnClick(
  host: HTMLElement,
  model: IRenderMime.IMimeModel,
  mimeType: string,
  renderOriginal: () => Promise<void>
): void {
  const hosts = namedHosts(model, mimeType);
  const where = hosts.length ? hosts.join(', ') : 'the network';
  const box = document.createElement('div');
  box.className = 'jp-Chapyter-imagePlaceholder jp-Chapyter-renderLater';
  const label = document.createElement('span');
  label.className = 'jp-Chapyter-imagePlaceholderText';
  label.textContent = `${mimeType} output: its renderer may load from ${where} or run code.`;
  const button = document.createElement('button');
  button.type = 'button';
  button.className = 'jp-Chapyter-chatButton jp-Chapyter-imageLoad';
  button.textContent = `Render (may load from ${where})`;
  button.addEventListener('click', () => {
    host.replaceChildren();
    host.classList.remove('jp-Chapyter-gatedOutput');
    void renderOriginal();
  });
  box.append(label, button);
  host.appendChild(box);
}

/** Render a gated output into JupyterLab's renderer `renderer` (see the file's comment). */
export async function renderGated(
  renderer: IRenderMime.IRenderer,
  model: IRenderMime.IMimeModel,
  mimeType: string,
  options: IRenderMime.IRendererOptions,
  renderOriginal: () => Promise<void>
): Promise<void> {
  const gate = gateOf(mimeType);
  if (gate === 'as-is') {
    return renderOriginal();
  }
  const host = renderer.node;
  host.replaceChildren();
  host.classList.add('jp-Chapyter-gatedOutput');
  const source = model.data[mimeType];
  const text = typeof source === 'string' ? source : JSON.stringify(source);
  if (gate === 'script') {
    host.appendChild(
      note(
        'This JavaScript output did not run: it was written by the model or is not trusted.'
      )
    );
    return;
  }
  if (gate === 'on-click') {
    renderOnClick(host, model, mimeType, renderOriginal);
    return;
  }
  if (gate === 'html') {
    const html = model.trusted ? text : options.sanitizer.sanitize(text);
    await showHtml(host, html, options);
    return;
  }
  let html: string;
  if (options.markdownParser) {
    const parts = removeMath(text);
    html = replaceMath(
      await options.markdownParser.render(parts['text']),
      parts['math']
    );
  } else {
    const pre = document.createElement('pre');
    pre.textContent = text;
    html = pre.outerHTML;
  }
  if (!model.trusted) {
    html = options.sanitizer.sanitize(html);
  }
  const root = await showHtml(host, html, options);
  await options.latexTypesetter?.typeset(root);
}
