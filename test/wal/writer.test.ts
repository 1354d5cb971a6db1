import { describe, expect, test } from 'bun:test';
import { isFerryError } from '../../src/errors.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import { isStoreError } from '../../src/store/errors.ts';
import type { GetOptions, ListOptions, ObjectStore, PutOptions } from '../../src/store/object-store.ts';
import { ManualClock, systemClock } from '../../src/util/clock.ts';
import { SeededRandom } from '../../src/util/random.ts';
import { decodeWalObject } from '../../src/wal/format.ts';
import { parseWalObjectKey, type StreamId } from '../../src/wal/keys.ts';
import { listSequences, sealStream } from '../../src/wal/seal.ts';
import { DEFAULT_WAL_WRITER_CONFIG, WalWriter, type WalWriterConfig } from '../../src/wal/writer.ts';
import { batchOf } from '../support/batches.ts';
import { advanceThrough, advanceUntil, settle, settleUntil } from '../support/settle.ts';
import { idOf } from '../support/topic-ids.ts';

const STREAM: StreamId = { writerId: 'leader-1', epoch: 1 };

/** A reader that retries through injected faults, as a real follower would. */
function faultTolerant(store: ObjectStore): ObjectStore {
  const retrying = <T>(call: () => Promise<T>): Promise<T> => {
    const attempt = async (left: number): Promise<T> => {
      try {
        return await call();
      } catch (error) {
        if (left === 0 || !isStoreError(error) || !error.retriable) throw error;
        return attempt(left - 1);
      }
    };
    return attempt(50);
  };
  return Object.assign(Object.create(store) as ObjectStore, {
    get: (key: string, options?: GetOptions) => retrying(() => store.get(key, options)),
    list: (prefix: string, options?: ListOptions) => retrying(() => store.list(prefix, options)),
  });
}

function writer(store: ObjectStore, overrides: Partial<WalWriterConfig> = {}, clock = systemClock, seed = 1): WalWriter {
  const config = { ...DEFAULT_WAL_WRITER_CONFIG, uploadIntervalMs: 2, retry: { attempts: 6, baseMs: 1, capMs: 5 }, ...overrides, prefix: 'cluster', stream: STREAM };
  return new WalWriter(store, config, { clock, random: new SeededRandom(seed) });
}

/** Every frame of the stream, decoded and verified, in sequence order, stopping at a seal. */
async function readStream(store: ObjectStore, stream = STREAM) {
  const sequences = [...(await listSequences(store, 'cluster', stream))].sort((a, b) => a - b);
  const frames = [];
  for (let sequence = 0; sequences.includes(sequence); sequence++) {
    const key = `cluster/wal/${stream.writerId}/${String(stream.epoch).padStart(10, '0')}/${String(sequence).padStart(20, '0')}`;
    const object = decodeWalObject((await store.get(key)).body);
    expect(object.header.sequence).toBe(sequence);
    if (object.header.kind === 'seal') break;
    frames.push(...object.frames);
  }
  return frames;
}

/** A partition's offsets as laid out in the stream: each frame must continue the previous one. */
function offsetsByPartition(frames: Awaited<ReturnType<typeof readStream>>): Map<string, number[]> {
  const out = new Map<string, number[]>();
  for (const { entry } of frames) {
    const key = `${entry.topic}-${entry.partition}`;
    const list = out.get(key) ?? [];
    for (let offset = entry.baseOffset; offset <= entry.lastOffset; offset++) list.push(offset);
    out.set(key, list);
  }
  return out;
}

