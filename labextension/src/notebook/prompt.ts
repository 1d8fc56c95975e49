/** Reading `%%ai` prompt cells: pure string functions, shared with the tests. */

import { sha256Hex } from './sha256';

const MAGIC_LINE = /^%%ai(?:\s|$)/;

/** The parts of a `%%ai` cell. */
export interface IPromptCell {
  /** Flags of the magic line, e.g. "--no-run". */
  flags: Set<string>;
  /** The value of `--model`/`-m`, if given. */
  model: string | null;
  /** The request: everything below the magic line. */
  request: string;
}

function firstLineIndex(lines: string[]): number {
  return lines.findIndex(line => line.trim() !== '');
}

/** Whether a code cell's source is a `%%ai` prompt. */
export function isPromptSource(source: string): boolean {
  const lines = source.split('\n');
  const first = firstLineIndex(lines);
  return first >= 0 && MAGIC_LINE.test(lines[first]);
}

/** Split a prompt cell into its magic line's options and its request. */
export function parsePrompt(source: string): IPromptCell | null {
  const lines = source.replace(/\r\n?/g, '\n').split('\n');
  const first = firstLineIndex(lines);
  if (first < 0 || !MAGIC_LINE.test(lines[first])) {
    return null;
  }
  const words = lines[first].trim().split(/\s+/).slice(1);
  const flags = new Set<string>();
  let model: string | null = null;
  for (let i = 0; i < words.length; i++) {
    const word = words[i];
    if (word === '--model' || word === '-m') {
      model = words[i + 1] ?? null;
      i++;
    } else if (word.startsWith('--model=')) {
      model = word.slice('--model='.length);
    } else {
      flags.add(word);
    }
  }
  return { flags, model, request: lines.slice(first + 1).join('\n') };
}

/**
 * The request as it is hashed: CRLF to LF, trailing white space cut from every line,
 * blank lines cut from both ends. The kernel (`chapyter_ext.prompts.normalize_request`)
 * does exactly the same, so both sides agree on `prompt_sha256`.
 */
export function normalizeRequest(text: string): string {
  const lines = text
    .replace(/\r\n?/g, '\n')
    .split('\n')
    .map(line => line.replace(/\s+$/, ''));
  while (lines.length && lines[0] === '') {
    lines.shift();
  }
  while (lines.length && lines[lines.length - 1] === '') {
    lines.pop();
  }
  return lines.join('\n');
}

/** Hex sha256 of the normalised request. */
export function requestSha256(request: string): string {
  return sha256Hex(normalizeRequest(request));
}

/**
 * The code seen so far in a streamed answer: the inside of the first fenced block if one has
 * opened, otherwise nothing (prose before the code is not shown as code).
 */
export function partialCode(answer: string): string {
  const open = /(^|\n)(```|~~~)[^\n]*\n/.exec(answer);
  if (!open) {
    return '';
  }
  const start = open.index + open[0].length;
  const fence = open[2];
  const close = answer.indexOf('\n' + fence, start - 1);
  return close >= start - 1 ? answer.slice(start, close) : answer.slice(start);
}
