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
  /** The element a code block becomes (a `<pre>`, maybe wrapped with buttons). */
  codeBlock(code: string, language: string): HTMLElement;
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
  const box = document.createElement('span');
  box.className = 'jp-Chapyter-imagePlaceholder';
  const label = document.createElement('span');
  label.className = 'jp-Chapyter-imagePlaceholderText';
  const alt = node.alt ? ` "${node.alt}"` : '';
  if (source.kind === 'blocked') {
    box.classList.add('jp-mod-blocked');
    label.textContent = `Image${alt} not shown (${source.reason})`;
    box.appendChild(label);
    return box;
  }
  label.textContent = `Image${alt} from ${source.host}`;
  label.title = source.url;
  const load = document.createElement('button');
  load.type = 'button';
  load.className = 'jp-Chapyter-chatButton jp-Chapyter-imageLoad';
  load.textContent = 'Load';
  load.setAttribute('aria-label', `Load image from ${source.host}`);
  load.title = `Fetch ${source.url}`;
  load.addEventListener('click', () => {
    const image = document.createElement('img');
    image.alt = node.alt;
    image.title = node.title || source.url;
    image.referrerPolicy = 'no-referrer';
    image.src = source.url;
    box.replaceWith(image);
  });
  box.append(label, load);
  return box;
}

function build(node: MarkdownNode, hooks: IRenderHooks, out: IRendered): Node {
  switch (node.kind) {
    case 'text':
      return document.createTextNode(node.text);
    case 'code':
      return hooks.codeBlock(node.code, node.language);
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
