import { expect, test } from 'bun:test';
import { FerryError } from '../../src/errors.ts';
import { checkConditionalWrites } from '../../src/store/conditional-check.ts';
import { FileStore } from '../../src/store/file.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import type { ObjectStore, PutOptions } from '../../src/store/object-store.ts';
import { tempDir } from '../support/temp-dir.ts';

/** A store that accepts conditional headers and ignores them, as s3rver does (or only one of them). */
function ignoring(inner: ObjectStore, ignored: 'ifNoneMatch' | 'ifMatch' | 'both'): ObjectStore {
  return new Proxy(inner, {
    get(target, name) {
      if (name !== 'put') {
        const value: unknown = Reflect.get(target, name);
        return typeof value === 'function' ? value.bind(target) : value;
      }
      return (key: string, body: Uint8Array, options: PutOptions = {}) => {
        const { ifNoneMatch, ifMatch, ...rest } = options;
        const kept = {
          ...rest,
          ...(ignored === 'ifNoneMatch' || ignored === 'both' || ifNoneMatch === undefined ? {} : { ifNoneMatch }),
          ...(ignored === 'ifMatch' || ignored === 'both' || ifMatch === undefined ? {} : { ifMatch }),
        };
        return target.put(key, body, kept);
      };
    },
  });
}

test('the memory and file stores enforce conditional writes, and the probe leaves nothing behind', async () => {
  const memory = new MemoryStore();
  await checkConditionalWrites(memory, 'p', 'probe-1', 'WAL');
  expect((await memory.list('')).objects).toEqual([]);
  const file = await FileStore.open(tempDir());
  await checkConditionalWrites(file, '', 'probe-1', 'WAL');
  expect((await file.list('')).objects).toEqual([]);
  await file.close();
});

for (const ignored of ['ifNoneMatch', 'ifMatch', 'both'] as const) {
  test(`a store that ignores ${ignored === 'both' ? 'both conditions' : ignored} is refused with one line`, async () => {
    const store = ignoring(new MemoryStore(), ignored);
    const error = await checkConditionalWrites(store, '', 'probe-1', 'cluster').then(
      () => null,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(FerryError);
    const message = (error as Error).message;
    expect(message).toContain('does not enforce conditional writes');
    expect(message).toContain(ignored === 'ifMatch' ? 'If-Match' : 'If-None-Match');
    expect(message).not.toContain('\n');
    expect((await store.list('')).objects).toEqual([]);
  });
}
