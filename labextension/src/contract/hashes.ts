/** The request and code hashes, the same as `chapyter_ext.contract`'s. */

import { sha256Hex } from './sha256';

export { sha256Hex };

/**
 * The request as it is hashed: CRLF and CR to LF, trailing white space (`\s`) cut from every
 * line, blank lines cut from both ends, joined with LF.
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

/** Hex sha256 of the normalised request (UTF-8; lone surrogates as U+FFFD). */
export function requestSha256(request: string): string {
  return sha256Hex(normalizeRequest(request));
}

/** Hex sha256 of a cell's code (UTF-8; lone surrogates as U+FFFD, as TextEncoder). */
export function codeSha256(code: string): string {
  return sha256Hex(code);
}

/**
 * The key of a code block of a chat answer, as the server computes it: sha256 of the code
 * normalised as a request, with the indentation (spaces and tabs) all its non-blank lines
 * share removed.
 */
export function codeBlockKey(code: string): string {
  const lines = normalizeRequest(code).split('\n');
  const indents = lines
    .filter(line => line !== '')
    .map(line => line.length - line.replace(/^[ \t]+/, '').length);
  const margin = indents.length ? Math.min(...indents) : 0;
  return sha256Hex(lines.map(line => line.slice(margin)).join('\n'));
}
