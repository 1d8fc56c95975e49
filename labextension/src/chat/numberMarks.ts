/**
 * Checked numbers on screen: each number of an agent's answer marked as the server judged it
 * (`common/numberVerdicts.ts`). A number found in what the turn saw gets a subtle mark whose
 * hover or focus says where ("cell [4] output"); one found nowhere a visible mark saying "not
 * found in this turn's outputs", to screen readers too (`aria-description`); a trivial one
 * (a bare 0 to 10) none.
 *
 * The verdicts' offsets point into the Markdown source, not into what it rendered to, so each
 * verdict's text is looked for, in order, in the answer's text outside code: the pure part
 * ({@link placeMarks}) decides where, {@link markNumbers} wraps those places.
 */

import type { INumberVerdict } from '../common/events';

/** What a number not found is said to be, in the mark and to screen readers. */
export const NOT_FOUND_TEXT = "not found in this turn's outputs";

/** Where one verdict goes: text node `node`, characters `start` to `end`. */
export interface IMarkPlace {
  /** Index of the text node among those given. */
  node: number;
  /** Start within that node's text. */
  start: number;
  /** End (exclusive). */
  end: number;
  /** The verdict marked there. */
  verdict: INumberVerdict;
}

/** Whether `text[start:end]` stands alone: no digit, letter or decimal point glued to it. */
function standsAlone(text: string, start: number, end: number): boolean {
  const before = start > 0 ? text[start - 1] : '';
  const after = text.slice(end, end + 2);
  if (/[\p{L}\p{N}_.]/u.test(before)) {
    return false;
  }
  return !/^([\p{L}\p{N}_]|[.,]\d)/u.test(after);
}

/**
 * Where each marked verdict (found, not found) goes among `texts` (the answer's text nodes
 * outside code, in order): the first standalone occurrence of its text after the previous
 * one placed. A verdict whose text cannot be found whole in one node is left unmarked (the
 * rendering changed it, or it straddles emphasis): never a mark on the wrong number.
 */
export function placeMarks(
  texts: readonly string[],
  verdicts: readonly INumberVerdict[]
): IMarkPlace[] {
  const places: IMarkPlace[] = [];
  let node = 0;
  let offset = 0;
  const ordered = [...verdicts].sort((a, b) => a.start - b.start);
  for (const verdict of ordered) {
    if (verdict.status === 'trivial' || !verdict.text) {
      continue;
    }
    let found: IMarkPlace | null = null;
    for (let n = node; n < texts.length && !found; n++) {
      let from = n === node ? offset : 0;
      for (;;) {
        const at = texts[n].indexOf(verdict.text, from);
        if (at < 0) {
          break;
        }
        const end = at + verdict.text.length;
        if (standsAlone(texts[n], at, end)) {
          found = { node: n, start: at, end, verdict };
          break;
        }
        from = at + 1;
      }
    }
    if (found) {
      places.push(found);
      node = found.node;
      offset = found.end;
    }
  }
  return places;
}

/** What hovering or focusing a mark says. */
export function markDescription(verdict: INumberVerdict): string {
  if (verdict.status !== 'found') {
    return `${verdict.text}: ${NOT_FOUND_TEXT}`;
  }
  const labels = verdict.where.map(source => source.label).filter(Boolean);
  const first = verdict.where[0]?.excerpt;
  const where = labels.length ? labels.join('; ') : 'what the turn saw';
  return `Found in ${where}${first ? `: “${first}”` : ''}`;
}

/** Text nodes of `root` a mark may go in: outside code, math and earlier marks. */
function markableTexts(root: HTMLElement): Text[] {
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT, {
    acceptNode(node) {
      const parent = node.parentElement;
      const skip = parent?.closest(
        'pre, code, .jp-Chapyter-codeBlock, .jp-Chapyter-math, .jp-Chapyter-rawHtml, ' +
          '.jp-Chapyter-imagePlaceholder, .jp-Chapyter-number'
      );
      return skip ? NodeFilter.FILTER_REJECT : NodeFilter.FILTER_ACCEPT;
    }
  });
  const texts: Text[] = [];
  while (walker.nextNode()) {
    texts.push(walker.currentNode as Text);
  }
  return texts;
}

/**
 * One mark: the number, described by `aria-description`, which screen readers read and the
 * style shows on hover and focus (`::before`): the answer's text stays the answer's, for
 * copying and for everything that reads it.
 */
function markElement(verdict: INumberVerdict, text: string): HTMLElement {
  const mark = document.createElement('span');
  const found = verdict.status === 'found';
  mark.className = `jp-Chapyter-number ${found ? 'jp-mod-found' : 'jp-mod-notFound'}`;
  mark.tabIndex = 0;
  mark.textContent = text;
  mark.setAttribute('aria-description', markDescription(verdict));
  return mark;
}

/** Mark `verdicts` in the rendered answer `root`; how many marks were placed. */
export function markNumbers(
  root: HTMLElement,
  verdicts: readonly INumberVerdict[] | undefined
): number {
  if (!verdicts || !verdicts.length) {
    return 0;
  }
  const nodes = markableTexts(root);
  const places = placeMarks(
    nodes.map(node => node.data),
    verdicts
  );
  // From the last: splitting a node leaves the offsets before the split as they were.
  for (let i = places.length - 1; i >= 0; i--) {
    const { node, start, end, verdict } = places[i];
    const text = nodes[node];
    const rest = text.splitText(end);
    const number = text.splitText(start);
    rest.parentNode?.insertBefore(markElement(verdict, number.data), rest);
    number.remove();
  }
  return places.length;
}
