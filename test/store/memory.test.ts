import { describe, expect, test } from 'bun:test';
import { isStoreError } from '../../src/store/errors.ts';
import { LatencyModel, S3_EXPRESS_LATENCY, S3_STANDARD_LATENCY, type LatencyProfile } from '../../src/store/latency.ts';
import { MemoryStore, type MemoryStoreOptions } from '../../src/store/memory.ts';
import { ManualClock } from '../../src/util/clock.ts';
import { SeededRandom } from '../../src/util/random.ts';
import { listAll, patternBytes, storeContract, storeErrorOf } from './contract.ts';

const PART_MIN_SMALL = 64 * 1024;
const text = (value: string): Uint8Array => new TextEncoder().encode(value);
const decode = (bytes: Uint8Array): string => new TextDecoder().decode(bytes);

storeContract(
  'memory store, zero latency',
  async () => {
    const store = new MemoryStore({ latency: 'zero', seed: 1 });
    return { store, cleanup: () => store.close() };
  },
  { conditional: true },
);

// Real timers: the same semantics must hold when requests overlap in time and finish out of order.
storeContract(
  'memory store, s3-express latency on the system clock',
  async () => {
    const store = new MemoryStore({ latency: 's3-express', seed: 2, multipartPartBytesMin: PART_MIN_SMALL });
    return { store, cleanup: () => store.close() };
  },
  { conditional: true, multipartPartBytesMin: PART_MIN_SMALL, listKeys: 250, deleteKeys: 1100 },
);

/** Advances `clock` a millisecond at a time until `promise` settles; its outcome, never a throw. */
async function drive<T>(clock: ManualClock, promise: Promise<T>): Promise<{ value?: T; error?: unknown }> {
  let outcome: { value?: T; error?: unknown } | undefined;
  promise.then(
    (value) => (outcome = { value }),
    (error: unknown) => (outcome = { error }),
  );
  for (let steps = 0; outcome === undefined; steps++) {
    if (steps > 100_000) throw new Error('request never settled');
    await new Promise((resolve) => setImmediate(resolve));
    if (outcome === undefined) clock.advance(1);
  }
  return outcome;
}

/** A fixed mixed workload on a store under a ManualClock: what each request did. */
async function workload(options: MemoryStoreOptions): Promise<{ store: MemoryStore; outcomes: string[] }> {
  const clock = new ManualClock();
  const store = new MemoryStore({ latency: 's3-express', trace: true, clock, ...options });
  const outcomes: string[] = [];
  for (let i = 0; i < 60; i++) {
    const key = `k/${i % 7}`;
    const request = [() => store.put(key, patternBytes(100 + i * 1000, i)), () => store.get(key), () => store.head(key), () => store.list('k/'), () => store.delete(key)][i % 5]!;
    const { error } = await drive(clock, request() as Promise<unknown>);
    outcomes.push(error === undefined ? 'ok' : isStoreError(error) ? error.kind : 'other');
  }
  return { store, outcomes };
}

describe('memory store: determinism', () => {
  const faults = { throttledRate: 0.1, unavailableRate: 0.1, timeoutRate: 0.1, slowRate: 0.1 };

  test('one seed and one call sequence give the same latencies, faults and outcomes', async () => {
    const a = await workload({ seed: 42, faults });
    const b = await workload({ seed: 42, faults });
    expect(a.store.trace().length).toBe(60);
    expect(b.store.trace()).toEqual(a.store.trace());
    expect(b.outcomes).toEqual(a.outcomes);
    expect(b.store.stats()).toEqual(a.store.stats());
    expect(new Set(a.outcomes).size).toBeGreaterThan(2); // the plan did inject faults
  });

  test('another seed gives another run', async () => {
    const a = await workload({ seed: 42, faults });
    const c = await workload({ seed: 43, faults });
    expect(c.store.trace().map((e) => e.latencyMs)).not.toEqual(a.store.trace().map((e) => e.latencyMs));
  });

  test('turning faults on does not shift the latencies drawn', async () => {
    const quiet = await workload({ seed: 9 });
    const faulty = await workload({ seed: 9, faults: { unavailableRate: 0.2 } });
    expect(faulty.outcomes).toContain('Unavailable');
    // A get's transfer time depends on what earlier (maybe failed) puts stored; the rest must match.
    const latencies = (store: MemoryStore): number[] => store.trace().flatMap((e) => (e.requestClass === 'get' ? [] : [e.latencyMs]));
    expect(latencies(faulty.store)).toEqual(latencies(quiet.store));
  });

  test('a request waits its latency on the injected clock, and a zero-latency one needs no timer', async () => {
    const clock = new ManualClock();
    const store = new MemoryStore({ latency: 's3-express', clock, trace: true });
    let done = false;
    const put = store.put('k', text('v')).then(() => (done = true));
    const latencyMs = store.trace()[0]!.latencyMs;
    clock.advance(latencyMs * 0.9);
    await new Promise((resolve) => setImmediate(resolve));
    expect(done).toBe(false);
    clock.advance(latencyMs * 0.2);
    await put;
    expect(done).toBe(true);
    const instant = new MemoryStore({ latency: 'zero', clock: new ManualClock() });
    await instant.put('k', text('v')); // would hang if it waited on the never-advanced clock
    expect(decode((await instant.get('k')).body)).toBe('v');
  });
});

