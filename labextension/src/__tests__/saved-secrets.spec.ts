/**
 * The page's side of a save that replaced configured secrets, against the vectors the
 * Python side (`tests/test_redact_notebook.py`) makes: the page takes exactly the values
 * the server stored, leaves an output that ran again alone, and reads only its own events.
 */

import { readVectors } from './vectors';
import { PartialJSONObject } from '@lumino/coreutils';

import {
  EventEmission,
  isRedactionOf,
  markerFor,
  readRedactedSave,
  REDACTED,
  REDACTED_MARKUP,
  REDACTED_SCHEMA_ID,
  redactedNote,
  redactedOutput,
  redactedOutputs
} from '../savedSecrets/logic';

interface IOutputCase {
  name: string;
  secrets: string[];
  shown: PartialJSONObject;
  saved: PartialJSONObject;
}

const VECTORS: {
  schema_id: string;
  marker: string;
  markup_marker: string;
  outputs: IOutputCase[];
  stale: IOutputCase[];
  events: { name: string; data: EventEmission; parsed: unknown }[];
} = readVectors('saved_outputs.json');

describe('the shared vectors', () => {
  it('name the same schema and marker', () => {
    expect(VECTORS.schema_id).toBe(REDACTED_SCHEMA_ID);
    expect(VECTORS.marker).toBe(REDACTED);
    expect(VECTORS.markup_marker).toBe(REDACTED_MARKUP);
    expect(markerFor('text/html')).toBe(REDACTED_MARKUP);
    expect(markerFor('text/plain')).toBe(REDACTED);
    expect(VECTORS.outputs.length).toBeGreaterThanOrEqual(10);
    expect(VECTORS.stale.length).toBeGreaterThanOrEqual(5);
  });

  it.each(VECTORS.outputs.map(c => [c.name, c] as const))(
    'the page shows what was saved: %s',
    (_, vector) => {
      const result = redactedOutput(vector.shown, vector.saved);
      if (JSON.stringify(vector.shown) === JSON.stringify(vector.saved)) {
        expect(result).toBeNull();
      } else {
        expect(result).toEqual(vector.saved);
        for (const secret of vector.secrets) {
          expect(JSON.stringify(result)).not.toContain(secret.slice(-10));
        }
      }
    }
  );

  it.each(VECTORS.stale.map(c => [c.name, c] as const))(
    'an output that is not what was saved is left alone: %s',
    (_, vector) => {
      expect(redactedOutput(vector.shown, vector.saved)).toBeNull();
    }
  );

  it.each(VECTORS.events.map(e => [e.name, e] as const))(
    'event: %s',
    (_, vector) => {
      expect(readRedactedSave(vector.data)).toEqual(vector.parsed);
    }
  );
});

describe('isRedactionOf', () => {
  it.each([
    ['key=sk-abc\n', 'key=<redacted>\n', true],
    ['sk-abc', '<redacted>', true],
    ['a sk-1 b sk-2 c', 'a <redacted> b <redacted> c', true],
    ['sk-1sk-2', '<redacted><redacted>', true],
    ['ab', 'a<redacted>b', false], // a marker stands for one character or more
    ['same', 'same', false], // no marker: not a redaction
    ['key=sk-abc\n', 'key=<redacted>!\n', false],
    ['other=sk-abc\n', 'key=<redacted>\n', false],
    ['a x b', 'a <redacted> b <redacted> c', false],
    ['shown <redacted> too sk-9', 'shown <redacted> too <redacted>', true]
  ])('%j -> %j: %s', (shown, saved, expected) => {
    expect(isRedactionOf(shown, saved)).toBe(expected);
  });
});

describe('redactedOutputs', () => {
  const stream = (text: string): PartialJSONObject => ({
    output_type: 'stream',
    name: 'stdout',
    text
  });

  it('names the outputs to replace, by index, and keeps what the page alone holds', () => {
    const shown = [
      stream('hello\n'),
      { ...stream('key sk-abc\n'), transient: { display_id: 'd' } }
    ];
    const found = redactedOutputs(shown, [
      stream('hello\n'),
      stream(`key ${REDACTED}\n`)
    ]);
    expect([...found.keys()]).toEqual([1]);
    expect(found.get(1)).toEqual({
      ...stream(`key ${REDACTED}\n`),
      transient: { display_id: 'd' }
    });
  });

  it('replaces nothing when the cell has other outputs now', () => {
    expect(
      redactedOutputs([stream('key sk-abc\n')], [stream('x\n'), stream('y\n')])
        .size
    ).toBe(0);
  });
});

it('says how many outputs, in one line, never a value', () => {
  const save = { path: 'work/a.ipynb', outputs: 2, cells: null };
  expect(redactedNote(save, 'a.ipynb')).toBe(
    'chapyter-ext replaced a configured secret with <redacted> in 2 outputs of a.ipynb before saving it.'
  );
  expect(redactedNote({ ...save, outputs: 1 }, 'a.ipynb')).toContain(
    'in 1 output of'
  );
});
