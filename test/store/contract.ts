// The conformance suite every ObjectStore backend runs (STYLE.md 6): one set of promises, checked
// the same way for memory, file and s3. Each test opens a fresh store through `open` and calls
// `cleanup` afterwards (also after a test that closed the store itself).
import { afterEach, beforeEach, describe, expect, test } from 'bun:test';
import { isStoreError, type StoreError, type StoreErrorKind } from '../../src/store/errors.ts';
import { MULTIPART_PART_BYTES_MIN, type ObjectStore, type UploadedPart } from '../../src/store/object-store.ts';
import type { RequestClass, StoreStats } from '../../src/store/stats.ts';

export interface ContractCapabilities {
  /** Enforces ifNoneMatch / ifMatch (s3rver does not; a test endpoint that does can). */
  readonly conditional: boolean;
  /** The smallest non-last part the backend accepts; default S3's 5 MiB. */
  readonly multipartPartBytesMin?: number;
  /** Keys in the pagination test (default 2500, paged 1000 at a time; fewer keys, smaller pages). */
  readonly listKeys?: number;
  /** Keys in the deleteMany test (default 1500: two DeleteObjects batches). */
  readonly deleteKeys?: number;
}

export interface OpenedStore {
  readonly store: ObjectStore;
  readonly cleanup: () => Promise<void>;
}

const LIST_KEYS_DEFAULT = 2500;
const DELETE_KEYS_DEFAULT = 1500;
/** Requests the suite keeps in flight when it fills a store: enough to hide latency, few enough for s3rver. */
const FILL_CONCURRENCY = 32;
const CONTENDERS = 16;
/** A compare-and-swap loop gives up after this many lost rounds: with 16 contenders it needs at most 16. */
const CAS_ATTEMPTS_MAX = 200;

export function storeContract(name: string, open: () => Promise<OpenedStore>, capabilities: ContractCapabilities): void {
  describe(name, () => {
    let opened: OpenedStore | undefined;
    beforeEach(async () => {
      opened = await open();
    });
    afterEach(async () => {
      await opened?.cleanup();
      opened = undefined;
    });
    const store = (): ObjectStore => opened!.store;

    roundTrips(store);
    keysAndReplacement(store);
    rangeGets(store);
    listing(store, capabilities.listKeys ?? LIST_KEYS_DEFAULT);
    deletingMany(store, capabilities.deleteKeys ?? DELETE_KEYS_DEFAULT);
    multipart(store, capabilities);
    if (capabilities.conditional) {
      conditionalWrites(store);
      conditionalMultipart(store, capabilities);
    } else {
      conditionalWritesIgnored(store);
    }
    accounting(store, capabilities);
    badInput(store);
  });
}

// ---------------------------------------------------------------------------------------------
// Helpers

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const text = (value: string): Uint8Array => encoder.encode(value);

/** Deterministic bytes that cover all 256 values and differ between seeds. */
export function patternBytes(length: number, seed = 1): Uint8Array {
  const bytes = new Uint8Array(length);
  let state = (seed * 0x9e3779b1) >>> 0 || 1;
  for (let i = 0; i < length; i++) {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    bytes[i] = (state >>> 0) & 0xff;
  }
  return bytes;
}

