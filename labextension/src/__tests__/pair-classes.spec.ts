import {
  ICellView,
  PROGRESS_MIME,
  promptMetadata,
  requestSha256,
  sha256Hex
} from '../contract';
import { isAnswering, PairClasses, pairClasses } from '../notebook/pairClasses';

const prompt = (request: string): ICellView => ({
  id: 'p',
  type: 'code',
  source: `%%ai\n${request}`,
  chapyter: { ...promptMetadata('g') }
});

/** A generated cell as the stream inserts it: linked, no hashes yet. */
const streaming = (code: string): ICellView => ({
  id: 'g',
  type: 'code',
  source: code,
  chapyter: {
    schema: 1,
    role: 'generated',
    source: 'magic',
    generated_from: 'p'
  }
});

const done = (request: string, code = 'x = 1'): ICellView => ({
  id: 'g',
  type: 'code',
  source: code,
  chapyter: {
    schema: 1,
    role: 'generated',
    source: 'magic',
    generated_from: 'p',
    prompt_sha256: requestSha256(request),
    model: 'm',
    created: '2026-01-01T00:00:00Z',
    code_sha256: sha256Hex(code),
    edited: false
  }
});

describe('pairClasses', () => {
  it('marks no "prompt changed" while the answer streams into a new cell', () => {
    const cells = [prompt('add a column'), streaming('df["c"] = ')];
    const classes = pairClasses(cells, index => index === 0);
    expect(classes[1]).toEqual([PairClasses.generated]);
    expect(classes[0]).toEqual([PairClasses.prompt]);
  });

  it('nor while a changed prompt is answered again into its old cell', () => {
    const cells = [prompt('add a column d'), done('add a column c')];
    expect(pairClasses(cells, () => true)[1]).not.toContain(PairClasses.stale);
  });

  it('marks "prompt changed" once the prompt really changed and is not running', () => {
    const cells = [prompt('add a column d'), done('add a column c')];
    expect(pairClasses(cells)[1]).toContain(PairClasses.stale);
    expect(pairClasses([prompt('a'), done('a')])[1]).toEqual([
      PairClasses.generated
    ]);
  });

  it('marks hand edits', () => {
    const edited = { ...done('a'), source: 'x = 2' };
    expect(pairClasses([prompt('a'), edited])[1]).toEqual([
      PairClasses.generated,
      PairClasses.edited
    ]);
  });
});

describe('isAnswering', () => {
  it('is true while the prompt runs or its progress waits or streams', () => {
    expect(isAnswering({ executionState: 'running', outputs: [] })).toBe(true);
    for (const state of ['waiting', 'streaming']) {
      const outputs = [{ [PROGRESS_MIME]: { state, text: '' } }];
      expect(isAnswering({ executionState: 'idle', outputs })).toBe(true);
    }
  });

  it('is false once the answer is done or failed, and for no cell', () => {
    for (const state of ['done', 'failed']) {
      const outputs = [{ [PROGRESS_MIME]: { state, text: 'x' } }];
      expect(isAnswering({ executionState: 'idle', outputs })).toBe(false);
    }
    expect(isAnswering({ outputs: [{ 'text/plain': 'hi' }] })).toBe(false);
    expect(isAnswering(null)).toBe(false);
  });
});
