/**
 * Untrusted Markdown (a model's answer) read into a tree of what may be shown, with the
 * `marked` lexer JupyterLab itself uses. Raw HTML is kept as the text it is, never markup;
 * a code block carries its source exactly as the model sent it, the one string both shown
 * and acted on; images say where they would be fetched from; links say whether they may
 * open. Pure: no DOM. `render.ts` makes elements of the tree.
 */

import {
  Marked,
  type Token,
  type TokenizerAndRendererExtension,
  type Tokens
} from 'marked';

import { imageSource, ImageSource, linkHref } from './urls';

/** The elements the tree may hold (no attributes but those of {@link IElementNode}). */
export type MarkdownTag =
  | 'p'
  | 'h1'
  | 'h2'
  | 'h3'
  | 'h4'
  | 'h5'
  | 'h6'
  | 'blockquote'
  | 'ul'
  | 'ol'
  | 'li'
  | 'hr'
  | 'table'
  | 'thead'
  | 'tbody'
  | 'tr'
  | 'th'
  | 'td'
  | 'em'
  | 'strong'
  | 'del'
  | 'code'
  | 'br'
  | 'checkbox';

/** Text, shown as it is. */
export interface ITextNode {
  kind: 'text';
  text: string;
}

/** An element of {@link MarkdownTag}, with the few attributes Markdown gives. */
export interface IElementNode {
  kind: 'element';
  tag: MarkdownTag;
  children: MarkdownNode[];
  /** An ordered list's first number. */
  start?: number;
  /** A table cell's alignment. */
  align?: 'left' | 'center' | 'right';
  /** A task list checkbox's state. */
  checked?: boolean;
}

/** A fenced or indented code block. */
export interface ICodeNode {
  kind: 'code';
  /** The block's source as the model sent it: what is shown, inserted, run, copied. */
  code: string;
  /** The fence's language, or "". */
  language: string;
  /** Whether it was fenced (false: indented four columns). */
  fenced: boolean;
}

/** A link; `href` null when its address may not be opened (it is shown as text). */
export interface ILinkNode {
  kind: 'link';
  href: string | null;
  /** The address as written, for the tooltip. */
  written: string;
  title: string;
  children: MarkdownNode[];
}

/** An image, fetched only on request unless it is a `data:` image. */
export interface IImageNode {
  kind: 'image';
  alt: string;
  title: string;
  source: ImageSource;
}

/** TeX between math delimiters, delimiters included (for the page's typesetter). */
export interface IMathNode {
  kind: 'math';
  tex: string;
  display: boolean;
}

/** Raw HTML of the answer, shown as the literal text it is. */
export interface IHtmlNode {
  kind: 'html';
  text: string;
  block: boolean;
}

/** One node of an answer's tree. */
export type MarkdownNode =
  | ITextNode
  | IElementNode
  | ICodeNode
  | ILinkNode
  | IImageNode
  | IMathNode
  | IHtmlNode;

