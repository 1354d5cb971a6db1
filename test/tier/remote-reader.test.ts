// Remote reads (docs/tier-protocol.md [D2], [D3]): a real PartitionLog tiered by the Tierer into a
// MemoryStore reads back from the tier exactly as the local log reads, byte for byte; bytes that
// fail a check are never served; retention that races a read answers OffsetOutOfRange; the
// chunk cache stays within its bytes; concurrent readers of one chunk share its GET.
import { describe, expect, test } from 'bun:test';
import { ControlStore } from '../../src/control/control-store.ts';
import { isFerryError } from '../../src/errors.ts';
import { buildRecordBatch } from '../../src/format/batch-builder.ts';
import type { RecordBatch } from '../../src/format/record-batch.ts';
import { PartitionLog } from '../../src/log/partition-log.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import type { GetOptions, GetResult, ObjectStore } from '../../src/store/object-store.ts';
import { ByteLru } from '../../src/tier/byte-lru.ts';
import { tieredSegmentKey } from '../../src/tier/keys.ts';
import { RemoteReader } from '../../src/tier/remote-reader.ts';
import { Semaphore } from '../../src/tier/semaphore.ts';
import { type CopiedSegment, copiedSegments, TierRecords, tieredEnd } from '../../src/tier/tier-record.ts';
import { Tierer, type TierSource } from '../../src/tier/tierer.ts';
import { ManualClock } from '../../src/util/clock.ts';
import { SeededRandom } from '../../src/util/random.ts';
import { idOf } from '../support/topic-ids.ts';
import { tempDir } from '../support/temp-dir.ts';

const T0 = 1_700_000_000_000;
const TOPIC_ID = idOf('remote');
const PREFIX = 'tiered';
const LEADER_EPOCH = 3;
/** Small chunks, so batches span them and a large batch spans several. */
const CHUNK_BYTES = 512;
const BATCH_COUNT = 60;
const BATCHES_PER_SEGMENT = 12;
/** The one batch larger than a chunk and than most maxBytes asked. */
const LARGE_BATCH_INDEX = 17;
const LARGE_VALUE_BYTES = 3000;
const MAX_BYTES_ASKED = [0, 100, 700, 5000, 1 << 20];

/**
 * Five segments of 12 batches (the last one active, so four are tiered): 1 to 4 records each of
 * varied sizes, timestamps out of order, three idempotent producers (one bumps its epoch), leader
 * epochs 1, 2, 3.
 */
function variedLog(): PartitionLog {
  const log = PartitionLog.open(tempDir(), { config: { indexIntervalBytes: 200 } });
  const producers = [11, 12, 13].map((producerId) => ({ producerId, producerEpoch: 0, sequence: 0 }));
  for (let i = 0; i < BATCH_COUNT; i++) {
    if (i > 0 && i % BATCHES_PER_SEGMENT === 0) log.roll();
    const producer = producers[i % producers.length]!;
    if (i === 31) Object.assign(producer, { producerEpoch: 1, sequence: 0 });
    const recordCount = 1 + (i % 4);
    const valueBytes = i === LARGE_BATCH_INDEX ? LARGE_VALUE_BYTES : 10 + ((i * 37) % 200);
    const records = Array.from({ length: recordCount }, (_, r) => ({ value: String.fromCharCode(97 + ((i + r) % 26)).repeat(valueBytes), timestamp: T0 + ((i * 7919) % 97) * 10 + r }));
    log.append(buildRecordBatch(records, { nowMs: T0, producerId: producer.producerId, producerEpoch: producer.producerEpoch, baseSequence: producer.sequence }), i < 20 ? 1 : i < 40 ? 2 : 3);
    producer.sequence += recordCount;
  }
  return log;
}

async function tiered(options: { segments?: number } = {}) {
  const log = variedLog();
  const tierStore = new MemoryStore();
  const controlStore = new MemoryStore();
  const records = new TierRecords(new ControlStore(controlStore, 'cluster'));
  const source: TierSource = { topic: 'remote', topicId: TOPIC_ID, partition: 0, leaderEpoch: LEADER_EPOCH, log, highWatermark: log.logEndOffset };
  const tierer = new Tierer({ store: tierStore, prefix: PREFIX, records, clock: new ManualClock(), random: new SeededRandom(7), partitions: () => [source] });
  for (let i = 0; i < (options.segments ?? Infinity); i++) if ((await tierer.tierDue()) === 0) break;
  const clock = new ManualClock();
  const reader = (extra: Partial<ConstructorParameters<typeof RemoteReader>[0]> = {}): RemoteReader =>
    new RemoteReader({ store: tierStore, prefix: PREFIX, records, clock, chunkBytes: CHUNK_BYTES, ...extra });
  return { log, tierStore, controlStore, records, tierer, clock, reader };
}