describe('WalWriter', () => {
  test('ships frames of many partitions in shared objects with contiguous sequences', async () => {
    const store = new MemoryStore();
    const wal = writer(store, { uploadBytes: 4096 });
    const next = new Map<number, number>();
    for (let i = 0; i < 60; i++) {
      const partition = i % 3;
      const base = next.get(partition) ?? 0;
      const data = batchOf(`p${partition}-${i}`, 2, 1_700_000_000_000, 100);
      wal.append({ topic: 'orders', topicId: idOf('orders'), partition, leaderEpoch: 5, baseOffset: base, lastOffset: base + 1, data });
      next.set(partition, base + 2);
    }
    await wal.flush();
    const keys = (await store.list('cluster/wal/')).objects.map((o) => parseWalObjectKey('cluster', o.key)!);
    expect(keys.every((k) => k.stream.writerId === 'leader-1' && k.stream.epoch === 1)).toBe(true);
    const sequences = keys.map((k) => k.sequence).sort((a, b) => a - b);
    expect(sequences).toEqual(sequences.map((_, i) => i));
    expect(sequences.length).toBeGreaterThan(3);
    const offsets = offsetsByPartition(await readStream(store));
    for (const partition of [0, 1, 2]) expect(offsets.get(`orders-${partition}`)).toEqual(Array.from({ length: 40 }, (_, i) => i));
    expect(wal.durableOffset(idOf('orders'), 1)).toBe(40);
  });

  test('closes an object at the interval when it stays small (no upload when idle)', async () => {
    const clock = new ManualClock();
    const store = new MemoryStore({ clock });
    const wal = writer(store, { uploadBytes: 1 << 20, uploadIntervalMs: 50, uploadWhenIdle: false }, clock);
    let durable = false;
    const waiting = wal.append({ topic: 't', topicId: idOf('t'), partition: 0, leaderEpoch: 0, baseOffset: 0, lastOffset: 0, data: batchOf('a') }).then(() => (durable = true));
    clock.advance(49);
    await settle();
    expect(durable).toBe(false);
    expect(store.stats().requests.put).toBe(0);
    clock.advance(1);
    await waiting;
    expect(store.stats().requests.put).toBe(1);
  });

  describe('[W8] upload when idle', () => {
    const frame = (offset: number, partition = 0) => ({ topic: 't', topicId: idOf('t'), partition, leaderEpoch: 0, baseOffset: offset, lastOffset: offset, data: batchOf(`v${offset}`) });

    test("an idle writer's frames of one turn go up together in the next turn, not after the interval", async () => {
      const clock = new ManualClock();
      const store = new MemoryStore({ clock });
      const wal = writer(store, { uploadBytes: 1 << 20, uploadIntervalMs: 50 }, clock);
      const acked = Promise.all([wal.append(frame(0, 0)), wal.append(frame(0, 1)), wal.append(frame(0, 2))]);
      expect(store.stats().requests.put).toBe(0); // not within the turn: the other partitions' frames join
      clock.advance(0);
      await acked;
      expect(store.stats().requests.put).toBe(1);
      expect(decodeWalObject((await store.get(`cluster/wal/leader-1/0000000001/${'0'.repeat(20)}`)).body).frames.length).toBe(3);
    });

    test('while an upload is in flight frames wait for it (or the interval), then go up as soon as it lands', async () => {
      const clock = new ManualClock();
      const store = new MemoryStore({ clock, latency: { name: 'put 10 ms', write: { p50Ms: 10, p99Ms: 10 }, read: { p50Ms: 0, p99Ms: 0 }, bytesPerMs: Number.POSITIVE_INFINITY } });
      const wal = writer(store, { uploadBytes: 1 << 20, uploadIntervalMs: 50 }, clock);
      const first = wal.append(frame(0));
      clock.advance(0); // object 0 goes up alone (idle), landing at +10 ms
      const second = wal.append(frame(1));
      const third = wal.append(frame(2));
      clock.advance(5);
      await settle();
      expect(store.stats().requests.put).toBe(1); // busy: frames 1 and 2 wait
      await advanceThrough(clock, first, 'object 0 lands');
      await settle();
      clock.advance(0); // object 0 landed: the writer is idle again and object 1 closes at once
      await advanceUntil(clock, () => wal.durableOffset(idOf('t'), 0) === 3, 'object 1 lands');
      await Promise.all([second, third]);
      expect(store.stats().requests.put).toBe(2);
      expect(clock.monotonicMs() - 1_700_000_000_000).toBeLessThan(50); // well inside the interval
    });

    test('off, frames wait for the interval even when idle', async () => {
      const clock = new ManualClock();
      const store = new MemoryStore({ clock });
      const wal = writer(store, { uploadBytes: 1 << 20, uploadIntervalMs: 50, uploadWhenIdle: false }, clock);
      void wal.append(frame(0));
      clock.advance(0);
      await settle();
      expect(store.stats().requests.put).toBe(0);
    });
  });

  test('durability advances in sequence order even when a later object lands first', async () => {
    const clock = new ManualClock();
    const store = new MemoryStore({ latency: 's3-express', seed: 3, clock });
    const wal = writer(store, { uploadBytes: 1, maxInFlight: 4, retry: { attempts: 6, baseMs: 100, capMs: 100 } }, clock);
    const opening = wal.append({ topic: 't', topicId: idOf('t'), partition: 0, leaderEpoch: 0, baseOffset: 0, lastOffset: 0, data: batchOf('opening') });
    clock.advance(60); // object 0 lands first, alone ([W7])
    await settle();
    await opening;
    store.injectFault({ operation: 'put', kind: 'Unavailable', keyPrefix: 'cluster/wal/leader-1/0000000001/00000000000000000001' });
    const first = wal.append({ topic: 't', topicId: idOf('t'), partition: 0, leaderEpoch: 0, baseOffset: 1, lastOffset: 1, data: batchOf('first') });
    const second = wal.append({ topic: 't', topicId: idOf('t'), partition: 0, leaderEpoch: 0, baseOffset: 2, lastOffset: 2, data: batchOf('second') });
    const order: number[] = [];
    const both = [first.then(() => order.push(1)), second.then(() => order.push(2))];
    clock.advance(60); // both first attempts answer: object 2 is stored, object 1 failed
    await settle();
    expect(store.stats().requests.put).toBe(3);
    expect(store.stats().errors).toEqual({ Unavailable: 1 });
    expect(wal.durableOffset(idOf('t'), 0)).toBe(1); // object 2 is stored, but object 1 is not yet: only object 0's offset
    expect(order).toEqual([]);
    for (let i = 0; i < 10 && order.length < 2; i++) {
      clock.advance(100); // the retry of object 1
      await settle();
    }
    await Promise.all(both);
    expect(order).toEqual([1, 2]);
    expect(wal.stats().retries).toBe(1);
  });

  test('a put that timed out after taking effect is recognised as ours, not as fencing', async () => {
    const store = new MemoryStore();
    const wal = writer(store, { uploadBytes: 1 });
    store.injectFault({ operation: 'put', kind: 'Timeout', afterEffect: true });
    await wal.append({ topic: 't', topicId: idOf('t'), partition: 0, leaderEpoch: 0, baseOffset: 0, lastOffset: 2, data: batchOf('x', 3) });
    expect(wal.failure).toBeNull();
    expect(store.stats().requests.put).toBe(2);
    expect(offsetsByPartition(await readStream(store)).get('t-0')).toEqual([0, 1, 2]);
  });

  test('a sealed stream fences the writer: nothing acknowledged after, everything acknowledged below the seal', async () => {
    const store = new MemoryStore();
    const wal = writer(store, { uploadBytes: 1, maxInFlight: 1 });
    await wal.append({ topic: 't', topicId: idOf('t'), partition: 0, leaderEpoch: 0, baseOffset: 0, lastOffset: 0, data: batchOf('a') });
    const { sealSequence } = await sealStream(store, 'cluster', STREAM, { writerId: 'leader-2', nowMs: 0 });
    expect(sealSequence).toBe(1);
    const second = wal.append({ topic: 't', topicId: idOf('t'), partition: 0, leaderEpoch: 0, baseOffset: 1, lastOffset: 1, data: batchOf('b') });
    let caught: unknown;
    try {
      await second;
    } catch (error) {
      caught = error;
    }
    expect(isFerryError(caught, 'Fenced')).toBe(true);
    expect(wal.durableOffset(idOf('t'), 0)).toBe(1);
    expect(() => wal.append({ topic: 't', topicId: idOf('t'), partition: 0, leaderEpoch: 0, baseOffset: 2, lastOffset: 2, data: batchOf('c') })).toThrow(/fenced/);
    expect(offsetsByPartition(await readStream(store)).get('t-0')).toEqual([0]);
  });

  test('a seal racing in-flight uploads lands at the first free slot; later objects lie above it', async () => {
    const store = new MemoryStore();
    // The writer's puts wait at a gate the test opens, so the seal lands while they are in flight.
    let open = true;
    const held: (() => void)[] = [];
    const put = async (key: string, body: Uint8Array, options?: PutOptions) => {
      if (!open) await new Promise<void>((resolve) => held.push(resolve));
      return store.put(key, body, options);
    };
    const gated = new Proxy(store, {
      get: (target, name) => (name === 'put' ? put : typeof Reflect.get(target, name) === 'function' ? Reflect.get(target, name).bind(target) : Reflect.get(target, name)),
    });
    const wal = writer(gated, { uploadBytes: 1, maxInFlight: 8 }, new ManualClock());
    const acknowledged: number[] = [];
    const append = (offset: number): void => {
      wal.append({ topic: 't', topicId: idOf('t'), partition: 0, leaderEpoch: 0, baseOffset: offset, lastOffset: offset, data: batchOf(`r${offset}`) }).then(
        () => acknowledged.push(offset),
        () => {},
      );
    };
    for (let offset = 0; offset < 10; offset++) append(offset);
    await settleUntil(() => acknowledged.length === 10, 'the first ten acknowledgements');
    open = false;
    for (let offset = 10; offset < 20; offset++) append(offset);
    await settleUntil(() => held.length === 8, 'eight uploads in flight at the gate');
    const { sealSequence } = await sealStream(store, 'cluster', STREAM, { writerId: 'leader-2', nowMs: 0 });
    expect(sealSequence).toBe(10); // the first free slot: the writer's object 10 is still in flight
    open = true;
    for (const release of held.splice(0)) release();
    await settleUntil(() => wal.failure !== null && wal.stats().uploadsInFlight === 0, 'the fencing');
    expect(wal.failure?.kind).toBe('Fenced');
    const sequences = await listSequences(store, 'cluster', STREAM);
    expect(Math.max(...sequences)).toBeGreaterThan(sealSequence); // objects 11.. landed above the seal
    // Everything acknowledged is in the stream below the seal, exactly once and in order; nothing above it is.
    expect(acknowledged).toEqual(Array.from({ length: 10 }, (_, i) => i));
    expect(offsetsByPartition(await readStream(store)).get('t-0')).toEqual(acknowledged);
    expect(wal.durableOffset(idOf('t'), 0)).toBe(10);
  });

  test('backpressure: reserve waits while the upload buffer is full, memory stays bounded', async () => {
    const clock = new ManualClock();
    const store = new MemoryStore({ latency: 's3-express', seed: 4, clock });
    const frameBytes = batchOf('x', 1, 0, 1000).length;
    const wal = writer(store, { uploadBytes: 4 * frameBytes, maxInFlight: 1, maxBufferedBytes: 8 * frameBytes }, clock);
    let peak = 0;
    let waited = 0;
    for (let offset = 0; offset < 100; offset++) {
      const data = batchOf(`r${offset}`, 1, 0, 1000);
      let reserved = false;
      const reserving = wal.reserve(data.length).then(() => (reserved = true));
      await settle();
      // Not reserved while no time passes: it waits for an upload (store latency) to free the buffer.
      if (!reserved) waited++;
      await advanceUntil(clock, () => reserved, `reserve before offset ${offset}`);
      await reserving;
      wal.append({ topic: 't', topicId: idOf('t'), partition: 0, leaderEpoch: 0, baseOffset: offset, lastOffset: offset, data });
      peak = Math.max(peak, wal.stats().bufferedBytes);
    }
    await advanceThrough(clock, wal.flush(), 'the flush');
    expect(waited).toBeGreaterThan(0);
    expect(peak).toBeLessThanOrEqual(8 * frameBytes + 2 * frameBytes);
    expect(offsetsByPartition(await advanceThrough(clock, readStream(store), 'reading the stream')).get('t-0')?.length).toBe(100);
  });

  test('retries are bounded: a store that always fails fails the writer and its waiters', async () => {
    const store = new MemoryStore({ faults: { unavailableRate: { put: 1 } }, seed: 5 });
    const wal = writer(store, { uploadBytes: 1, retry: { attempts: 3, baseMs: 1, capMs: 2 } });
    const durable = wal.append({ topic: 't', topicId: idOf('t'), partition: 0, leaderEpoch: 0, baseOffset: 0, lastOffset: 0, data: batchOf('a') });
    let caught: unknown;
    try {
      await durable;
    } catch (error) {
      caught = error;
    }
    expect(isFerryError(caught, 'Storage')).toBe(true);
    expect(String(caught)).toContain('after 3 attempts');
    expect(store.stats().requests.put).toBe(3);
  });

  for (const seed of [11, 12, 13]) {
    test(`random workload under store faults (seed ${seed}): every acknowledged batch is shipped once, in order`, async () => {
      const store = new MemoryStore({ latency: 's3-express', seed, faults: { throttledRate: 0.1, unavailableRate: 0.05, timeoutRate: 0.1, slowRate: 0.05 } });
      const wal = writer(store, { uploadBytes: 8192, uploadIntervalMs: 3, maxInFlight: 4, retry: { attempts: 20, baseMs: 1, capMs: 10 } }, systemClock, seed);
      const random = new SeededRandom(seed);
      const next = [0, 0, 0, 0];
      const acknowledged = new Map<string, number>();
      const pending: Promise<void>[] = [];
      for (let i = 0; i < 300; i++) {
        const partition = random.nextInt(4);
        const count = 1 + random.nextInt(5);
        const base = next[partition]!;
        const data = batchOf(`p${partition}o${base}`, count, 0, random.nextInt(400));
        await wal.reserve(data.length);
        const durable = wal.append({ topic: 'r', topicId: idOf('r'), partition, leaderEpoch: 0, baseOffset: base, lastOffset: base + count - 1, data });
        next[partition] = base + count;
        pending.push(
          durable.then(() => {
            acknowledged.set(`r-${partition}`, Math.max(acknowledged.get(`r-${partition}`) ?? -1, base + count - 1));
          }),
        );
        if (random.next() < 0.1) await Bun.sleep(1);
      }
      await Promise.all(pending);
      await wal.flush();
      const shipped = offsetsByPartition(await readStream(faultTolerant(store)));
      for (let partition = 0; partition < 4; partition++) {
        expect(shipped.get(`r-${partition}`)).toEqual(Array.from({ length: next[partition]! }, (_, i) => i));
        expect(acknowledged.get(`r-${partition}`)).toBe(next[partition]! - 1);
      }
      expect(wal.stats().retries).toBeGreaterThan(0);
    });
  }
});

