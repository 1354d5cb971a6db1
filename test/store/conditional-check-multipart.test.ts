// The start-up conditional-write probe (finding 15, adversarial review) checked If-None-Match on a
// plain PUT only, but a WAL writer streams large objects as multipart uploads created with
// ifNoneMatch: '*' (src/wal/writer.ts [W3]): the create-if-absent that fences a stream is then
// the CompleteMultipartUpload's. Several S3-compatible servers honour If-None-Match on PutObject
// and not on CompleteMultipartUpload; on them a fenced writer's streamed object replaces the seal
// or the successor's object at the same slot, and the probe let the broker start.
import { expect, test } from 'bun:test';
import { FerryError } from '../../src/errors.ts';
import { checkConditionalWrites } from '../../src/store/conditional-check.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import type { MultipartOptions, ObjectStore } from '../../src/store/object-store.ts';

/** A store that enforces conditional PUTs but completes multipart uploads unconditionally. */
function laxMultipart(inner: ObjectStore): ObjectStore {
  return new Proxy(inner, {
    get(target, name) {
      if (name === 'createMultipartUpload') return (key: string, options: MultipartOptions = {}) => target.createMultipartUpload(key, { ...options, ifNoneMatch: undefined });
      const value: unknown = Reflect.get(target, name);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

test('a store that ignores If-None-Match on a multipart completion is refused with one line', async () => {
  const store = laxMultipart(new MemoryStore());
  const error = await checkConditionalWrites(store, '', 'probe-1', 'WAL').then(
    () => null,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(FerryError);
  expect((error as Error).message).toContain('does not enforce conditional writes');
  expect((error as Error).message).not.toContain('\n');
  expect((await store.list('')).objects).toEqual([]);
});

test('the memory store enforces it, and the multipart probe leaves nothing behind', async () => {
  const store = new MemoryStore();
  await checkConditionalWrites(store, 'p', 'probe-1', 'WAL');
  expect((await store.list('')).objects).toEqual([]);
});

test('a store that refuses conditional multipart uploads outright is accepted: the WAL writer then uses plain conditional PUTs', async () => {
  const inner = new MemoryStore();
  const store = new Proxy(inner, {
    get(target, name) {
      if (name === 'createMultipartUpload')
        return (key: string, options: MultipartOptions = {}) =>
          options.ifNoneMatch === undefined ? target.createMultipartUpload(key, options) : Promise.reject(new Error('NotImplemented: conditional multipart uploads'));
      const value: unknown = Reflect.get(target, name);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  await checkConditionalWrites(store, '', 'probe-1', 'WAL');
  expect((await store.list('')).objects).toEqual([]);
});
