/**
 * Untrusted HTML (an output the model's code made) made safe to show: parsed in an inert
 * document (DOMParser: nothing there runs or loads), scripts, `on*` handlers and
 * `javascript:` addresses removed, every fetch from another host taken out and held (with what
 * puts it back on a click), stylesheets scoped to the output (`cssGate.ts`), iframes
 * sandboxed. Only then is it imported into the page: untrusted text never reaches the
 * `innerHTML` of a live element. The rule of what fetches is `remoteContent.ts`.
 */

import {
  gateStyleAttribute,
  gateStyleSheet,
  IHeldCss,
  SheetParser
} from './cssGate';
import {
  attributeAddresses,
  cssAddresses,
  IFoundAddress,
  IRemoteResource,
  remoteOnly
} from './remoteContent';

const SVG_NS = 'http://www.w3.org/2000/svg';
/** The attribute naming an output's scope (its stylesheets apply inside it only). */
export const SCOPE_ATTRIBUTE = 'data-jp-chapyter-scope';
const TARGET_ATTRIBUTE = 'data-jp-chapyter-target';
const SLOT_ATTRIBUTE = 'data-jp-chapyter-slot';
const HIDDEN_ATTRIBUTE = 'data-jp-chapyter-hidden';

/** How a held fetch is put back. */
export type Restore =
  /** Set an attribute of the element marked `target`. */
  | { type: 'attribute'; target: number; name: string; value: string }
  /** Set a declaration of that element's `style`. */
  | {
      type: 'style';
      target: number;
      property: string;
      value: string;
      priority: string;
    }
  /** Add (scoped) CSS to the output. */
  | { type: 'css'; css: string }
  /** Fetch a stylesheet and add it, scoped and gated in turn. */
  | { type: 'stylesheet'; url: string };

/** A fetch held back, shown as a placeholder until the user asks for it. */
export interface IHeldResource {
  /** What it would fetch. */
  resource: IRemoteResource;
  /** How it is put back. */
  restore: Restore;
  /** What the placeholder adds to its noun, e.g. an image's alt text in quotes. */
  detail?: string;
}

/** Untrusted HTML as it may be shown. */
export interface IGatedHtml {
  /** The content, still in the inert document: import it with {@link showGated}. */
  root: HTMLElement;
  /** The scope's selector (the root carries it). */
  scope: string;
  /** Fetches held back, each with a placeholder slot in `root`. */
  held: IHeldResource[];
  /** Fetches removed for good (redirects, `<base>`, prefetches, script sources). */
  removed: IRemoteResource[];
  /** How many scripts were removed. */
  scripts: number;
}

/** `html` parsed in an inert document. */
export function parseHtml(html: string): Document {
  return new DOMParser().parseFromString(html, 'text/html');
}

function isSvg(element: Element): boolean {
  return element.namespaceURI === SVG_NS;
}

function attributesOf(element: Element): [string, string][] {
  return Array.from(element.attributes, a => [a.name, a.value]);
}

function tagOf(element: Element): string {
  return element.localName.toLowerCase();
}

/** Every address a parsed document would fetch, remote or not, in document order. */
export function documentAddresses(root: Node): IFoundAddress[] {
  const found: IFoundAddress[] = [];
  const document = root.ownerDocument ?? (root as Document);
  // NodeFilter.SHOW_ELEMENT | NodeFilter.SHOW_COMMENT (the constants need a window).
  const walker = document.createTreeWalker(root, 0x1 | 0x80);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    if (node.nodeType === 8) {
      // `<?xml-stylesheet href=...?>` in an SVG read as HTML is a comment.
      const text = (node as Comment).data;
      const href =
        /^\?xml-stylesheet\b[\s\S]*?\bhref\s*=\s*(?:"([^"]*)"|'([^']*)')/i.exec(
          text
        );
      if (href) {
        found.push({ address: decode(href[1] ?? href[2]), kind: 'stylesheet' });
      }
      continue;
    }
    const element = node as Element;
    const tag = tagOf(element);
    found.push(
      ...attributeAddresses(tag, attributesOf(element), isSvg(element), html =>
        documentAddresses(parseHtml(html))
      )
    );
    if (tag === 'style') {
      found.push(...cssAddresses(element.textContent ?? ''));
    }
  }
  return found;
}

function decode(text: string): string {
  const textarea = parseHtml('').createElement('textarea');
  textarea.innerHTML = text;
  return textarea.value;
}

/** Elements removed whole: they run code, redirect, re-base addresses or hold inert markup. */
const REMOVED = new Set([
  'script',
  'template',
  'base',
  'meta',
  'frame',
  'frameset',
  'applet',
  'portal',
  'fencedframe'
]);

/** Parents a placeholder may not be put in: it goes before them instead. */
const CLOSED_PARENTS = new Set([
  'table',
  'thead',
  'tbody',
  'tfoot',
  'tr',
  'colgroup',
  'select',
  'optgroup',
  'picture',
  'video',
  'audio',
  'object',
  'map',
  'math'
]);

