/**
 * An assistant's answer on screen. Its Markdown is read by the lexer into a tree of what may
 * be shown (`untrusted/markdown.ts`) and drawn without any HTML of its own, so raw HTML shows
 * as text and nothing is fetched (`untrusted/render.ts`). Code blocks are highlighted as in
 * the editor; once the answer is complete, each gets buttons given that block's source.
 */

import type { IEditorLanguageRegistry } from '@jupyterlab/codemirror';
import type { IRenderMime } from '@jupyterlab/rendermime';

import { parseMarkdown } from '../untrusted/markdown';
import {
  invisibleWarning,
  renderMarkdown,
  showCode
} from '../untrusted/render';
import type { INumberVerdict } from '../common/events';
import { codeButtons, ICodeBlockHandlers } from './codeBlocks';
import { markNumbers } from './numberMarks';
import { element } from '../common/dom';

/** What an answer is drawn with, when the page offers it. */
export interface IAnswerServices {
  /** The editor's languages, to highlight code blocks. */
  readonly languages?: IEditorLanguageRegistry | null;
  /** The page's math typesetter (MathJax). */
  readonly latexTypesetter?: IRenderMime.ILatexTypesetter | null;
}

/** How many highlighted blocks an answer keeps for its next redraw. */
const HIGHLIGHTS_KEPT = 64;

/** The Markdown of one answer, drawn again as it grows. */
export class AnswerView {
  /** An empty answer drawn with `_services`. */
  constructor(private _services: IAnswerServices) {
    this.node = element(
      'div',
      'jp-RenderedHTMLCommon jp-RenderedMarkdown jp-Chapyter-chatMarkdown'
    );
  }

  /** The answer's node. */
  readonly node: HTMLElement;

  /**
   * Draw `markdown`. With `buttons` (the answer is complete) each code block gets its bar
   * and the math is typeset; while it streams neither, so redraws stay cheap. `numbers`
   * (an agent's complete answer): its numbers marked found or not.
   */
  render(
    markdown: string,
    buttons: ICodeBlockHandlers | null,
    numbers?: readonly INumberVerdict[]
  ): void {
    const rendered = renderMarkdown(
      this.node,
      parseMarkdown(markdown, document.baseURI),
      {
        codeBlock: (code, language, fenced) =>
          this._codeBlock(code, language, fenced, buttons)
      }
    );
    markNumbers(this.node, numbers);
    const typesetter = this._services.latexTypesetter;
    if (buttons && typesetter) {
      for (const math of rendered.math) {
        void Promise.resolve(typesetter.typeset(math)).catch(error =>
          console.warn('chapyter-ext: could not typeset math', error)
        );
      }
    }
  }

  private _codeBlock(
    code: string,
    language: string,
    fenced: boolean,
    buttons: ICodeBlockHandlers | null
  ): HTMLElement {
    const pre = element('pre', '');
    const name = language.replace(/[^\w+#.-]/g, '');
    const codeNode = element('code', name ? `language-${name}` : '');
    const invisible = showCode(codeNode, code);
    pre.appendChild(codeNode);
    if (!invisible && name) {
      this._highlight(codeNode, code, name);
    }
    const bar = buttons ? codeButtons(code, buttons, fenced) : null;
    if (!bar && !invisible) {
      return pre;
    }
    const block = element('div', 'jp-Chapyter-codeBlock');
    if (invisible) {
      block.appendChild(invisibleWarning());
    }
    block.appendChild(pre);
    if (bar) {
      block.appendChild(bar);
    }
    return block;
  }

  /** Highlight `code` into `into`, from the cache or when the language has loaded. */
  private _highlight(into: HTMLElement, code: string, language: string): void {
    const languages = this._services.languages;
    if (!languages) {
      return;
    }
    const key = `${language}\n${code}`;
    const cached = this._highlights.get(key);
    if (cached) {
      into.replaceChildren(cached.cloneNode(true));
      return;
    }
    const scratch = document.createElement('span');
    languages
      .highlight(code, languages.findBest(language), scratch)
      .then(() => {
        // Highlighting only wraps the same text in spans; anything else is not shown.
        if (scratch.textContent !== code) {
          return;
        }
        const fragment = document.createDocumentFragment();
        fragment.append(...Array.from(scratch.childNodes));
        if (this._highlights.size >= HIGHLIGHTS_KEPT) {
          this._highlights.delete(this._highlights.keys().next().value!);
        }
        this._highlights.set(key, fragment);
        if (into.isConnected) {
          into.replaceChildren(fragment.cloneNode(true));
        }
      })
      .catch(error =>
        console.warn(`chapyter-ext: could not highlight ${language}`, error)
      );
  }

  private _highlights = new Map<string, DocumentFragment>();
}
