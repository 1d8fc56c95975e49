/**
 * What the page does when the server replaced configured secrets in a notebook it saved
 * (`chapyter_ext/history/contents_events.py`, `chapyter_ext/redact/notebook.py`): read the
 * server's event, tell whether a saved value is the shown one with some of it replaced by
 * the marker, and build the outputs to show instead. Pure: no DOM, no services.
 */

import { PartialJSONObject, PartialJSONValue } from '@lumino/coreutils';

/** The event's schema id (the server's `REDACTED_SCHEMA_ID`). */
export const REDACTED_SCHEMA_ID =
  'urn:chapyter-ext:event:saved-outputs-redacted:v1';

/** What every secret becomes (the server's `REDACTED`). */
export const REDACTED = '<redacted>';

/** The marker in markup, where `<redacted>` would read as a tag (`REDACTED_MARKUP`). */
export const REDACTED_MARKUP = '&lt;redacted&gt;';

/** Values rendered as markup: HTML, Markdown, SVG and any XML (the server's `marker_for`). */
export function markerFor(mime: string): string {
  return ['text/html', 'text/markdown', 'image/svg+xml'].includes(mime) ||
    mime.endsWith('+xml')
    ? REDACTED_MARKUP
    : REDACTED;
}

/** A save the server announced: where, how many outputs, which cells (null: look at all). */
export interface IRedactedSave {
  path: string;
  outputs: number;
  cells: string[] | null;
}

/** An event from JupyterLab's event manager (`schema_id` and the event's fields). */
export type EventEmission = { schema_id?: unknown } & Record<string, unknown>;

/** The announced save, if `emission` is one (anything else, or malformed: null). */
export function readRedactedSave(
  emission: EventEmission
): IRedactedSave | null {
  if (emission.schema_id !== REDACTED_SCHEMA_ID) {
    return null;
  }
  const { path, outputs, cells } = emission;
  if (
    typeof path !== 'string' ||
    !path ||
    typeof outputs !== 'number' ||
    !Number.isInteger(outputs) ||
    outputs < 1
  ) {
    return null;
  }
  const ids =
    Array.isArray(cells) && cells.every(id => typeof id === 'string')
      ? (cells as string[])
      : null;
  return { path, outputs, cells: ids };
}

/**
 * Whether `saved` is `shown` with one or more runs (of one character or more) replaced by
 * the marker: what the server's save makes of a value, and nothing a later run of the cell
 * would print instead (that holds other text around the marker).
 */
export function isRedactionOf(
  shown: string,
  saved: string,
  marker: string = REDACTED
): boolean {
  const parts = saved.split(marker);
  if (parts.length < 2 || !shown.startsWith(parts[0])) {
    return false;
  }
  let at = parts[0].length;
  for (const part of parts.slice(1, -1)) {
    // Leftmost is safe: an earlier match never leaves less room for the rest.
    const found = shown.indexOf(part, at + 1);
    if (found < 0) {
      return false;
    }
    at = found + part.length;
  }
  const last = parts[parts.length - 1];
  return shown.length - last.length > at && shown.endsWith(last);
}

/** A text value as nbformat may hold it: a string, or a list of strings to join. */
function joined(value: PartialJSONValue | undefined): string | null {
  if (typeof value === 'string') {
    return value;
  }
  if (Array.isArray(value) && value.every(line => typeof line === 'string')) {
    return (value as string[]).join('');
  }
  return null;
}

/** Marks a value that does not match its saved form: the output is left alone. */
const MISMATCH = Symbol('mismatch');

/** A merged value: the one to show, `undefined` (nothing differs) or `MISMATCH`. */
type Merged = PartialJSONValue | undefined | typeof MISMATCH;

function isObject(value: unknown): value is PartialJSONObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Two strings: the saved one if it is the shown one redacted. */
function mergedString(shown: string, saved: string, marker: string): Merged {
  if (shown === saved) {
    return undefined;
  }
  return isRedactionOf(shown, saved, marker) ? saved : MISMATCH;
}

/**
 * A text value (stream text, a text mime value): a string, or a list of strings read
 * joined as nbformat means it (a key may straddle two), taken in its saved form.
 */
function mergedText(
  shown: PartialJSONValue | undefined,
  saved: PartialJSONValue | undefined,
  marker: string = REDACTED
): Merged {
  const a = joined(shown);
  const b = joined(saved);
  if (a === null || b === null) {
    return mergedJson(shown, saved);
  }
  const value = mergedString(a, b, marker);
  return value === undefined || value === MISMATCH ? value : saved;
}