describe('memory store: latency profiles', () => {
  const percentile = (sorted: number[], p: number): number => sorted[Math.ceil(p * sorted.length) - 1]!;

  for (const profile of [S3_EXPRESS_LATENCY, S3_STANDARD_LATENCY]) {
    for (const [requestClass, target] of [
      ['put', profile.write],
      ['get', profile.read],
    ] as const) {
      test(`${profile.name} ${requestClass}: p50 and p99 of 10,000 samples are within 15% of ${target.p50Ms} and ${target.p99Ms} ms`, () => {
        const model = new LatencyModel(profile, new SeededRandom(1234));
        const samples = Array.from({ length: 10_000 }, () => model.firstByteMs(requestClass)).sort((a, b) => a - b);
        expect(Math.abs(percentile(samples, 0.5) / target.p50Ms - 1)).toBeLessThan(0.15);
        expect(Math.abs(percentile(samples, 0.99) / target.p99Ms - 1)).toBeLessThan(0.15);
        expect(samples[0]!).toBeGreaterThan(0);
      });
    }
  }

  test('transfer time adds bytes over bandwidth to the first byte', () => {
    const fixed: LatencyProfile = { name: 'fixed', write: { p50Ms: 4, p99Ms: 4 }, read: { p50Ms: 2, p99Ms: 2 }, bytesPerMs: 150_000 };
    const model = new LatencyModel(fixed, new SeededRandom(1));
    expect(model.requestMs('put', 1_500_000)).toBeCloseTo(14, 9);
    expect(model.requestMs('get', 0)).toBeCloseTo(2, 9);
    expect(model.requestMs('head', 0)).toBeCloseTo(2, 9);
    expect(model.requestMs('delete', 0)).toBeCloseTo(4, 9);
  });

  test('a custom profile and an unknown profile name', async () => {
    const clock = new ManualClock();
    const store = new MemoryStore({ latency: { name: 'slow', write: { p50Ms: 100, p99Ms: 100 }, read: { p50Ms: 50, p99Ms: 50 }, bytesPerMs: 1000 }, clock, trace: true });
    await drive(clock, store.put('k', new Uint8Array(1000)));
    expect(store.trace()[0]!.latencyMs).toBeCloseTo(101, 9);
    expect(() => new MemoryStore({ latency: 'fast' as 'zero' })).toThrow(/unknown latency profile "fast"/);
  });
});