/** Every batch of the log, read locally. */
function allBatches(log: PartitionLog): RecordBatch[] {
  return log.read(log.logStartOffset, 1 << 30).batches;
}

function bytesOf(batches: readonly RecordBatch[]): Buffer {
  return Buffer.concat(batches.map((batch) => batch.bytes));
}

function keyOf(segment: CopiedSegment): string {
  return tieredSegmentKey(PREFIX, TOPIC_ID, 0, segment.baseOffset, segment.endOffset, segment.uploadId);
}

async function failureOf(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected a failure');
}

/** Writes a copy of `key`'s object with one byte flipped at `position` (the MemoryStore overwrites without a condition). */
async function flipByte(store: MemoryStore, key: string, position: number): Promise<void> {
  const body = (await store.get(key)).body;
  body[position]! ^= 0x5a;
  await store.put(key, body);
}

/** Where each tiered batch starts in its segment's log section, by offsets, as the local log lays it out. */
function logPositions(log: PartitionLog, segment: CopiedSegment): { batch: RecordBatch; position: number }[] {
  let position = 0;
  return allBatches(log)
    .filter((batch) => batch.baseOffset >= segment.baseOffset && batch.baseOffset < segment.endOffset)
    .map((batch) => {
      const at = { batch, position };
      position += batch.sizeInBytes;
      return at;
    });
}

