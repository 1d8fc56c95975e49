/** Async iterables for tests of stream readers: from an array, and back into one. */

/** Every item of `items`, in order. */
export async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) {
    out.push(item);
  }
  return out;
}

/** `items` as an async iterable, one at a time. */
export async function* fromArray<T>(items: T[]): AsyncGenerator<T> {
  for (const item of items) {
    yield item;
  }
}