describe('memory store: faults', () => {
  test('an injected Throttled or Unavailable fails the request before it takes effect', async () => {
    const store = new MemoryStore();
    store.injectFault({ operation: 'put', kind: 'Throttled' });
    const error = await storeErrorOf(store.put('k', text('v')), 'Throttled');
    expect(error.retriable).toBe(true);
    expect(error.message).toMatch(/injected Throttled/);
    expect(await store.head('k')).toBeNull();
    await store.put('k', text('v'));
    store.injectFault({ operation: 'get', kind: 'Unavailable' });
    await storeErrorOf(store.get('k'), 'Unavailable');
    expect(decode((await store.get('k')).body)).toBe('v');
    expect(store.stats().errors).toEqual({ Throttled: 1, Unavailable: 1 });
  });

  test('a timeout after the effect reports Timeout, yet the write landed', async () => {
    const store = new MemoryStore();
    store.injectFault({ operation: 'put', kind: 'Timeout', afterEffect: true });
    await storeErrorOf(store.put('wal/1', text('frame'), { ifNoneMatch: '*' }), 'Timeout');
    expect(decode((await store.get('wal/1')).body)).toBe('frame');
    // The writer's retry of its put-if-absent now fails: the outcome has to be read back.
    await storeErrorOf(store.put('wal/1', text('frame'), { ifNoneMatch: '*' }), 'PreconditionFailed');
  });

  test('a planned timeout lands writes but not reads', async () => {
    const store = new MemoryStore({ faults: { timeoutRate: { put: 1, get: 1, delete: 1 } } });
    await storeErrorOf(store.put('k', text('v')), 'Timeout');
    await storeErrorOf(store.get('k'), 'Timeout');
    expect(await store.head('k')).toEqual({ key: 'k', size: 1, etag: expect.any(String) });
    await storeErrorOf(store.delete('k'), 'Timeout');
    expect(await store.head('k')).toBeNull();
  });

  test('a planned timeout holds the caller for timeoutMs', async () => {
    const clock = new ManualClock();
    const store = new MemoryStore({ latency: 's3-express', clock, trace: true, faults: { timeoutRate: { put: 1 }, timeoutMs: 2000 } });
    const started = clock.nowMs();
    const { error } = await drive(clock, store.put('k', text('v')));
    expect(isStoreError(error, 'Timeout')).toBe(true);
    expect(clock.nowMs() - started).toBeGreaterThanOrEqual(2000);
  });

  test('targeted faults: count, key prefix and operation', async () => {
    const store = new MemoryStore();
    store.injectFault({ operation: 'put', kind: 'Unavailable', keyPrefix: 'wal/', count: 2 });
    await store.put('meta/x', text('v'));
    await store.get('meta/x');
    await storeErrorOf(store.put('wal/1', text('v')), 'Unavailable');
    await storeErrorOf(store.put('wal/2', text('v')), 'Unavailable');
    await store.put('wal/3', text('v'));
    expect(() => store.injectFault({ operation: 'put', kind: 'Unavailable', count: 0 })).toThrow(/count/);
  });

  test('an injected fault can hit multipart completion after it took effect', async () => {
    const store = new MemoryStore({ multipartPartBytesMin: 1 });
    store.injectFault({ operation: 'multipartComplete', kind: 'Timeout', afterEffect: true });
    const upload = await store.createMultipartUpload('mp');
    const part = await upload.uploadPart(1, text('data'));
    await storeErrorOf(upload.complete([part]), 'Timeout');
    expect(decode((await store.get('mp')).body)).toBe('data');
  });

  test('a failed deleteMany batch lists its keys as failed', async () => {
    const store = new MemoryStore();
    const keys = Array.from({ length: 1500 }, (_, i) => `d/${i}`);
    for (const key of keys) await store.put(key, text('v'));
    store.injectFault({ operation: 'delete', kind: 'Throttled', keyPrefix: 'd/1400' });
    const result = await store.deleteMany(keys);
    expect(result.deleted.length).toBe(1000);
    expect(result.failed.length).toBe(500);
    expect(result.failed.every((f) => isStoreError(f.error, 'Throttled'))).toBe(true);
    expect((await listAll(store, 'd/')).keys.length).toBe(500);
  });

  test('planned error rates land near their probability and are counted by kind', async () => {
    const store = new MemoryStore({ seed: 5, faults: { throttledRate: 0.2, unavailableRate: { get: 0.1 } } });
    let throttled = 0;
    let unavailable = 0;
    for (let i = 0; i < 2000; i++) {
      const error = await store.get('absent').then(
        () => null,
        (e: unknown) => e,
      );
      if (isStoreError(error, 'Throttled')) throttled++;
      if (isStoreError(error, 'Unavailable')) unavailable++;
    }
    expect(Math.abs(throttled - 400)).toBeLessThan(90); // binomial sd ~18
    expect(Math.abs(unavailable - 200)).toBeLessThan(70);
    expect(store.stats().errors).toMatchObject({ Throttled: throttled, Unavailable: unavailable, NotFound: 2000 - throttled - unavailable });
  });

  test('slow requests take slowFactor times their latency', async () => {
    const fast = await workload({ seed: 3 });
    const slow = await workload({ seed: 3, faults: { slowRate: 1, slowFactor: 7 } });
    const ratios = slow.store.trace().map((event, i) => event.latencyMs / fast.store.trace()[i]!.latencyMs);
    expect(ratios.every((ratio) => Math.abs(ratio - 7) < 1e-9)).toBe(true);
  });

  test('a plan with a rate outside [0, 1] is refused', () => {
    expect(() => new MemoryStore({ faults: { throttledRate: 1.5 } })).toThrow(/probability/);
    expect(() => new MemoryStore({ faults: { throttledRate: 0.6, unavailableRate: 0.6 } })).toThrow(/sum/);
  });

  test('an aborted signal ends the request as a Timeout without effect', async () => {
    const clock = new ManualClock();
    const store = new MemoryStore({ latency: 's3-express', clock });
    const controller = new AbortController();
    const put = store.put('k', text('v'), { signal: controller.signal });
    controller.abort(new Error('deadline'));
    await storeErrorOf(put, 'Timeout');
    clock.advance(1000);
    expect(await drive(clock, store.head('k'))).toEqual({ value: null });
  });
});