function concat(parts: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

/** The StoreError a promise rejects with; fails the test if it resolves or throws something else. */
export async function storeErrorOf(promise: Promise<unknown>, ...kinds: StoreErrorKind[]): Promise<StoreError> {
  let caught: unknown;
  let resolved = false;
  try {
    await promise;
    resolved = true;
  } catch (error) {
    caught = error;
  }
  expect(resolved ? 'resolved' : 'rejected').toBe('rejected');
  expect(isStoreError(caught)).toBe(true);
  const error = caught as StoreError;
  if (kinds.length > 0) expect(kinds).toContain(error.kind);
  return error;
}

/** Whether `error` names `key`: in its `key` (backends may add their prefix) or its message. */
function namesKey(error: StoreError, key: string): boolean {
  return error.key?.endsWith(key) || error.message.includes(key.slice(0, 40));
}

async function forEachLimited<T>(items: readonly T[], limit: number, action: (item: T) => Promise<unknown>): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) await action(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

/** Every key under `prefix`, following pages; fails on a repeated key. */
export async function listAll(store: ObjectStore, prefix: string, maxKeys?: number): Promise<{ keys: string[]; pages: number }> {
  const keys: string[] = [];
  const seen = new Set<string>();
  let token: string | undefined;
  let pages = 0;
  do {
    const page = await store.list(prefix, { ...(token === undefined ? {} : { token }), ...(maxKeys === undefined ? {} : { maxKeys }) });
    if (maxKeys !== undefined) expect(page.objects.length).toBeLessThanOrEqual(maxKeys);
    for (const { key } of page.objects) {
      if (seen.has(key)) throw new Error(`list ${JSON.stringify(prefix)} returned ${JSON.stringify(key)} twice (page ${pages + 1})`);
      if (!key.startsWith(prefix)) throw new Error(`list ${JSON.stringify(prefix)} returned ${JSON.stringify(key)}, outside the prefix`);
      seen.add(key);
      keys.push(key);
    }
    token = page.nextToken;
    pages++;
    if (token !== undefined && page.objects.length === 0 && pages > 100) throw new Error(`list ${JSON.stringify(prefix)}: over 100 pages without keys`);
  } while (token !== undefined);
  return { keys, pages };
}

const sorted = (keys: readonly string[]): string[] => [...keys].sort();

function delta(before: StoreStats, after: StoreStats): { requests: Record<RequestClass, number>; bytesIn: number; bytesOut: number } {
  const requests = Object.fromEntries(Object.entries(after.requests).map(([kind, count]) => [kind, count - before.requests[kind as RequestClass]]));
  return { requests: requests as Record<RequestClass, number>, bytesIn: after.bytesIn - before.bytesIn, bytesOut: after.bytesOut - before.bytesOut };
}

type StoreOf = () => ObjectStore;

// ---------------------------------------------------------------------------------------------
// put / get / head / delete

function roundTrips(store: StoreOf): void {
  describe('put, get, head, delete', () => {
    test('a binary body round-trips, byte for byte, with its size and ETag', async () => {
      const body = patternBytes(64 * 1024 + 7);
      const { etag } = await store().put('binary/object', body);
      expect(typeof etag).toBe('string');
      expect(etag.length).toBeGreaterThan(0);
      const got = await store().get('binary/object');
      expect(got.body).toEqual(body);
      expect(got.size).toBe(body.length);
      expect(got.etag).toBe(etag);
      expect(await store().head('binary/object')).toEqual({ key: 'binary/object', size: body.length, etag });
    });

    test('an empty body round-trips', async () => {
      const { etag } = await store().put('empty', new Uint8Array(0));
      const got = await store().get('empty');
      expect(got.body.length).toBe(0);
      expect(got.size).toBe(0);
      expect(await store().head('empty')).toEqual({ key: 'empty', size: 0, etag });
    });
  });
}

function keysAndReplacement(store: StoreOf): void {
  describe('keys, replacement and ETags', () => {
    // Keys with '.', '..' or empty segments are valid in S3 but s3rver normalizes them away; the
    // memory and file stores test those in their own suites.
    test('keys with slashes, spaces and unicode round-trip', async () => {
      const keys = ['a/b/c/d', 'dir/sub dir/file name.txt', ' leading and trailing ', 'unicode/ñandú/日本語/😀', 'trailing/', `${'x'.repeat(100)}/${'y'.repeat(100)}`, 'percent%2F/plus+sign?q=1#frag'];
      for (const [i, key] of keys.entries()) await store().put(key, text(`value ${i}`));
      for (const [i, key] of keys.entries()) {
        expect(decoder.decode((await store().get(key)).body)).toBe(`value ${i}`);
        expect((await store().head(key))?.key).toBe(key);
      }
      expect(sorted((await listAll(store(), '')).keys)).toEqual(sorted(keys));
    });

    test('a key can be an object and the prefix of other objects at once', async () => {
      for (const key of ['a', 'a/b', 'a/b/c', 'ab']) await store().put(key, text(key));
      for (const key of ['a', 'a/b', 'a/b/c', 'ab']) expect(decoder.decode((await store().get(key)).body)).toBe(key);
      await store().delete('a/b');
      expect(await store().head('a/b')).toBeNull();
      expect(decoder.decode((await store().get('a/b/c')).body)).toBe('a/b/c');
      expect(decoder.decode((await store().get('a')).body)).toBe('a');
    });

    test('a put replaces the object; buffers passed in and handed out are not shared with the store', async () => {
      const body = text('first version');
      await store().put('k', body);
      body.fill(0);
      expect(decoder.decode((await store().get('k')).body)).toBe('first version');
      const got = await store().get('k');
      got.body.fill(0);
      expect(decoder.decode((await store().get('k')).body)).toBe('first version');
      const second = await store().put('k', text('second'));
      expect(await store().get('k')).toMatchObject({ body: text('second'), size: 6, etag: second.etag });
    });

    test('the ETag follows the content: equal for equal bytes, different for different bytes', async () => {
      const a = await store().put('e1', text('same'));
      const b = await store().put('e2', text('same'));
      const c = await store().put('e1', text('different'));
      expect(a.etag).toBe(b.etag);
      expect(c.etag).not.toBe(a.etag);
      expect((await store().head('e1'))?.etag).toBe(c.etag);
    });

    test('get of an absent key is NotFound naming the key; head is null', async () => {
      const error = await storeErrorOf(store().get('no/such/key'), 'NotFound');
      expect(namesKey(error, 'no/such/key')).toBe(true);
      expect(await store().head('no/such/key')).toBeNull();
    });

    test('delete removes the object; deleting an absent key succeeds', async () => {
      await store().put('d', text('x'));
      await store().delete('d');
      expect(await store().head('d')).toBeNull();
      await storeErrorOf(store().get('d'), 'NotFound');
      await store().delete('d');
      await store().delete('never/existed');
      expect((await listAll(store(), '')).keys).toEqual([]);
    });
  });
}

// ---------------------------------------------------------------------------------------------
// Ranges

function rangeGets(store: StoreOf): void {
  describe('range gets', () => {
    const body = patternBytes(1000, 7);
    beforeEach(async () => {
      await store().put('r', body);
    });

    test('start only reads to the end; start and end read [start, end)', async () => {
      expect(await store().get('r', { range: { start: 990 } })).toMatchObject({ body: body.subarray(990), size: 1000 });
      expect(await store().get('r', { range: { start: 0 } })).toMatchObject({ body, size: 1000 });
      expect(await store().get('r', { range: { start: 100, end: 250 } })).toMatchObject({ body: body.subarray(100, 250), size: 1000 });
      expect((await store().get('r', { range: { start: 999, end: 1000 } })).body).toEqual(body.subarray(999));
      expect((await store().get('r', { range: { start: 0 } })).etag).toBe((await store().head('r'))!.etag);
    });

    test('an end beyond the size is clamped', async () => {
      expect(await store().get('r', { range: { start: 500, end: 5000 } })).toMatchObject({ body: body.subarray(500), size: 1000 });
    });

    test('a start at or after the size, or an empty or negative range, is InvalidArgument', async () => {
      await storeErrorOf(store().get('r', { range: { start: 1000 } }), 'InvalidArgument');
      await storeErrorOf(store().get('r', { range: { start: 1001, end: 2000 } }), 'InvalidArgument');
      await storeErrorOf(store().get('r', { range: { start: 10, end: 10 } }), 'InvalidArgument');
      await storeErrorOf(store().get('r', { range: { start: 10, end: 5 } }), 'InvalidArgument');
      await storeErrorOf(store().get('r', { range: { start: -1 } }), 'InvalidArgument');
      await storeErrorOf(store().get('r', { range: { start: 1.5 } }), 'InvalidArgument');
    });

    test('a range of an absent key is NotFound', async () => {
      await storeErrorOf(store().get('absent', { range: { start: 0, end: 1 } }), 'NotFound');
    });
  });
}

// ---------------------------------------------------------------------------------------------
// List

function listing(store: StoreOf, keyCount: number): void {
  describe('list', () => {
    test(`pages over ${keyCount} keys return each key exactly once, in no assumed order`, async () => {
      const keys = Array.from({ length: keyCount }, (_, i) => `many/${(i * 7919) % 97}/${i}`);
      await forEachLimited(keys, FILL_CONCURRENCY, (key) => store().put(key, text(key)));
      await store().put('other/outside', text('x'));
      await store().put('man', text('x'));
      const maxKeys = Math.min(1000, Math.ceil(keyCount / 2.5));
      const { keys: listed, pages } = await listAll(store(), 'many/', maxKeys);
      expect(sorted(listed)).toEqual(sorted(keys));
      expect(pages).toBeGreaterThanOrEqual(Math.ceil(keyCount / maxKeys));
    });

    test('prefix boundaries are respected: a/b against a/bc, a/b/ and ab', async () => {
      const keys = ['a/b', 'a/bc', 'a/b/c', 'a/bd/x', 'ab', 'a', 'b/a/b'];
      for (const key of keys) await store().put(key, text(key));
      const under = async (prefix: string): Promise<string[]> => sorted((await listAll(store(), prefix)).keys);
      expect(await under('a/b')).toEqual(sorted(['a/b', 'a/bc', 'a/b/c', 'a/bd/x']));
      expect(await under('a/b/')).toEqual(['a/b/c']);
      expect(await under('a/bc')).toEqual(['a/bc']);
      expect(await under('a')).toEqual(sorted(['a', 'a/b', 'a/bc', 'a/b/c', 'a/bd/x', 'ab']));
      expect(await under('a/')).toEqual(sorted(['a/b', 'a/bc', 'a/b/c', 'a/bd/x']));
      expect(await under('')).toEqual(sorted(keys));
      const none = await store().list('zzz');
      expect(none.objects).toEqual([]);
      expect(none.nextToken).toBeUndefined();
    });

    test('each listed object carries its size and ETag; deleted keys are gone at once', async () => {
      const a = await store().put('l/a', patternBytes(10));
      const b = await store().put('l/b', patternBytes(2000, 3));
      const page = await store().list('l/');
      const byKey = new Map(page.objects.map((o) => [o.key, o]));
      expect(byKey.get('l/a')).toEqual({ key: 'l/a', size: 10, etag: a.etag });
      expect(byKey.get('l/b')).toEqual({ key: 'l/b', size: 2000, etag: b.etag });
      await store().delete('l/a');
      expect((await listAll(store(), 'l/')).keys).toEqual(['l/b']);
    });
  });
}

// ---------------------------------------------------------------------------------------------
// deleteMany

function deletingMany(store: StoreOf, keyCount: number): void {
  describe('deleteMany', () => {
    test(`removes ${keyCount} keys, absent ones counted as deleted`, async () => {
      const keys = Array.from({ length: keyCount }, (_, i) => `dm/${i}`);
      await forEachLimited(keys, FILL_CONCURRENCY, (key) => store().put(key, text(key)));
      await store().put('dm-keep', text('x'));
      const asked = [...keys, 'dm/absent-1', 'dm/absent-2'];
      const result = await store().deleteMany(asked);
      expect(result.failed).toEqual([]);
      expect(sorted(result.deleted)).toEqual(sorted(asked));
      expect((await listAll(store(), 'dm')).keys).toEqual(['dm-keep']);
    });

    test('an empty list deletes nothing', async () => {
      expect(await store().deleteMany([])).toEqual({ deleted: [], failed: [] });
    });
  });
}

// ---------------------------------------------------------------------------------------------
// Multipart

function multipart(store: StoreOf, capabilities: ContractCapabilities): void {
  const partMin = capabilities.multipartPartBytesMin ?? MULTIPART_PART_BYTES_MIN;
  describe('multipart uploads', () => {
    test('three parts uploaded in parallel become their concatenation, invisible until complete', async () => {
      const bodies = [patternBytes(partMin, 1), patternBytes(partMin, 2), patternBytes(1234, 3)];
      const upload = await store().createMultipartUpload('mp/object');
      expect(upload.key).toBe('mp/object');
      const parts = await Promise.all([3, 1, 2].map((n) => upload.uploadPart(n, bodies[n - 1]!)));
      expect(parts.map((p) => [p.partNumber, p.size])).toEqual([
        [3, 1234],
        [1, partMin],
        [2, partMin],
      ]);
      expect(await store().head('mp/object')).toBeNull();
      expect((await store().list('mp/')).objects).toEqual([]);
      const { etag } = await upload.complete([...parts].sort((a, b) => a.partNumber - b.partNumber));
      const got = await store().get('mp/object');
      expect(got.size).toBe(2 * partMin + 1234);
      expect(got.body).toEqual(concat(bodies));
      expect(got.etag).toBe(etag);
      expect(await store().head('mp/object')).toEqual({ key: 'mp/object', size: 2 * partMin + 1234, etag });
      expect((await store().get('mp/object', { range: { start: partMin - 2, end: partMin + 2 } })).body).toEqual(concat(bodies).subarray(partMin - 2, partMin + 2));
      // Ranges that span every part, and ones inside a single part (a store may keep the parts apart).
      for (const [start, end] of [
        [1, 2 * partMin + 1000],
        [partMin, 2 * partMin],
        [2 * partMin + 10, 2 * partMin + 1234],
        [5, 6],
      ] as const) {
        expect((await store().get('mp/object', { range: { start, end } })).body).toEqual(concat(bodies).subarray(start, end));
      }
      const whole = (await store().get('mp/object')).body;
      whole.fill(0); // what a caller does with its copy does not reach the object
      expect((await store().get('mp/object')).body).toEqual(concat(bodies));
    });

    test('a single small part is a valid upload', async () => {
      const upload = await store().createMultipartUpload('mp/small');
      const part = await upload.uploadPart(1, text('tiny'));
      await upload.complete([part]);
      expect(decoder.decode((await store().get('mp/small')).body)).toBe('tiny');
    });

    test('abort leaves nothing, and the upload can no longer be completed', async () => {
      const upload = await store().createMultipartUpload('mp/aborted');
      const part = await upload.uploadPart(1, text('data'));
      await upload.abort();
      expect(await store().head('mp/aborted')).toBeNull();
      expect((await store().list('mp/')).objects).toEqual([]);
      await storeErrorOf(upload.complete([part]), 'NotFound');
    });

    test('a non-last part below the minimum is InvalidArgument, at upload or at complete', async () => {
      const upload = await store().createMultipartUpload('mp/too-small');
      const error = await storeErrorOf(
        (async () => {
          const first = await upload.uploadPart(1, patternBytes(partMin - 1));
          const second = await upload.uploadPart(2, text('last'));
          await upload.complete([first, second]);
        })(),
        'InvalidArgument',
      );
      expect(error.message.length).toBeGreaterThan(0);
      await upload.abort().catch(() => undefined);
      expect(await store().head('mp/too-small')).toBeNull();
    });

    test('part numbers outside 1..10000, and a complete without parts, are InvalidArgument', async () => {
      const upload = await store().createMultipartUpload('mp/numbers');
      await storeErrorOf(upload.uploadPart(0, text('x')), 'InvalidArgument');
      await storeErrorOf(upload.uploadPart(10_001, text('x')), 'InvalidArgument');
      await storeErrorOf(upload.complete([]), 'InvalidArgument');
      const part = await upload.uploadPart(1, text('x'));
      await storeErrorOf(upload.complete([part, { ...part, partNumber: 1 }]), 'InvalidArgument');
      await upload.abort();
    });
  });
}

// ---------------------------------------------------------------------------------------------
// Conditional writes

/**
 * A backend declared without conditional writes (bare s3rver) runs none of their tests, so the
 * declaration itself is checked: if the backend starts enforcing them, this fails and the suite
 * should run them there too. (Ferry must never rely on such a backend for fencing: issue 9, 15.)
 */
function conditionalWritesIgnored(store: StoreOf): void {
  describe('conditional writes (declared not enforced by this backend)', () => {
    test('a second put-if-absent and a put with a wrong If-Match both overwrite: the capability is declared right', async () => {
      await store().put('c/ignored', text('first'), { ifNoneMatch: '*' });
      await store().put('c/ignored', text('second'), { ifNoneMatch: '*' });
      await store().put('c/ignored', text('third'), { ifMatch: '"not-the-etag"' });
      expect(decoder.decode((await store().get('c/ignored')).body)).toBe('third');
      await store().delete('c/ignored');
    });
  });
}

function conditionalWrites(store: StoreOf): void {
  describe('conditional writes', () => {
    test('put-if-absent creates once; on an existing key it is PreconditionFailed and the old content stays', async () => {
      await store().put('c/once', text('first'), { ifNoneMatch: '*' });
      await storeErrorOf(store().put('c/once', text('second'), { ifNoneMatch: '*' }), 'PreconditionFailed');
      expect(decoder.decode((await store().get('c/once')).body)).toBe('first');
      await store().delete('c/once');
      await store().put('c/once', text('third'), { ifNoneMatch: '*' });
      expect(decoder.decode((await store().get('c/once')).body)).toBe('third');
    });

    test(`${CONTENDERS} concurrent put-if-absent on one key: exactly one wins and its content is stored`, async () => {
      const outcomes = await Promise.allSettled(Array.from({ length: CONTENDERS }, (_, i) => store().put('c/race', text(`writer ${i}`), { ifNoneMatch: '*' })));
      const winners = outcomes.flatMap((o, i) => (o.status === 'fulfilled' ? [i] : []));
      expect(winners.length).toBe(1);
      for (const outcome of outcomes) {
        if (outcome.status === 'rejected') expect(isStoreError(outcome.reason, 'PreconditionFailed') || isStoreError(outcome.reason, 'Conflict')).toBe(true);
      }
      expect(decoder.decode((await store().get('c/race')).body)).toBe(`writer ${winners[0]}`);
    });

    test('if-match: the current ETag succeeds; a stale ETag or an absent key is PreconditionFailed', async () => {
      const first = await store().put('c/cas', text('v1'));
      const second = await store().put('c/cas', text('v2'), { ifMatch: first.etag });
      expect(decoder.decode((await store().get('c/cas')).body)).toBe('v2');
      await storeErrorOf(store().put('c/cas', text('v3'), { ifMatch: first.etag }), 'PreconditionFailed');
      expect(await store().get('c/cas')).toMatchObject({ body: text('v2'), etag: second.etag });
      await storeErrorOf(store().put('c/absent', text('v1'), { ifMatch: first.etag }), 'PreconditionFailed');
      expect(await store().head('c/absent')).toBeNull();
    });

    test(`${CONTENDERS} concurrent compare-and-swap increments of a counter end at exactly ${CONTENDERS}`, async () => {
      await store().put('c/counter', text('0'), { ifNoneMatch: '*' });
      const increment = async (): Promise<number> => {
        for (let attempt = 1; attempt <= CAS_ATTEMPTS_MAX; attempt++) {
          const current = await store().get('c/counter');
          const next = Number(decoder.decode(current.body)) + 1;
          try {
            await store().put('c/counter', text(String(next)), { ifMatch: current.etag });
            return attempt;
          } catch (error) {
            if (!isStoreError(error, 'PreconditionFailed') && !isStoreError(error, 'Conflict')) throw error;
          }
        }
        throw new Error(`no increment after ${CAS_ATTEMPTS_MAX} attempts`);
      };
      await Promise.all(Array.from({ length: CONTENDERS }, increment));
      expect(decoder.decode((await store().get('c/counter')).body)).toBe(String(CONTENDERS));
    });
  });
}

function conditionalMultipart(store: StoreOf, capabilities: ContractCapabilities): void {
  describe('conditional multipart completion', () => {
    test('a multipart upload with ifNoneMatch onto an existing key is PreconditionFailed and the old content stays', async () => {
      const partMin = capabilities.multipartPartBytesMin ?? MULTIPART_PART_BYTES_MIN;
      await store().put('c/mp', text('old'));
      const error = await storeErrorOf(
        (async () => {
          const upload = await store().createMultipartUpload('c/mp', { ifNoneMatch: '*' });
          try {
            const parts: UploadedPart[] = [await upload.uploadPart(1, patternBytes(partMin)), await upload.uploadPart(2, text('end'))];
            await upload.complete(parts);
          } catch (error) {
            await upload.abort().catch(() => undefined);
            throw error;
          }
        })(),
        'PreconditionFailed',
      );
      expect(error.kind).toBe('PreconditionFailed');
      expect(decoder.decode((await store().get('c/mp')).body)).toBe('old');
    });

    test('a multipart upload with ifNoneMatch onto an absent key succeeds', async () => {
      const upload = await store().createMultipartUpload('c/mp-new', { ifNoneMatch: '*' });
      await upload.complete([await upload.uploadPart(1, text('new'))]);
      expect(decoder.decode((await store().get('c/mp-new')).body)).toBe('new');
    });
  });
}

// ---------------------------------------------------------------------------------------------
// Accounting

function accounting(store: StoreOf, capabilities: ContractCapabilities): void {
  const partMin = capabilities.multipartPartBytesMin ?? MULTIPART_PART_BYTES_MIN;
  describe('accounting', () => {
    test('requests by class and bytes in and out are counted exactly', async () => {
      const before = store().stats();
      await store().put('s/a', patternBytes(100)); // put 1, in 100
      await store().put('s/b', patternBytes(50)); // put 2, in 150
      await store().get('s/a'); // get 1, out 100
      await store().get('s/a', { range: { start: 10, end: 30 } }); // get 2, out 120
      await storeErrorOf(store().get('s/absent'), 'NotFound'); // get 3, out 120
      await store().head('s/a'); // head 1
      await store().head('s/absent'); // head 2
      await store().list('s/'); // list 1
      await store().delete('s/a'); // delete 1
      await store().deleteMany(['s/b', 's/c']); // delete 2 (one batch)
      const upload = await store().createMultipartUpload('s/mp'); // multipartCreate 1
      const parts = [await upload.uploadPart(1, patternBytes(partMin)), await upload.uploadPart(2, patternBytes(10))]; // uploadPart 2, in 150 + partMin + 10
      await upload.complete(parts); // multipartComplete 1
      await store().get('s/mp', { range: { start: 0, end: 7 } }); // get 4, out 127
      const aborted = await store().createMultipartUpload('s/gone'); // multipartCreate 2
      await aborted.abort(); // multipartAbort 1
      const counted = delta(before, store().stats());
      expect(counted.requests).toEqual({ put: 2, get: 4, head: 2, list: 1, delete: 2, multipartCreate: 2, uploadPart: 2, multipartComplete: 1, multipartAbort: 1 });
      expect(counted.bytesIn).toBe(150 + partMin + 10);
      expect(counted.bytesOut).toBe(127);
    });

    test('deleteMany sends one request per 1000 keys', async () => {
      const before = store().stats();
      await store().deleteMany(Array.from({ length: 2001 }, (_, i) => `absent/${i}`));
      expect(delta(before, store().stats()).requests.delete).toBe(3);
    });
  });
}

// ---------------------------------------------------------------------------------------------
// Bad input

function badInput(store: StoreOf): void {
  describe('bad input', () => {
    test('an empty key is InvalidArgument, for every operation', async () => {
      await storeErrorOf(store().put('', text('x')), 'InvalidArgument');
      await storeErrorOf(store().get(''), 'InvalidArgument');
      await storeErrorOf(store().head(''), 'InvalidArgument');
      await storeErrorOf(store().delete(''), 'InvalidArgument');
      await storeErrorOf(store().deleteMany(['ok', '']), 'InvalidArgument');
      await storeErrorOf(store().createMultipartUpload(''), 'InvalidArgument');
    });

    test('a key over 1024 UTF-8 bytes is InvalidArgument naming the key', async () => {
      const long = 'é'.repeat(513); // 513 characters, 1026 bytes
      for (const attempt of [store().put(long, text('x')), store().get(long), store().head(long), store().createMultipartUpload(long)]) {
        const error = await storeErrorOf(attempt, 'InvalidArgument');
        expect(namesKey(error, long)).toBe(true);
        expect(error.message).toMatch(/1024|long/);
      }
      const fine = 'k/'.repeat(100) + 'é'.repeat(100); // 400 bytes
      await store().put(fine, text('x'));
      expect((await store().head(fine))?.size).toBe(1);
    });

    test('after close every operation is Closed', async () => {
      await store().put('before-close', text('x'));
      const upload = await store().createMultipartUpload('open-upload');
      await store().close();
      await store().close();
      await storeErrorOf(store().put('k', text('x')), 'Closed');
      await storeErrorOf(store().get('before-close'), 'Closed');
      await storeErrorOf(store().head('before-close'), 'Closed');
      await storeErrorOf(store().list(''), 'Closed');
      await storeErrorOf(store().delete('before-close'), 'Closed');
      await storeErrorOf(store().deleteMany(['before-close']), 'Closed');
      await storeErrorOf(store().createMultipartUpload('k'), 'Closed');
      await storeErrorOf(upload.uploadPart(1, text('x')), 'Closed');
    });
  });
}
