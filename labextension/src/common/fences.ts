/**
 * The browser's one reader of fenced code blocks in a model's answer, by the rule the
 * Python side reads them (`chapyter_ext/parsing/fences.py`, `fence_spans`): CommonMark-style
 * fences of three or more backticks or tildes at any indentation, closed by a run of the same
 * character at least as long; a block whose closing fence has not come yet (an answer still
 * streaming, or cut) runs to the end. Pure. Answers drawn in the chat are read by the
 * Markdown lexer instead (`untrusted/markdown.ts`), which decides what is shown.
 */

/** A fenced block of an answer. */
export interface IFencedBlock {
  /** Its info string's language, lower case ("" when none). */
  language: string;
  /** Its code, without the indentation its fence had nor the one all its lines share. */
  code: string;
  /** Whether its closing fence came. */
  closed: boolean;
}

const FENCE = /^([ \t]*)(`{3,}|~{3,})(.*)$/;

/** Columns of an indentation, a tab to the next multiple of four. */
function columns(indent: string): number {
  let width = 0;
  for (const char of indent) {
    width = char === '\t' ? width + 4 - (width % 4) : width + 1;
  }
  return width;
}

/** Remove the indentation all non-blank lines share, changing nothing else. */
function dedent(lines: string[]): string {
  const indents = lines
    .filter(line => line.trim())
    .map(line => /^[ \t]*/.exec(line)![0]);
  let margin = indents[0] ?? '';
  for (const indent of indents.slice(1)) {
    while (!indent.startsWith(margin)) {
      margin = margin.slice(0, -1);
    }
  }
  if (!margin) {
    return lines.join('\n');
  }
  return lines
    .map(line =>
      line.startsWith(margin)
        ? line.slice(margin.length)
        : line.replace(/^[ \t]+/, '')
    )
    .join('\n');
}

/** The fenced blocks of `text`, in order. */
export function fencedBlocks(text: string): IFencedBlock[] {
  const lines = text.replace(/\r\n?/g, '\n').split('\n');
  const blocks: IFencedBlock[] = [];
  let i = 0;
  while (i < lines.length) {
    const match = FENCE.exec(lines[i]);
    // A backtick fence's info string cannot hold backticks (```inline``` is not a fence).
    if (!match || (match[2][0] !== '~' && match[3].includes(match[2][0]))) {
      i++;
      continue;
    }
    const [, indentText, fence, info] = match;
    const indent = columns(indentText);
    const language = /^[\w+#-]*/.exec(
      info
        .trim()
        .replace(/^[{.]+/, '')
        .toLowerCase()
    )![0];
    const closing = new RegExp(`^[ \\t]*${fence[0]}{${fence.length},}[ \\t]*$`);
    const body: string[] = [];
    i++;
    while (i < lines.length && !closing.test(lines[i])) {
      // Content is indented like its fence (inside a list item): remove that much.
      const line = lines[i];
      const spaces = line.length - line.replace(/^ +/, '').length;
      body.push(line.slice(Math.min(spaces, indent)));
      i++;
    }
    blocks.push({ language, code: dedent(body), closed: i < lines.length });
    i++;
  }
  return blocks;
}

/**
 * The code seen so far in a streamed answer: the inside of the first fenced block if one has
 * opened, otherwise nothing (prose before the code is not shown as code).
 */
export function partialCode(answer: string): string {
  return fencedBlocks(answer)[0]?.code ?? '';
}