describe('memory store: details', () => {
  test('list pages come shuffled, unless asked not to', async () => {
    const shuffled = new MemoryStore({ seed: 11 });
    const ordered = new MemoryStore({ shuffleList: false });
    for (let i = 0; i < 100; i++) {
      await shuffled.put(`k/${String(i).padStart(3, '0')}`, text('v'));
      await ordered.put(`k/${String(i).padStart(3, '0')}`, text('v'));
    }
    const keysOf = async (store: MemoryStore): Promise<string[]> => (await store.list('k/')).objects.map((o) => o.key);
    const sorted = [...(await keysOf(ordered))].sort();
    expect(await keysOf(ordered)).toEqual(sorted);
    expect(await keysOf(shuffled)).not.toEqual(sorted);
    expect([...(await keysOf(shuffled))].sort()).toEqual(sorted);
  });

  test('a token from another prefix or a made-up token is InvalidArgument', async () => {
    const store = new MemoryStore();
    for (let i = 0; i < 5; i++) await store.put(`a/${i}`, text('v'));
    const page = await store.list('a/', { maxKeys: 2 });
    await storeErrorOf(store.list('b/', { token: page.nextToken! }), 'InvalidArgument');
    await storeErrorOf(store.list('a/', { token: 'garbage!' }), 'InvalidArgument');
    await storeErrorOf(store.list('a/', { maxKeys: 0 }), 'InvalidArgument');
  });

  test('ETags are content hashes; multipart ones end in the part count', async () => {
    const store = new MemoryStore({ multipartPartBytesMin: 1 });
    const { etag } = await store.put('a', text('hello'));
    expect(etag).toMatch(/^[0-9a-f]{16}$/);
    expect(etag).toBe(Bun.hash.xxHash64(text('hello')).toString(16).padStart(16, '0'));
    const upload = await store.createMultipartUpload('b');
    const parts = [await upload.uploadPart(1, text('hel')), await upload.uploadPart(2, text('lo'))];
    expect((await upload.complete(parts)).etag).toMatch(/^[0-9a-f]{16}-2$/);
  });

  test('keys S3 allows but s3rver cannot store: dots, empty segments, a leading slash', async () => {
    const store = new MemoryStore();
    const keys = ['dots/./and/../here', 'double//slash', '/leading', '.', '..', 'a/'];
    for (const key of keys) await store.put(key, text(key));
    for (const key of keys) expect(decode((await store.get(key)).body)).toBe(key);
  });

  test('a completed or aborted upload leaves no pending state; abort twice is fine', async () => {
    const store = new MemoryStore({ multipartPartBytesMin: 1 });
    const a = await store.createMultipartUpload('a');
    const b = await store.createMultipartUpload('b');
    expect(store.pendingUploadCount()).toBe(2);
    await a.complete([await a.uploadPart(1, text('x'))]);
    await b.abort();
    await b.abort();
    expect(store.pendingUploadCount()).toBe(0);
    await storeErrorOf(b.uploadPart(1, text('x')), 'NotFound');
  });

  test('onPut is told of each put as it takes effect, one that then times out included, never of a refused one', async () => {
    const told: string[] = [];
    const store = new MemoryStore({ onPut: (key, body) => told.push(`${key}=${decode(body)}`) });
    await store.put('a', text('1'));
    store.injectFault({ operation: 'put', kind: 'Timeout', afterEffect: true });
    await storeErrorOf(store.put('a', text('2')), 'Timeout');
    store.injectFault({ operation: 'put', kind: 'Timeout' });
    await storeErrorOf(store.put('a', text('3')), 'Timeout');
    await storeErrorOf(store.put('a', text('4'), { ifNoneMatch: '*' }), 'PreconditionFailed');
    expect(told).toEqual(['a=1', 'a=2']);
  });
});
