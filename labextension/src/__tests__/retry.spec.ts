import { readGenerationPayload } from '../contract';
import { retryNote, retryRequest } from '../notebook/retry';

const failure = {
  errorName: 'NameError',
  errorValue: "name 'x' is not defined",
  traceback: ['Cell In[3], line 1\n----> 1 print(x)', 7]
};

describe('retryRequest', () => {
  it('carries the failing code and its error', () => {
    expect(retryRequest('print(x)', failure, 1, 1)).toEqual({
      attempt: 1,
      code: 'print(x)',
      error: {
        ename: 'NameError',
        evalue: "name 'x' is not defined",
        traceback: ['Cell In[3], line 1\n----> 1 print(x)']
      }
    });
  });

  it('asks nothing without retries left, an error, code, or after an interrupt', () => {
    expect(retryRequest('print(x)', failure, 1, 0)).toBeNull();
    expect(retryRequest('print(x)', failure, 1, undefined)).toBeNull();
    expect(retryRequest('print(x)', null, 1, 1)).toBeNull();
    expect(retryRequest('  ', failure, 1, 1)).toBeNull();
    expect(
      retryRequest('print(x)', { errorName: 'KeyboardInterrupt' }, 1, 1)
    ).toBeNull();
  });
});

describe('retryNote', () => {
  it('says what the retries did', () => {
    expect(retryNote(0, true)).toBe('');
    expect(retryNote(1, true)).toBe('✓ fixed after 1 retry.\n');
    expect(retryNote(2, false)).toBe(
      '✗ still failing after 2 retries: the last attempt is kept below with its error.\n'
    );
  });
});

describe('readGenerationPayload', () => {
  const item = (entry: object) => ({
    payload: [{ source: 'set_next_input', text: 'x = 1', chapyter: entry }]
  });

  it('reads how many retries the kernel allows', () => {
    const entry = { metadata: {}, run: true, retries_left: 1 };
    expect(readGenerationPayload(item(entry))?.retriesLeft).toBe(1);
    const none = readGenerationPayload(item({ metadata: {}, run: true }));
    expect(none?.retriesLeft).toBeUndefined();
    const bad = { metadata: {}, run: true, retries_left: '2' };
    expect(readGenerationPayload(item(bad))?.retriesLeft).toBeUndefined();
  });
});