describe('RemoteReader.read', () => {
  test('returns exactly the bytes a local read returns, capped to the segment, for every batch base, offsets inside batches and several maxBytes', async () => {
    const { log, records, reader: makeReader } = await tiered();
    const reader = makeReader();
    const segments = copiedSegments(await records.read(TOPIC_ID, 0));
    const tieredEndOffset = segments.at(-1)!.endOffset;
    expect(segments.length).toBe(4);
    const batches = allBatches(log).filter((batch) => batch.baseOffset < tieredEndOffset);
    expect(batches.find((batch) => batch.sizeInBytes > CHUNK_BYTES * 5)).toBeDefined();
    let compared = 0;
    for (const batch of batches) {
      const offsets = batch.lastOffset > batch.baseOffset ? [batch.baseOffset, batch.baseOffset + 1, batch.lastOffset] : [batch.baseOffset];
      for (const offset of offsets) {
        const segmentEnd = segments.find((segment) => offset >= segment.baseOffset && offset < segment.endOffset)!.endOffset;
        const following = log.read(offset, 1 << 20).batches.filter((b) => b.baseOffset < segmentEnd);
        const exactFit = following.slice(0, 2).reduce((sum, b) => sum + b.sizeInBytes, 0); // the second batch fits to the byte
        for (const maxBytes of [...MAX_BYTES_ASKED, exactFit, exactFit - 1]) {
          const remote = await reader.read(TOPIC_ID, 0, offset, maxBytes);
          const local = log.read(offset, maxBytes).batches.filter((b) => b.baseOffset < segmentEnd);
          expect(bytesOf(remote.batches).equals(bytesOf(local))).toBe(true);
          expect(remote.batches[0]!.baseOffset <= offset && remote.batches[0]!.lastOffset >= offset).toBe(true);
          expect([remote.logStartOffset, remote.tieredEnd]).toEqual([0, tieredEndOffset]);
          compared++;
        }
      }
    }
    expect(compared).toBeGreaterThan(batches.length * (MAX_BYTES_ASKED.length + 2));
    expect(reader.spanningCopies).toBeGreaterThan(0);
    await log.close();
  });

  test('with the default chunk size (a segment in one chunk) the bytes are the same', async () => {
    const { log, reader: makeReader } = await tiered();
    const reader = makeReader({ chunkBytes: undefined });
    for (const batch of allBatches(log).filter((b) => b.baseOffset < 48)) {
      const segmentEnd = log.segmentBaseOffsets.find((base) => base > batch.baseOffset)!;
      const local = log.read(batch.baseOffset, 5000).batches.filter((b) => b.baseOffset < segmentEnd);
      expect(bytesOf((await reader.read(TOPIC_ID, 0, batch.baseOffset, 5000)).batches).equals(bytesOf(local))).toBe(true);
    }
    expect(reader.spanningCopies).toBe(0);
    await log.close();
  });

  test('offsets below the record start or at and past the tiered end are OffsetOutOfRange naming both bounds', async () => {
    const { log, records, reader: makeReader } = await tiered();
    const segments = copiedSegments(await records.read(TOPIC_ID, 0));
    const tieredEndOffset = segments.at(-1)!.endOffset;
    const startOffset = segments[1]!.baseOffset + 3; // retention moved the start inside segment 1
    await records.expireBefore(TOPIC_ID, 0, LEADER_EPOCH, startOffset);
    const reader = makeReader();
    for (const offset of [-1, 0, startOffset - 1, tieredEndOffset, tieredEndOffset + 5, startOffset + 0.5, Number.NaN]) {
      const error = await failureOf(reader.read(TOPIC_ID, 0, offset, 1000));
      expect(isFerryError(error, 'OffsetOutOfRange')).toBe(true);
      expect(error.message).toContain(`[${startOffset}, ${tieredEndOffset})`);
    }
    const atStart = await reader.read(TOPIC_ID, 0, startOffset, 0);
    expect(atStart.batches[0]!.lastOffset).toBeGreaterThanOrEqual(startOffset);
    expect(atStart.logStartOffset).toBe(startOffset);
    await log.close();
  });

  test('an offset the cached record does not cover reads the record again: a segment tiered since is served at once', async () => {
    const { log, records, tierer, reader: makeReader } = await tiered({ segments: 2 });
    const reader = makeReader({ recordRefreshMs: 1_000_000 });
    const before = await reader.read(TOPIC_ID, 0, 0, 100);
    expect(before.tieredEnd).toBe(copiedSegments(await records.read(TOPIC_ID, 0)).at(-1)!.endOffset);
    expect(await tierer.tierDue()).toBe(1);
    const segments = copiedSegments(await records.read(TOPIC_ID, 0));
    const third = segments[2]!;
    const remote = await reader.read(TOPIC_ID, 0, third.baseOffset, 100);
    expect(bytesOf(remote.batches).equals(bytesOf(log.read(third.baseOffset, 100).batches))).toBe(true);
    expect(remote.tieredEnd).toBe(third.endOffset);
    await log.close();
  });

  test('a segment deleted by retention after the record was cached answers OffsetOutOfRange from the record read again', async () => {
    const { log, tierStore, records, reader: makeReader } = await tiered();
    const reader = makeReader({ recordRefreshMs: 1_000_000 });
    const segments = copiedSegments(await records.read(TOPIC_ID, 0));
    await reader.read(TOPIC_ID, 0, segments[1]!.baseOffset, 100); // the record is cached, segment 0 never read
    await records.expireBefore(TOPIC_ID, 0, LEADER_EPOCH, segments[1]!.baseOffset);
    await tierStore.delete(keyOf(segments[0]!));
    const error = await failureOf(reader.read(TOPIC_ID, 0, 5, 100));
    expect(isFerryError(error, 'OffsetOutOfRange')).toBe(true);
    expect(error.message).toContain(`[${segments[1]!.baseOffset}, `);
    expect(await reader.logStartOffset(TOPIC_ID, 0)).toBe(segments[1]!.baseOffset);
    expect((await reader.read(TOPIC_ID, 0, segments[1]!.baseOffset, 100)).logStartOffset).toBe(segments[1]!.baseOffset);
    await log.close();
  });

  test('a segment the record still names but whose object is gone is reported, not answered', async () => {
    const { log, tierStore, records, reader: makeReader } = await tiered();
    const segments = copiedSegments(await records.read(TOPIC_ID, 0));
    await tierStore.delete(keyOf(segments[0]!));
    const error = await failureOf(makeReader().read(TOPIC_ID, 0, 0, 100));
    expect(isFerryError(error, 'Storage')).toBe(true);
    await log.close();
  });
});

