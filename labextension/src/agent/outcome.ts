/**
 * How a step's outcome is put in one line: from the outputs a run left, from an error, or a
 * refusal of the server's.
 */

import type { IRunResult } from './tokens';

/** The one-line outcome of a run, from its outputs, until the server's summary arrives. */
export function localOutcome(result: IRunResult): string {
  for (const output of result.outputs) {
    if (output.output_type === 'error') {
      const name = String(output.ename ?? 'Error');
      const value = String(output.evalue ?? '');
      return oneLine(value ? `${name}: ${value}` : name);
    }
  }
  return result.outputs.length ? 'Ran.' : 'Ran, no output.';
}

/** `text` on one line, cut to `limit` characters. */
export function oneLine(text: string, limit = 200): string {
  const line = text.split(/\s+/).join(' ').trim();
  return line.length > limit ? `${line.slice(0, limit - 1)}…` : line;
}

/** Whether the server refused a request as malformed (`bad_request`). */
export function isBadRequest(error: unknown): boolean {
  return (error as { kind?: unknown } | null)?.kind === 'bad_request';
}

/** An error's message (or the thrown value as text). */
export function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
