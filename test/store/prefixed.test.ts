import { describe, expect, test } from 'bun:test';
import { MemoryStore } from '../../src/store/memory.ts';
import { PrefixedStore } from '../../src/store/prefixed.ts';
import { storeContract, storeErrorOf } from './contract.ts';

const PART_MIN = 1024;

storeContract(
  'prefixed memory store',
  async () => {
    const inner = new MemoryStore({ multipartPartBytesMin: PART_MIN });
    const store = new PrefixedStore(inner, 'tenant-a/');
    return { store, cleanup: () => store.close() };
  },
  { conditional: true, multipartPartBytesMin: PART_MIN, listKeys: 300, deleteKeys: 1100 },
);

describe('PrefixedStore', () => {
  test('keys are stored under the prefix and handed back without it', async () => {
    const inner = new MemoryStore({ multipartPartBytesMin: 1 });
    const store = new PrefixedStore(inner, 'p/');
    await store.put('a', new Uint8Array([1]));
    await inner.put('outside', new Uint8Array([2]));
    expect(await inner.head('p/a')).not.toBeNull();
    expect((await store.list('')).objects.map((o) => o.key)).toEqual(['a']);
    expect(await store.head('a')).toMatchObject({ key: 'a' });
    const upload = await store.createMultipartUpload('m');
    expect(upload.key).toBe('m');
    await upload.complete([await upload.uploadPart(1, new Uint8Array([3]))]);
    expect(await inner.head('p/m')).not.toBeNull();
    expect(await store.deleteMany(['a', 'm'])).toEqual({ deleted: ['a', 'm'], failed: [] });
  });

  test('errors name the caller key, and the prefix counts toward the 1024-byte limit', async () => {
    const store = new PrefixedStore(new MemoryStore(), 'prefix/');
    const missing = await storeErrorOf(store.get('nope'), 'NotFound');
    expect(missing.key).toBe('nope');
    expect(missing.message).toContain('"nope"');
    const key = 'k'.repeat(1020);
    const long = await storeErrorOf(store.put(key, new Uint8Array(1)), 'InvalidArgument');
    expect(long.key).toBe(key);
    expect(long.message).toMatch(/after the prefix "prefix\/"/);
    expect(() => new PrefixedStore(new MemoryStore(), '')).toThrow(/empty/);
  });
});