describe('RemoteReader integrity', () => {
  /** A tiered log, a batch of segment 1 past its first (so the walk reaches it from an index entry), and its object's layout. */
  async function corruptible() {
    const setup = await tiered();
    const segment = copiedSegments(await setup.records.read(TOPIC_ID, 0))[1]!;
    const laidOut = logPositions(setup.log, segment);
    const target = laidOut[5]!;
    const objectPosition = segment.sections.log!.position + target.position;
    return { ...setup, segment, target, objectPosition };
  }

  test("a flipped byte in a batch's records (its CRC32C) is refused CorruptObject, and the batches before it still read", async () => {
    const { log, tierStore, segment, target, objectPosition, reader } = await corruptible();
    await flipByte(tierStore, keyOf(segment), objectPosition + target.batch.sizeInBytes - 1);
    const error = await failureOf(reader().read(TOPIC_ID, 0, target.batch.baseOffset, 0));
    expect(isFerryError(error, 'CorruptObject')).toBe(true);
    expect(error.message).toMatch(/crc/);
    expect(error.message.split('\n').length).toBe(1);
    const before = await reader().read(TOPIC_ID, 0, segment.baseOffset, 0);
    expect(before.batches.length).toBe(1);
    // a read that would include the corrupt batch after good ones fails whole: nothing of it is served
    expect(isFerryError(await failureOf(reader().read(TOPIC_ID, 0, segment.baseOffset, 1 << 20)), 'CorruptObject')).toBe(true);
    await log.close();
  });

  test("a flipped base offset (outside the CRC) breaks the offsets' continuity and is refused", async () => {
    const { log, tierStore, segment, target, objectPosition, reader } = await corruptible();
    await flipByte(tierStore, keyOf(segment), objectPosition + 7);
    const error = await failureOf(reader().read(TOPIC_ID, 0, target.batch.lastOffset, 0));
    expect(isFerryError(error, 'CorruptObject')).toBe(true);
    expect(error.message).toMatch(/baseOffset/);
    await log.close();
  });

  test('a flipped batch length is refused before anything is read by it', async () => {
    const { log, tierStore, segment, target, objectPosition, reader } = await corruptible();
    await flipByte(tierStore, keyOf(segment), objectPosition + 8);
    const error = await failureOf(reader().read(TOPIC_ID, 0, target.batch.baseOffset, 0));
    expect(isFerryError(error, 'CorruptObject')).toBe(true);
    expect(error.message).toMatch(/batchLength/);
    await log.close();
  });

  test("a flipped leader epoch (outside the CRC) is caught by the log section's XXH64 when the section is one chunk", async () => {
    const { log, tierStore, segment, target, objectPosition, reader } = await corruptible();
    await flipByte(tierStore, keyOf(segment), objectPosition + 13);
    const error = await failureOf(reader({ chunkBytes: undefined }).read(TOPIC_ID, 0, target.batch.baseOffset, 0));
    expect(isFerryError(error, 'CorruptObject')).toBe(true);
    expect(error.message).toMatch(/log checksum/);
    await log.close();
  });

  test('a flipped byte in the offset index is caught by its XXH64', async () => {
    const { log, tierStore, segment, reader } = await corruptible();
    await flipByte(tierStore, keyOf(segment), segment.sections.offsetIndex!.position + 20);
    const error = await failureOf(reader().read(TOPIC_ID, 0, segment.baseOffset, 0));
    expect(isFerryError(error, 'CorruptObject')).toBe(true);
    expect(error.message).toMatch(/offsetIndex checksum/);
    await log.close();
  });
});

/** An ObjectStore that counts the GETs under way at once. */
class ConcurrencyProbe {
  inFlight = 0;
  maxInFlight = 0;

  wrap(store: ObjectStore): ObjectStore {
    const probe = this;
    return new Proxy(store, {
      get(target, property, receiver) {
        if (property !== 'get') return Reflect.get(target, property, receiver);
        return async (key: string, options?: GetOptions): Promise<GetResult> => {
          probe.inFlight++;
          probe.maxInFlight = Math.max(probe.maxInFlight, probe.inFlight);
          try {
            return await target.get(key, options);
          } finally {
            probe.inFlight--;
          }
        };
      },
    });
  }
}