/** `$$...$$` or `\[...\]` on lines of their own. */
const blockMath: TokenizerAndRendererExtension = {
  name: 'blockMath',
  level: 'block',
  start: src => src.match(/^(?:\$\$|\\\[)/m)?.index,
  tokenizer: src => {
    const match = /^(\$\$[^$]+?\$\$|\\\[[\s\S]+?\\\])[ \t]*(?:\n|$)/.exec(src);
    return match
      ? { type: 'blockMath', raw: match[0], text: match[1] }
      : undefined;
  }
};

/** `$...$` (not `$5 and $6`), `$$...$$`, `\(...\)` and `\[...\]` inside text. */
const inlineMath: TokenizerAndRendererExtension = {
  name: 'inlineMath',
  level: 'inline',
  start: src => {
    const index = src.search(/\$|\\[([]/);
    return index < 0 ? undefined : index;
  },
  tokenizer: src => {
    const patterns: [RegExp, boolean][] = [
      [/^\$\$[^$]+?\$\$/, true],
      [/^\$(?![\s$])(?:\\.|[^\\$])+?(?<![\s\\])\$(?!\d)/, false],
      [/^\\\([\s\S]+?\\\)/, false],
      [/^\\\[[\s\S]+?\\\]/, true]
    ];
    for (const [pattern, display] of patterns) {
      const match = pattern.exec(src);
      if (match) {
        return { type: 'inlineMath', raw: match[0], text: match[0], display };
      }
    }
    return undefined;
  }
};

/** One lexer for every answer: GitHub-flavoured, with math; never renders HTML itself. */
const lexer = new Marked({ gfm: true, breaks: false });
lexer.use({ extensions: [blockMath, inlineMath] });

/** Named character references common in prose; any other stays as written. */
const ENTITIES: { [name: string]: string } = {
  amp: '&',
  lt: '<',
  gt: '>',
  quot: '"',
  apos: "'",
  nbsp: '\u00a0',
  copy: '©',
  reg: '®',
  trade: '™',
  hellip: '…',
  mdash: '—',
  ndash: '–',
  lsquo: '‘',
  rsquo: '’',
  ldquo: '“',
  rdquo: '”',
  laquo: '«',
  raquo: '»',
  bull: '•',
  middot: '·',
  times: '×',
  divide: '÷',
  plusmn: '±',
  minus: '−',
  deg: '°',
  micro: 'µ',
  le: '≤',
  ge: '≥',
  ne: '≠',
  asymp: '≈',
  infin: '∞',
  larr: '←',
  rarr: '→',
  uarr: '↑',
  darr: '↓',
  harr: '↔',
  euro: '€',
  pound: '£',
  yen: '¥',
  cent: '¢',
  sect: '§',
  para: '¶'
};

/** Character references in Markdown text decoded, as CommonMark says (not in code). */
export function decodeEntities(text: string): string {
  return text.replace(
    /&(?:#(\d{1,7})|#[xX]([0-9a-fA-F]{1,6})|([A-Za-z][A-Za-z0-9]{1,31}));/g,
    (whole, decimal: string, hex: string, name: string) => {
      if (name) {
        return ENTITIES[name] ?? whole;
      }
      const codePoint = decimal ? parseInt(decimal, 10) : parseInt(hex, 16);
      return codePoint > 0 && codePoint <= 0x10ffff
        ? String.fromCodePoint(codePoint)
        : '\ufffd';
    }
  );
}

function element(
  tag: MarkdownTag,
  children: MarkdownNode[],
  extra: Partial<IElementNode> = {}
): IElementNode {
  return { kind: 'element', tag, children, ...extra };
}

/** The tree of one block token. */
function block(token: Token, base: string): MarkdownNode[] {
  switch (token.type) {
    case 'space':
    case 'def':
      return [];
    case 'paragraph':
      return [element('p', inline(token.tokens ?? [], base))];
    case 'heading': {
      const depth = Math.min(6, Math.max(1, (token as Tokens.Heading).depth));
      return [
        element(`h${depth}` as MarkdownTag, inline(token.tokens ?? [], base))
      ];
    }
    case 'code': {
      const code = token as Tokens.Code;
      return [
        {
          kind: 'code',
          code: code.text,
          language: (code.lang ?? '').trim().split(/\s+/)[0] ?? '',
          fenced: code.codeBlockStyle !== 'indented'
        }
      ];
    }
    case 'blockquote':
      return [element('blockquote', blocks(token.tokens ?? [], base))];
    case 'list': {
      const list = token as Tokens.List;
      const items = list.items.map(item =>
        element('li', blocks(item.tokens, base))
      );
      if (!list.ordered) {
        return [element('ul', items)];
      }
      const start = typeof list.start === 'number' ? list.start : 1;
      return [element('ol', items, start !== 1 ? { start } : {})];
    }
    case 'checkbox':
      return [
        element('checkbox', [], {
          checked: (token as Tokens.Checkbox).checked
        })
      ];
    case 'text':
      // A tight list item's text: inline content without a paragraph.
      return token.tokens
        ? inline(token.tokens, base)
        : [{ kind: 'text', text: decodeEntities(token.text ?? '') }];
    case 'hr':
      return [element('hr', [])];
    case 'table':
      return [table(token as Tokens.Table, base)];
    case 'html':
      return [
        { kind: 'html', text: token.raw.replace(/\n+$/, ''), block: true }
      ];
    case 'blockMath':
      return [{ kind: 'math', tex: String(token.text), display: true }];
    default:
      // Whatever else the lexer yields is shown as the text it was written as.
      return [{ kind: 'text', text: token.raw }];
  }
}

function blocks(tokens: Token[], base: string): MarkdownNode[] {
  return tokens.flatMap(token => block(token, base));
}

function table(token: Tokens.Table, base: string): IElementNode {
  const cell = (tag: 'th' | 'td', cell: Tokens.TableCell) =>
    element(
      tag,
      inline(cell.tokens, base),
      cell.align ? { align: cell.align } : {}
    );
  return element('table', [
    element('thead', [
      element(
        'tr',
        token.header.map(c => cell('th', c))
      )
    ]),
    element(
      'tbody',
      token.rows.map(row =>
        element(
          'tr',
          row.map(c => cell('td', c))
        )
      )
    )
  ]);
}

/** The tree of inline tokens. */
function inline(tokens: Token[], base: string): MarkdownNode[] {
  return tokens.flatMap((token): MarkdownNode[] => {
    switch (token.type) {
      case 'text':
        return token.tokens
          ? inline(token.tokens, base)
          : [{ kind: 'text', text: decodeEntities(token.text ?? '') }];
      case 'escape':
        return [{ kind: 'text', text: token.text ?? '' }];
      case 'strong':
      case 'em':
      case 'del':
        return [element(token.type, inline(token.tokens ?? [], base))];
      case 'codespan':
        return [element('code', [{ kind: 'text', text: token.text ?? '' }])];
      case 'br':
        return [element('br', [])];
      case 'link': {
        const link = token as Tokens.Link;
        return [
          {
            kind: 'link',
            href: linkHref(link.href, base),
            written: link.href,
            title: decodeEntities(link.title ?? ''),
            children: inline(link.tokens, base)
          }
        ];
      }
      case 'image': {
        const image = token as Tokens.Image;
        return [
          {
            kind: 'image',
            alt: decodeEntities(image.text ?? ''),
            title: decodeEntities(image.title ?? ''),
            source: imageSource(image.href, base)
          }
        ];
      }
      case 'html':
        // A bare line break is the one tag kept: models put it in table cells.
        return /^<br\s*\/?>$/i.test(token.raw)
          ? [element('br', [])]
          : [{ kind: 'html', text: token.raw, block: false }];
      case 'inlineMath':
        return [
          { kind: 'math', tex: String(token.text), display: !!token.display }
        ];
      case 'checkbox':
        return block(token, base);
      default:
        return [{ kind: 'text', text: token.raw }];
    }
  });
}

/**
 * The tree of an answer. `base` is the page's address: relative image and link addresses
 * are read against it (to name the host an image would come from).
 */
export function parseMarkdown(markdown: string, base: string): MarkdownNode[] {
  return blocks(lexer.lexer(markdown), base);
}

/** The code blocks of a tree, in reading order (nested lists and quotes included). */
export function codeBlocks(nodes: readonly MarkdownNode[]): ICodeNode[] {
  const found: ICodeNode[] = [];
  const walk = (list: readonly MarkdownNode[]) => {
    for (const node of list) {
      if (node.kind === 'code') {
        found.push(node);
      } else if (node.kind === 'element' || node.kind === 'link') {
        walk(node.children);
      }
    }
  };
  walk(nodes);
  return found;
}

/** A line of a Markdown list as a model writes one: a bullet or a number, a space, then text. */
const LIST_LINE = /^[ \t]*(?:[-*+\u2022]|\d{1,9}[.)])[ \t]+\S/;

/**
 * Whether every line of `code` but blank and `#` comment lines is a Markdown list item
 * (`- 12.`, `3. mean`): a list, not code, even where it parses as Python (`- 12.` does). The
 * server's rule too (`chapyter_ext/parsing/code_blocks.py`, `markdown_list`), both tested
 * against `tests/vectors/code_blocks.json`.
 */
export function markdownList(code: string): boolean {
  const lines = code
    .split('\n')
    .filter(line => line.trim() && !line.trimStart().startsWith('#'));
  return lines.length > 0 && lines.every(line => LIST_LINE.test(line));
}