/** A JSON value: each string on its own, arrays item by item, objects key by key. */
function mergedJson(
  shown: PartialJSONValue | undefined,
  saved: PartialJSONValue | undefined
): Merged {
  if (typeof shown === 'string' && typeof saved === 'string') {
    return mergedString(shown, saved, REDACTED);
  }
  if (Array.isArray(shown) && Array.isArray(saved)) {
    if (shown.length !== saved.length) {
      return MISMATCH;
    }
    let changed = false;
    const items: PartialJSONValue[] = [];
    for (let i = 0; i < shown.length; i++) {
      const item = mergedJson(shown[i], saved[i]);
      if (item === MISMATCH) {
        return MISMATCH;
      }
      changed = changed || item !== undefined;
      items.push(item === undefined ? shown[i] : item);
    }
    return changed ? items : undefined;
  }
  if (isObject(shown) && isObject(saved)) {
    return mergedObject(shown, saved, mergedJson, true);
  }
  return JSON.stringify(shown) === JSON.stringify(saved) ? undefined : MISMATCH;
}

/** nbformat's rule: these mime types hold JSON, never text split into lines. */
function isJsonMime(mime: string): boolean {
  return (
    mime === 'application/json' ||
    (mime.startsWith('application/') && mime.endsWith('+json'))
  );
}

/** A mime bundle: the same types; JSON ones walked as JSON, the others read as text. */
function mergedBundle(
  shown: PartialJSONValue | undefined,
  saved: PartialJSONValue | undefined
): Merged {
  if (!isObject(shown) || !isObject(saved)) {
    return mergedJson(shown, saved);
  }
  return mergedObject(
    shown,
    saved,
    (a, b, mime) =>
      isJsonMime(mime) || isObject(a)
        ? mergedJson(a, b)
        : mergedText(a, b, markerFor(mime)),
    false
  );
}

/**
 * Objects: the same keys in the same order, each value merged; with `redactedKeys`, a key
 * may itself be the redaction of the shown one (JSON values: the server redacts keys too).
 */
function mergedObject(
  shown: PartialJSONObject,
  saved: PartialJSONObject,
  merge: (
    a: PartialJSONValue | undefined,
    b: PartialJSONValue | undefined,
    key: string
  ) => Merged,
  redactedKeys: boolean
): Merged {
  const keys = Object.keys(shown);
  const savedKeys = Object.keys(saved);
  if (keys.length !== savedKeys.length) {
    return MISMATCH;
  }
  let changed = false;
  const result: PartialJSONObject = {};
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i];
    const savedKey = key in saved ? key : savedKeys[i];
    if (savedKey !== key && !(redactedKeys && isRedactionOf(key, savedKey))) {
      return MISMATCH;
    }
    const value = merge(shown[key], saved[savedKey], key);
    if (value === MISMATCH) {
      return MISMATCH;
    }
    changed = changed || value !== undefined || savedKey !== key;
    result[savedKey] = value === undefined ? shown[key] : value;
  }
  return changed ? result : undefined;
}

/** How each field of an output the server's save may change is read (never metadata). */
const FIELDS: Record<string, Record<string, typeof mergedText>> = {
  stream: { text: mergedText },
  execute_result: { data: mergedBundle },
  display_data: { data: mergedBundle },
  error: { ename: mergedText, evalue: mergedText, traceback: mergedJson }
};

/**
 * The output to show instead of `shown` (as the page holds it) given `saved` (as the server
 * now stores it): `shown` with the values the save redacted replaced, and everything else
 * (metadata, counts, what the page alone holds) kept. Null when nothing differs, or when
 * any value differs otherwise than by redaction (the cell ran again since): left alone.
 */
export function redactedOutput(
  shown: PartialJSONObject,
  saved: PartialJSONObject
): PartialJSONObject | null {
  const kind = shown.output_type;
  if (typeof kind !== 'string' || kind !== saved.output_type) {
    return null;
  }
  let changed = false;
  const result: PartialJSONObject = { ...shown };
  for (const [field, merge] of Object.entries(FIELDS[kind] ?? {})) {
    const value = merge(shown[field], saved[field]);
    if (value === MISMATCH) {
      return null;
    }
    if (value !== undefined) {
      result[field] = value;
      changed = true;
    }
  }
  return changed ? result : null;
}

/** The output replacements of one cell: index -> output; empty when the lists differ. */
export function redactedOutputs(
  shown: readonly PartialJSONObject[],
  saved: readonly PartialJSONValue[]
): Map<number, PartialJSONObject> {
  const found = new Map<number, PartialJSONObject>();
  if (shown.length !== saved.length) {
    return found;
  }
  shown.forEach((output, i) => {
    const stored = saved[i];
    if (isObject(stored)) {
      const replacement = redactedOutput(output, stored);
      if (replacement) {
        found.set(i, replacement);
      }
    }
  });
  return found;
}

/** The note shown once the save is done: one line, counts only, never a value. */
export function redactedNote(save: IRedactedSave, name: string): string {
  const outputs = save.outputs === 1 ? '1 output' : `${save.outputs} outputs`;
  return (
    `chapyter-ext replaced a configured secret with ${REDACTED} in ${outputs} ` +
    `of ${name} before saving it.`
  );
}
