import { IKernelReply, readRetrying } from '../common/kernelRead';
import { IVariableSummary, variableFacts } from '../common/snapshot';
import { VariablesCache } from '../common/variablesCache';

type IVariablesReply = IKernelReply<IVariableSummary[]>;

const RAIN: IVariableSummary[] = [
  { name: 'rain', type: 'DataFrame', summary: '3 rows × 2 columns' }
];

/** A read the test answers by hand. */
function manualRead() {
  const calls: ((value: IVariableSummary[] | null) => void)[] = [];
  const read = () =>
    new Promise<IVariableSummary[] | null>(resolve => calls.push(resolve));
  return { read, calls };
}

async function flush(): Promise<void> {
  for (let i = 0; i < 5; i++) {
    await new Promise(resolve => setTimeout(resolve, 0));
  }
}

describe('VariablesCache', () => {
  it('reads once, then answers from the cache until a cell runs', async () => {
    const cache = new VariablesCache(1000, () => undefined);
    let reads = 0;
    const read = async () => {
      reads++;
      return RAIN;
    };
    expect(await cache.get('k', read)).toEqual(RAIN);
    expect(await cache.get('k', read)).toEqual(RAIN);
    expect(reads).toBe(1);
    cache.markStale('other');
    expect(await cache.get('k', read)).toEqual(RAIN);
    expect(reads).toBe(1);
    cache.markStale('k');
    await cache.get('k', read);
    expect(reads).toBe(2);
    cache.clear();
    await cache.get('k', read);
    expect(reads).toBe(3);
  });

  it('gives every caller the answer of the read under way, not the old value', async () => {
    const cache = new VariablesCache(1000, () => undefined);
    const { read, calls } = manualRead();
    const first = cache.get('k', read);
    const second = cache.get('k', read);
    const third = cache.get('k', read);
    await flush();
    expect(calls).toHaveLength(1);
    calls[0](RAIN);
    expect(await Promise.all([first, second, third])).toEqual([
      RAIN,
      RAIN,
      RAIN
    ]);
  });

  it('answers with the last value when the kernel is busy, and calls back when the read lands', async () => {
    let changes = 0;
    const cache = new VariablesCache(20, () => changes++);
    const { read, calls } = manualRead();
    expect(await cache.get('k', read)).toBeNull();
    expect(changes).toBe(0);
    calls[0](RAIN);
    await flush();
    expect(changes).toBe(1);
    expect(await cache.get('k', read)).toEqual(RAIN);
  });

  it('calls back when a cell ran while a read was under way', async () => {
    let changes = 0;
    const cache = new VariablesCache(1000, () => changes++);
    const { read, calls } = manualRead();
    const pending = cache.get('k', read);
    await flush();
    cache.markStale('k');
    calls[0]([]);
    expect(await pending).toEqual([]);
    expect(changes).toBe(1);
    // The next call reads again.
    const again = cache.get('k', read);
    await flush();
    calls[1](RAIN);
    expect(await again).toEqual(RAIN);
  });

  it('turns a failed read into null', async () => {
    const cache = new VariablesCache(1000, () => undefined);
    expect(
      await cache.get('k', async () => {
        throw new Error('kernel died');
      })
    ).toBeNull();
  });
});

describe('readRetrying', () => {
  it('reads again while the kernel aborts the request', async () => {
    const replies: IVariablesReply[] = [
      { status: 'aborted', value: null },
      { status: 'aborted', value: null },
      { status: 'ok', value: RAIN }
    ];
    let reads = 0;
    const value = await readRetrying(async () => replies[reads++], 4, 1);
    expect(value).toEqual(RAIN);
    expect(reads).toBe(3);
  });

  it('gives up after the last attempt, and never retries an error', async () => {
    let reads = 0;
    const aborted = async (): Promise<IVariablesReply> => {
      reads++;
      return { status: 'aborted', value: null };
    };
    expect(await readRetrying(aborted, 3, 1)).toBeNull();
    expect(reads).toBe(3);
    reads = 0;
    const error = async (): Promise<IVariablesReply> => {
      reads++;
      return { status: 'error', value: null };
    };
    expect(await readRetrying(error, 3, 1)).toBeNull();
    expect(reads).toBe(1);
  });
});

describe('variableFacts', () => {
  it('passes on the facts the kernel attached, and nothing else', () => {
    const raw = {
      name: 'rain',
      type: 'DataFrame',
      summary: '3 rows × 2 columns',
      head: '3 rows × 2 columns',
      facts: [["'city'", 'object', 'object', '', [['Oslo', 0.5]]]],
      noun: 'columns',
      total: 2,
      extra: 'dropped'
    };
    expect(variableFacts(raw)).toEqual({
      head: '3 rows × 2 columns',
      facts: [["'city'", 'object', 'object', '', [['Oslo', 0.5]]]],
      noun: 'columns',
      total: 2
    });
    expect(variableFacts({ name: 'x', type: 'int', summary: '1' })).toEqual({});
  });
});
