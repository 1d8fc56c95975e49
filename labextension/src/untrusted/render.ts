/**
 * Elements for untrusted text, built with `createElement` and text nodes only (never
 * `innerHTML`), so nothing in the text becomes markup and nothing is fetched while it is
 * shown: Markdown trees from `markdown.ts`, code with its invisible characters shown, and a
 * remote image as a placeholder naming its host, loaded on a click.
 */

import { describeInvisible, codePointLabel, splitInvisible } from './invisible';
import { IImageNode, MarkdownNode } from './markdown';

/** What {@link renderMarkdown} needs from its caller. */
export interface IRenderHooks {
  /**
   * The element a code block becomes (a `<pre>`, maybe wrapped with buttons); `fenced` false
   * for a block indented four columns.
   */
  codeBlock(code: string, language: string, fenced: boolean): HTMLElement;
}

/** What {@link renderMarkdown} made that still needs work once in the page. */
export interface IRendered {
  /** The math elements, each holding its TeX with delimiters, for a typesetter. */
  math: HTMLElement[];
}

/** `text` as nodes, each invisible character shown as a marked "U+XXXX". */
export function revealedText(text: string): DocumentFragment {
  const fragment = document.createDocumentFragment();
  for (const piece of splitInvisible(text)) {
    if (piece.kind === 'text') {
      fragment.appendChild(document.createTextNode(piece.text));
    } else {
      const mark = document.createElement('span');
      mark.className = 'jp-Chapyter-invisibleChar';
      mark.textContent = codePointLabel(piece.codePoint);
      mark.title = `Invisible character: ${describeInvisible(piece.codePoint)}`;
      fragment.appendChild(mark);
    }
  }
  return fragment;
}

/** Fill `into` with `code`, invisible characters shown; whether it held any. */
export function showCode(into: HTMLElement, code: string): boolean {
  const fragment = revealedText(code);
  const marked = fragment.querySelector('.jp-Chapyter-invisibleChar') !== null;
  into.replaceChildren(fragment);
  return marked;
}

/** The warning shown above code holding invisible characters. */
export function invisibleWarning(): HTMLElement {
  const note = document.createElement('div');
  note.className = 'jp-Chapyter-invisibleWarning';
  note.setAttribute('role', 'note');
  note.textContent =
    'This code holds invisible or direction-changing characters, shown as U+…: ' +
    'they may make it read differently from what runs.';
  return note;
}

/** What {@link resourcePlaceholder} shows and does. */
export interface IPlaceholderOptions {
  /** What would be fetched, in lower case: "image", "stylesheet", "embedded page". */
  noun: string;
  /** A detail after the noun, e.g. the image's alt text in quotes. */
  detail?: string;
  /** The host it would come from. */
  host: string;
  /** The full address, for the tooltip. */
  url: string;
  /** Fetch it; the placeholder goes once this resolves, and says why when it throws. */
  load(box: HTMLElement): void | Promise<void>;
}

/**
 * A remote resource held back: where it would come from, and a button that fetches exactly
 * it. One look for the chat's answers and the notebook's outputs.
 */
export function resourcePlaceholder(options: IPlaceholderOptions): HTMLElement {
  const { noun, host, url } = options;
  const box = document.createElement('span');
  box.className = 'jp-Chapyter-imagePlaceholder';
  const label = document.createElement('span');
  label.className = 'jp-Chapyter-imagePlaceholderText';
  const title = noun[0].toUpperCase() + noun.slice(1);
  label.textContent = `${title}${options.detail ?? ''} from ${host}`;
  label.title = url;
  const load = document.createElement('button');
  load.type = 'button';
  load.className = 'jp-Chapyter-chatButton jp-Chapyter-imageLoad';
  load.textContent = 'Load';
  load.setAttribute('aria-label', `Load ${noun} from ${host}`);
  load.title = `Fetch ${url}`;
  load.addEventListener('click', async () => {
    load.disabled = true;
    try {
      await options.load(box);
      box.remove();
    } catch (error) {
      box.classList.add('jp-mod-blocked');
      label.textContent = `${title} from ${host} could not be loaded (${(error as Error).message})`;
      load.remove();
    }
  });
  box.append(label, load);
  return box;
}

/** An image of untrusted text: a `data:` image, else a placeholder that loads on a click. */
export function imageElement(node: IImageNode): HTMLElement {
  const source = node.source;
  if (source.kind === 'inline') {
    const image = document.createElement('img');
    image.alt = node.alt;
    if (node.title) {
      image.title = node.title;
    }
    image.src = source.url;
    return image;
  }
  const alt = node.alt ? ` "${node.alt}"` : '';
  if (source.kind === 'blocked') {
    const box = document.createElement('span');
    box.className = 'jp-Chapyter-imagePlaceholder jp-mod-blocked';
    const label = document.createElement('span');
    label.className = 'jp-Chapyter-imagePlaceholderText';
    label.textContent = `Image${alt} not shown (${source.reason})`;
    box.appendChild(label);
    return box;
  }
  return resourcePlaceholder({
    noun: 'image',
    detail: alt,
    host: source.host,
    url: source.url,
    load: box => {
      const image = document.createElement('img');
      image.alt = node.alt;
      image.title = node.title || source.url;
      image.referrerPolicy = 'no-referrer';
      image.src = source.url;
      box.before(image);
    }
  });
}

function build(node: MarkdownNode, hooks: IRenderHooks, out: IRendered): Node {
  switch (node.kind) {
    case 'text':
      return document.createTextNode(node.text);
    case 'code':
      return hooks.codeBlock(node.code, node.language, node.fenced);
    case 'html': {
      const raw = document.createElement(node.block ? 'div' : 'span');
      raw.className = 'jp-Chapyter-rawHtml';
      raw.textContent = node.text;
      raw.title = 'HTML in the answer, shown as text';
      return raw;
    }
    case 'math': {
      const math = document.createElement(node.display ? 'div' : 'span');
      math.className = 'jp-Chapyter-math';
      math.textContent = node.tex;
      out.math.push(math);
      return math;
    }
    case 'image':
      return imageElement(node);
    case 'link': {
      const link = node.href
        ? document.createElement('a')
        : document.createElement('span');
      if (link instanceof HTMLAnchorElement && node.href) {
        link.href = node.href;
        link.target = '_blank';
        link.rel = 'noopener noreferrer';
        link.title = node.title ? `${node.title}\n${node.href}` : node.href;
      } else {
        link.className = 'jp-Chapyter-inertLink';
        link.title = `Not a link: ${node.written}`;
      }
      for (const child of node.children) {
        link.appendChild(build(child, hooks, out));
      }
      return link;
    }
    case 'element': {
      if (node.tag === 'checkbox') {
        const box = document.createElement('input');
        box.type = 'checkbox';
        box.disabled = true;
        box.checked = !!node.checked;
        return box;
      }
      const element = document.createElement(node.tag);
      if (node.start !== undefined && element instanceof HTMLOListElement) {
        element.start = node.start;
      }
      if (node.align) {
        element.style.textAlign = node.align;
      }
      for (const child of node.children) {
        element.appendChild(build(child, hooks, out));
      }
      return element;
    }
  }
}

/** Replace the content of `host` with the elements of `nodes`. */
export function renderMarkdown(
  host: HTMLElement,
  nodes: readonly MarkdownNode[],
  hooks: IRenderHooks
): IRendered {
  const out: IRendered = { math: [] };
  const fragment = document.createDocumentFragment();
  for (const node of nodes) {
    fragment.appendChild(build(node, hooks, out));
  }
  host.replaceChildren(fragment);
  return out;
}