const SCRIPT_URL = /^(?:javascript|vbscript|livescript):/i;

/** Whether an attribute runs code: handlers, script addresses, SVG animation of addresses. */
function runsCode(element: Element, name: string, value: string): boolean {
  if (name.startsWith('on') || name === 'xml:base' || name === 'ping') {
    return true;
  }
  // eslint-disable-next-line no-control-regex
  const address = value.replace(/[\x00-\x20]/g, '');
  if (SCRIPT_URL.test(address)) {
    return true;
  }
  const tag = tagOf(element);
  return (
    ['iframe', 'object', 'embed'].includes(tag) &&
    ['src', 'data'].includes(name) &&
    /^data:/i.test(address)
  );
}

/**
 * Untrusted HTML as it may be shown in the element selected by `[scope=id]`: see the file's
 * comment. `parse` parses stylesheets (the browser's parser by default).
 */
export function gateHtml(
  html: string,
  scopeId: string,
  parse?: SheetParser
): IGatedHtml {
  const document = parseHtml(html);
  const root = document.createElement('div');
  const scope = `[${SCOPE_ATTRIBUTE}="${scopeId}"]`;
  root.setAttribute(SCOPE_ATTRIBUTE, scopeId);
  const gated: IGatedHtml = { root, scope, held: [], removed: [], scripts: 0 };
  let targets = 0;
  const target = (element: Element): number => {
    const known = element.getAttribute(TARGET_ATTRIBUTE);
    if (known !== null) {
      return Number(known);
    }
    element.setAttribute(TARGET_ATTRIBUTE, String(targets));
    return targets++;
  };
  const anchor = (element: Element): Element | null => {
    let at: Element = element;
    while (
      at.parentElement &&
      at.parentElement !== root &&
      (isSvg(at.parentElement) || CLOSED_PARENTS.has(tagOf(at.parentElement)))
    ) {
      at = at.parentElement;
    }
    return at === root || !root.contains(at) ? null : at;
  };
  const hold = (
    element: Element | null,
    resource: IRemoteResource,
    restore: Restore
  ) => {
    const slot = document.createElement('span');
    slot.setAttribute(SLOT_ATTRIBUTE, String(gated.held.length));
    const alt = element?.getAttribute('alt');
    gated.held.push({
      resource,
      restore,
      ...(alt ? { detail: ` "${alt}"` } : {})
    });
    const before = element ? anchor(element) : null;
    if (before) {
      before.before(slot);
    } else {
      root.prepend(slot);
    }
  };
  const holdCss = (element: Element, held: IHeldCss[]) => {
    for (const { resource, css } of held) {
      hold(
        element,
        resource,
        css === undefined
          ? { type: 'stylesheet', url: resource.url }
          : { type: 'css', css }
      );
    }
  };

  // The body's own background becomes the root's.
  const background = remoteOnly(
    attributeAddresses('body', attributesOf(document.body), false)
  );
  root.append(...Array.from(document.head.childNodes));
  root.append(...Array.from(document.body.childNodes));
  for (const resource of background) {
    hold(null, resource, {
      type: 'style',
      target: target(root),
      property: 'background-image',
      value: `url("${resource.url.replace(/["\\\n]/g, '\\$&')}")`,
      priority: ''
    });
  }

  for (const element of Array.from(root.querySelectorAll('*'))) {
    if (!root.contains(element)) {
      continue;
    }
    const tag = tagOf(element);
    const attributes = attributesOf(element);
    const svg = isSvg(element);
    const found = attributeAddresses(tag, attributes, svg, text =>
      documentAddresses(parseHtml(text))
    );
    const animatesAddress =
      svg &&
      /^(?:set|animate)/.test(tag) &&
      /href|src/i.test(element.getAttribute('attributeName') ?? '');
    if (
      REMOVED.has(tag) ||
      animatesAddress ||
      (tag === 'link' && !found.some(f => f.kind === 'stylesheet'))
    ) {
      gated.scripts += tag === 'script' ? 1 : 0;
      gated.removed.push(...remoteOnly(found));
      element.remove();
      continue;
    }
    for (const [name, value] of attributes) {
      if (runsCode(element, name, value)) {
        element.removeAttribute(name);
      }
    }
    if (tag === 'iframe') {
      element.setAttribute('sandbox', '');
    }
    if (tag === 'link') {
      // A stylesheet: fetched on a click (remote) or at once (local), always scoped.
      const href = found.find(f => f.kind === 'stylesheet')!.address;
      const [resource] = remoteOnly([{ address: href, kind: 'stylesheet' }]);
      if (resource) {
        hold(element, resource, { type: 'stylesheet', url: resource.url });
      } else {
        const slot = document.createElement('span');
        slot.setAttribute('data-jp-chapyter-local-stylesheet', href);
        element.before(slot);
      }
      element.remove();
      continue;
    }
    if (tag === 'style') {
      const sheet = gateStyleSheet(element.textContent ?? '', scope, parse);
      element.textContent = sheet.text;
      holdCss(element, sheet.held);
    }
    if (element.hasAttribute('style')) {
      for (const held of gateStyleAttribute(element)) {
        hold(element, held.resource, {
          type: 'style',
          target: target(element),
          property: held.property,
          value: held.value,
          priority: held.priority
        });
      }
    }
    const byAttribute = new Map<string, IRemoteResource[]>();
    for (const item of found) {
      if (item.attribute && item.attribute !== 'style') {
        const [resource] = remoteOnly([item]);
        if (resource) {
          byAttribute.set(item.attribute, [
            ...(byAttribute.get(item.attribute) ?? []),
            resource
          ]);
        }
      }
    }
    for (const [name, resources] of byAttribute) {
      const value = element.getAttribute(name) ?? '';
      element.removeAttribute(name);
      if (
        ['img', 'input'].includes(tag) &&
        !element.hasAttribute('src') &&
        !element.hasAttribute('srcset')
      ) {
        // Nothing left to show but a broken image: hidden until its placeholder loads it.
        element.setAttribute('hidden', '');
        element.setAttribute(HIDDEN_ATTRIBUTE, '');
      }
      if (name === 'srcdoc') {
        // The page loads as a whole: one placeholder, named after its first fetch.
        hold(element, resources[0], {
          type: 'attribute',
          target: target(element),
          name,
          value
        });
        continue;
      }
      for (const resource of resources) {
        // A srcset comes back as that one candidate: exactly the fetch the user asked for.
        hold(element, resource, {
          type: 'attribute',
          target: target(element),
          name,
          value: name.endsWith('srcset') ? resource.url : value
        });
      }
    }
  }
  return gated;
}