describe('large objects stream as multipart uploads while they fill', () => {
  const MiB = 1024 * 1024;
  function bigFrame(offset: number): Uint8Array {
    return batchOf(`big${offset}`, 1, 0, MiB - 200);
  }

  test('parts go up before the object is closed; the object decodes whole', async () => {
    const store = new MemoryStore();
    // A clock that never moves: the object stays open (no interval) until the flush closes it.
    const wal = writer(store, { uploadBytes: 16 * MiB, uploadIntervalMs: 60_000, multipartPartBytes: 5 * MiB, maxBufferedBytes: 64 * MiB }, new ManualClock());
    for (let offset = 0; offset < 12; offset++) wal.append({ topic: 't', topicId: idOf('t'), partition: 0, leaderEpoch: 0, baseOffset: offset, lastOffset: offset, data: bigFrame(offset) });
    await settle();
    expect(store.stats().requests.multipartCreate).toBe(1);
    expect(store.stats().requests.uploadPart).toBeGreaterThanOrEqual(1); // while the object is still open
    expect(store.stats().requests.multipartComplete).toBe(0);
    await wal.flush();
    expect(store.stats().requests.multipartComplete).toBe(1);
    expect(store.stats().requests.put).toBe(0);
    expect(offsetsByPartition(await readStream(store)).get('t-0')).toEqual(Array.from({ length: 12 }, (_, i) => i));
  });

  test('a failed multipart upload falls back to one PUT; nothing partial is ever visible', async () => {
    const store = new MemoryStore();
    store.injectFault({ operation: 'uploadPart', kind: 'Unavailable', count: 100 });
    const wal = writer(store, { uploadBytes: 12 * MiB, uploadIntervalMs: 60_000, multipartPartBytes: 5 * MiB, maxBufferedBytes: 64 * MiB });
    for (let offset = 0; offset < 12; offset++) wal.append({ topic: 't', topicId: idOf('t'), partition: 0, leaderEpoch: 0, baseOffset: offset, lastOffset: offset, data: bigFrame(offset) });
    await wal.flush();
    expect(wal.durableOffset(idOf('t'), 0)).toBe(12);
    expect(store.stats().requests.multipartAbort).toBeGreaterThanOrEqual(1);
    expect(store.stats().requests.put).toBe(1);
    expect(offsetsByPartition(await readStream(store)).get('t-0')).toEqual(Array.from({ length: 12 }, (_, i) => i));
  });
});