describe('RemoteReader cache and requests', () => {
  test('the cache never holds more than cacheBytes, whatever is read', async () => {
    const cacheBytes = CHUNK_BYTES * 3 + 100;
    const { log, reader: makeReader } = await tiered();
    const reader = makeReader({ cacheBytes });
    const offsets = allBatches(log)
      .filter((b) => b.baseOffset < 48)
      .map((b) => b.baseOffset);
    const order = [...offsets, ...offsets.reverse()];
    let peak = 0;
    for (const offset of order) {
      await reader.read(TOPIC_ID, 0, offset, 5000);
      expect(reader.cachedBytes).toBeLessThanOrEqual(cacheBytes);
      peak = Math.max(peak, reader.cachedBytes);
    }
    expect(peak).toBeGreaterThan(CHUNK_BYTES * 2);
    await log.close();
  });

  test('concurrent reads of one chunk make one GET of it, and a cached chunk makes none', async () => {
    const { log, tierStore, reader: makeReader } = await tiered();
    const reader = makeReader({ readAheadChunks: 0 }); // GETs counted exactly: none ahead
    const gets = (): number => tierStore.stats().requests.get;
    const before = gets();
    const reads = await Promise.all(Array.from({ length: 8 }, () => reader.read(TOPIC_ID, 0, 0, 0)));
    expect(new Set(reads.map((read) => bytesOf(read.batches).toString('hex'))).size).toBe(1);
    expect(gets() - before).toBe(2); // segment 0's offset index, then its first chunk
    await reader.read(TOPIC_ID, 0, 0, 0);
    expect(gets() - before).toBe(2);
    await log.close();
  });

  test('a reader going on finds the next chunks fetched ahead: served from the cache with the tier unreadable', async () => {
    const { log, tierStore, reader: makeReader } = await tiered();
    let unreadable = false;
    const store = new Proxy(tierStore, {
      get: (target, name) => {
        if (name === 'get') return (key: string, options?: GetOptions) => (unreadable ? Promise.reject(new Error('injected: the tier cannot be read')) : target.get(key, options));
        const value: unknown = Reflect.get(target, name, target);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    const ahead = (readAheadChunks: number) => makeReader({ store, readAheadChunks });
    /** A batch of the first segment past chunk 0 and within chunks 1 and 2: what a read-ahead of two brings. */
    const aheadBatch = () => {
      let position = 0;
      for (const batch of allBatches(log).slice(0, BATCHES_PER_SEGMENT)) {
        if (position >= CHUNK_BYTES && position + batch.bytes.length <= 3 * CHUNK_BYTES) return batch;
        position += batch.bytes.length;
      }
      throw new Error('no batch of the first segment lies in chunks 1 and 2');
    };
    const next = aheadBatch();
    for (const [readAheadChunks, served] of [
      [2, true],
      [0, false],
    ] as const) {
      unreadable = false;
      const reader = ahead(readAheadChunks);
      await reader.read(TOPIC_ID, 0, 0, 1); // the first batch: the offset index and chunk 0, then the chunks ahead
      await Bun.sleep(1);
      unreadable = true;
      const read = reader.read(TOPIC_ID, 0, next.baseOffset, 1).then((result) => bytesOf(result.batches.slice(0, 1)).toString('hex'));
      if (served) expect(await read).toBe(Buffer.from(next.bytes).toString('hex'));
      else await expect(read).rejects.toThrow(/cannot be read/);
    }
    await log.close();
  });

  test('at most readsInFlight GETs run at once', async () => {
    const { log, tierStore, records, clock } = await tiered();
    const offsets = allBatches(log)
      .filter((b) => b.baseOffset < 48)
      .map((b) => b.baseOffset);
    const maxSeen = async (readsInFlight: number): Promise<number> => {
      const probe = new ConcurrencyProbe();
      const reader = new RemoteReader({ store: probe.wrap(tierStore), prefix: PREFIX, records, clock, chunkBytes: CHUNK_BYTES, readsInFlight });
      await Promise.all(offsets.map((offset) => reader.read(TOPIC_ID, 0, offset, 5000)));
      return probe.maxInFlight;
    };
    expect(await maxSeen(2)).toBe(2);
    expect(await maxSeen(64)).toBeGreaterThan(2);
    await log.close();
  });

  test("forget drops a partition's cached record and bytes", async () => {
    const { log, controlStore, reader: makeReader } = await tiered();
    const reader = makeReader({ recordRefreshMs: 1_000_000 });
    await reader.read(TOPIC_ID, 0, 0, 5000);
    const recordGets = controlStore.stats().requests.get;
    await reader.read(TOPIC_ID, 0, 0, 5000);
    expect(controlStore.stats().requests.get).toBe(recordGets);
    expect(reader.cachedBytes).toBeGreaterThan(0);
    reader.forget(TOPIC_ID, 0);
    expect(reader.cachedBytes).toBe(0);
    await reader.read(TOPIC_ID, 0, 0, 5000);
    expect(controlStore.stats().requests.get).toBe(recordGets + 1);
    await log.close();
  });

  test('logStartOffset is null until something is tiered; the cached record is read again once older than recordRefreshMs', async () => {
    const { log, records, tierer, clock, reader: makeReader } = await tiered({ segments: 0 });
    const reader = makeReader({ recordRefreshMs: 1000 });
    expect(await reader.logStartOffset(TOPIC_ID, 0)).toBeNull();
    expect(await reader.tieredEnd(TOPIC_ID, 0)).toBe(0);
    expect(await tierer.tierDue()).toBe(1);
    expect(await reader.tieredEnd(TOPIC_ID, 0)).toBe(0); // still the cached record
    clock.advance(1000);
    expect(await reader.tieredEnd(TOPIC_ID, 0)).toBe(tieredEnd(await records.read(TOPIC_ID, 0)));
    expect(await reader.logStartOffset(TOPIC_ID, 0)).toBe(0);
    await log.close();
  });
});

describe('RemoteReader.offsetForTimestamp', () => {
  /** The first tiered record at or above the start whose timestamp reaches `timestamp`, by a linear scan of every record. */
  function linearScan(batches: readonly RecordBatch[], startOffset: number, tieredEndOffset: number, timestamp: number): { offset: number; timestamp: number } | null {
    for (const batch of batches) {
      if (batch.baseOffset >= tieredEndOffset) break;
      for (const record of batch.records()) if (record.offset >= startOffset && record.timestamp >= timestamp) return { offset: record.offset, timestamp: record.timestamp };
    }
    return null;
  }

  async function agreesWithScan(startOffset: number): Promise<void> {
    const { log, records, reader: makeReader } = await tiered();
    if (startOffset > 0) await records.expireBefore(TOPIC_ID, 0, LEADER_EPOCH, startOffset);
    const reader = makeReader();
    const tieredEndOffset = tieredEnd(await records.read(TOPIC_ID, 0));
    const batches = allBatches(log);
    const timestamps = batches.map((batch) => batch.maxTimestamp);
    const low = Math.min(...timestamps) - 5;
    const high = Math.max(...timestamps) + 5;
    let answered = 0;
    for (let timestamp = low; timestamp <= high; timestamp += 3) {
      const expected = linearScan(batches, startOffset, tieredEndOffset, timestamp);
      expect([timestamp, await reader.offsetForTimestamp(TOPIC_ID, 0, timestamp)]).toEqual([timestamp, expected]);
      if (expected !== null && expected.offset > startOffset) answered++;
    }
    expect(answered).toBeGreaterThan(10);
    await log.close();
  }

  test('agrees with a linear scan over the tiered batches', () => agreesWithScan(0));
  test('agrees with a linear scan when retention moved the start inside a segment', () => agreesWithScan(17));
});

describe('ByteLru', () => {
  test('evicts the least recently used until a value fits, and never holds a value larger than its capacity', () => {
    const lru = new ByteLru(10);
    lru.set('a', new Uint8Array(4));
    lru.set('b', new Uint8Array(4));
    lru.get('a');
    lru.set('c', new Uint8Array(4));
    expect([lru.get('a') !== undefined, lru.get('b') !== undefined, lru.get('c') !== undefined, lru.heldBytes]).toEqual([true, false, true, 8]);
    lru.set('huge', new Uint8Array(11));
    expect([lru.get('huge'), lru.heldBytes]).toEqual([undefined, 8]);
    lru.set('a', new Uint8Array(10));
    expect([lru.size, lru.heldBytes]).toEqual([1, 10]);
    lru.deletePrefix('a');
    expect(lru.heldBytes).toBe(0);
  });
});

/** Lets pending promise callbacks run (no timers). */
async function settle(): Promise<void> {
  for (let i = 0; i < 10; i++) await Promise.resolve();
}

describe('Semaphore', () => {
  test('runs at most its permits at once, the rest in arrival order', async () => {
    const semaphore = new Semaphore(2);
    const started: number[] = [];
    const releases = new Map<number, () => void>();
    const tasks = [0, 1, 2, 3].map((n) =>
      semaphore.run(
        () =>
          new Promise<number>((resolve) => {
            started.push(n);
            releases.set(n, () => resolve(n));
          }),
      ),
    );
    await settle();
    expect([started, semaphore.running, semaphore.waiting]).toEqual([[0, 1], 2, 2]);
    releases.get(1)!();
    await settle();
    expect(started).toEqual([0, 1, 2]);
    releases.get(0)!();
    await settle();
    expect([started, semaphore.running, semaphore.waiting]).toEqual([[0, 1, 2, 3], 2, 0]);
    releases.get(2)!();
    releases.get(3)!();
    expect(await Promise.all(tasks)).toEqual([0, 1, 2, 3]);
    expect(semaphore.running).toBe(0);
  });
});