/** Put one held fetch back in a shown output (`root` is the live root of the output). */
export async function restore(
  root: HTMLElement,
  held: IHeldResource,
  fetchText: (url: string) => Promise<string> = fetchStylesheet
): Promise<void> {
  const change = held.restore;
  const find = (target: number) =>
    root.getAttribute(TARGET_ATTRIBUTE) === String(target)
      ? root
      : root.querySelector(`[${TARGET_ATTRIBUTE}="${target}"]`);
  if (change.type === 'attribute') {
    const element = find(change.target);
    if (change.name === 'srcset') {
      element?.removeAttribute('src');
    }
    element?.setAttribute(change.name, change.value);
    if (element?.hasAttribute(HIDDEN_ATTRIBUTE)) {
      element.removeAttribute('hidden');
      element.removeAttribute(HIDDEN_ATTRIBUTE);
    }
  } else if (change.type === 'style') {
    (find(change.target) as HTMLElement | null)?.style.setProperty(
      change.property,
      change.value,
      change.priority
    );
  } else {
    const css =
      change.type === 'css' ? change.css : await fetchText(change.url);
    const style = root.ownerDocument.createElement('style');
    const scope = `[${SCOPE_ATTRIBUTE}="${root.getAttribute(SCOPE_ATTRIBUTE)}"]`;
    // Fetched text is untrusted too: scoped, and its own remote fetches dropped.
    style.textContent =
      change.type === 'css' ? css : gateStyleSheet(css, scope).text;
    root.appendChild(style);
  }
}

/** A stylesheet's text, fetched with no credentials and no referrer. */
export async function fetchStylesheet(url: string): Promise<string> {
  const absolute = url.startsWith('//') ? `${location.protocol}${url}` : url;
  const response = await fetch(absolute, {
    credentials: 'omit',
    referrerPolicy: 'no-referrer'
  });
  if (!response.ok) {
    throw new Error(`${response.status} ${response.statusText}`);
  }
  return response.text();
}

/** The elements of a gated output, made in the page with placeholders in their slots. */
export function showGated(
  host: HTMLElement,
  gated: IGatedHtml,
  placeholder: (held: IHeldResource, root: HTMLElement) => HTMLElement,
  localStylesheet: (url: string, root: HTMLElement) => void
): HTMLElement {
  const root = host.ownerDocument.importNode(gated.root, true);
  for (const slot of Array.from(root.querySelectorAll(`[${SLOT_ATTRIBUTE}]`))) {
    const held = gated.held[Number(slot.getAttribute(SLOT_ATTRIBUTE))];
    slot.replaceWith(placeholder(held, root));
  }
  for (const slot of Array.from(
    root.querySelectorAll('[data-jp-chapyter-local-stylesheet]')
  )) {
    localStylesheet(
      slot.getAttribute('data-jp-chapyter-local-stylesheet')!,
      root
    );
    slot.remove();
  }
  host.appendChild(root);
  return root;
}

/** The remote fetches of a parsed document, each address and kind once. */
export function remoteInDocument(root: Node): IRemoteResource[] {
  return remoteOnly(documentAddresses(root));
}
