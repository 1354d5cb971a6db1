// Adversarial review of tiering's bounds and integrity (docs/tier-protocol.md [T4], [K2], [D2]):
// the tierer's memory per upload, the rebuild point once retention emptied the tier, and a remote
// read of a batch whose bytes outside its CRC were changed. Each test here failed when written;
// its comment says how.
import { afterEach, expect, test } from 'bun:test';
import { ControlStore } from '../../src/control/control-store.ts';
import { isFerryError } from '../../src/errors.ts';
import { buildRecordBatch } from '../../src/format/batch-builder.ts';
import { PartitionLog } from '../../src/log/partition-log.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import { STREAMING_PART_BYTES_DEFAULT } from '../../src/store/streaming-upload.ts';
import { tieredSegmentKey } from '../../src/tier/keys.ts';
import { RemoteReader } from '../../src/tier/remote-reader.ts';
import { copiedSegments, TierRecords, tieredEnd, tierRecordKey } from '../../src/tier/tier-record.ts';
import { tierStartOf } from '../../src/tier/tier-start.ts';
import { Tierer, type TierSource } from '../../src/tier/tierer.ts';
import { ManualClock } from '../../src/util/clock.ts';
import { SeededRandom } from '../../src/util/random.ts';
import { idOf } from '../support/topic-ids.ts';
import { tempDir } from '../support/temp-dir.ts';

const TOPIC_ID = idOf('review-integrity');
const T0 = 1_700_000_000_000;
const PREFIX = 'tiered';

const originalXxHash64 = Bun.hash.xxHash64;
afterEach(() => {
  (Bun.hash as { xxHash64: typeof originalXxHash64 }).xxHash64 = originalXxHash64;
});

function tiererOf(log: PartitionLog, store: MemoryStore, records: TierRecords): Tierer {
  const source: TierSource = { topic: 't', topicId: TOPIC_ID, partition: 0, leaderEpoch: 1, log, highWatermark: log.logEndOffset };
  return new Tierer({ store, prefix: PREFIX, records, clock: new ManualClock(T0), random: new SeededRandom(13), partitions: () => [source] });
}

// Found by review (finding 4), fixed: the tierer holds a whole segment in memory per upload, twice. TieredSegmentBuilder
// hashes the log section through xxh64Stream(), which only streams once loadXxh64Stream() has
// resolved; nothing in src/ ever calls it (the builder's own comment says "an uploader of large
// ranges loads it first"), so JoiningXxh64Stream keeps every batch read for the upload and, at
// finish, joins them into one more buffer of the section's size to hash it. With the default
// segment.bytes of 1 GiB and TIER_UPLOADS_IN_FLIGHT = 2 that is about 4 GiB at the end of two
// uploads, while StreamingUpload itself stays within (concurrency + 1) x 8 MiB.
test('an upload never hashes (so never holds) its whole log section at once', async () => {
  const SEGMENT_BATCHES = 48;
  const VALUE_BYTES = 256 * 1024; // 12 MiB of log in the segment tiered: more than a part
  const log = PartitionLog.open(tempDir());
  for (let i = 0; i <= SEGMENT_BATCHES; i++) {
    if (i === SEGMENT_BATCHES) log.roll();
    log.append(buildRecordBatch([{ value: 'x'.repeat(VALUE_BYTES), timestamp: T0 }], { nowMs: T0 }), 1);
  }
  let largestHashed = 0;
  (Bun.hash as { xxHash64: typeof originalXxHash64 }).xxHash64 = ((bytes: Uint8Array, seed?: bigint) => {
    largestHashed = Math.max(largestHashed, bytes.length);
    return originalXxHash64(bytes, seed);
  }) as typeof originalXxHash64;
  const records = new TierRecords(new ControlStore(new MemoryStore(), 'cluster'));
  expect(await tiererOf(log, new MemoryStore(), records).tierDue()).toBe(1);
  const logSection = copiedSegments(await records.read(TOPIC_ID, 0))[0]!.sections.log!.length;
  expect(logSection).toBeGreaterThan(SEGMENT_BATCHES * VALUE_BYTES);
  // the most an upload holds anyway is its parts (the store hashes a part of STREAMING_PART_BYTES_DEFAULT whole)
  expect(largestHashed).toBeLessThanOrEqual(STREAMING_PART_BYTES_DEFAULT);
  await log.close();
});

// Found by review (finding 5), fixed: once T7 retention removed every tiered segment (the record keeps startOffset = TE and
// no segments: tier-retention.test.ts makes exactly this record), tierStartOf answers null, "nothing
// tiered", and PartitionHost.#rebuild then rebuilds the log from offset 0 of the WAL chain instead
// of from TE [K2]. Today that brings back, on the new leader, every record retention deleted
// (ListOffsets earliest is the local log's 0 again, since the tier has no copied segment); once
// WAL GC [G] deletes frames below TE, the same rebuild finds the chain starting above its empty
// log and fails (applyFrame's InvalidOffsets) on every takeover. And the producer state at TE
// lived only in the expired segment's object: the record no longer carries it anywhere.
test('a tier emptied by retention still makes a rebuild start at the tiered end', async () => {
  const control = new ControlStore(new MemoryStore(), 'cluster');
  const records = new TierRecords(control);
  await control.create(tierRecordKey(TOPIC_ID, 0), { leaderEpoch: 1, startOffset: 15, segments: [] });
  expect(tieredEnd(await records.read(TOPIC_ID, 0))).toBe(15);
  const start = await tierStartOf(records, new MemoryStore(), PREFIX, TOPIC_ID, 0);
  expect(start?.offset).toBe(15);
});

// Found by review (finding 6), fixed: a remote read serves a batch whose partition leader epoch (outside the batch CRC)
// was changed in the tier, whenever the log section is more than one chunk (every segment above
// TIER_CHUNK_BYTES = 1 MiB, so nearly all in production): SegmentBatchWalk checks offsets, length,
// magic and CRC, and only a one-chunk section is checked against its XXH64. The segment's own
// `epochs` (in the tier record) would catch it: a batch's epoch must be the one in effect at its
// base offset. Kafka clients use that field for fencing and truncation detection (KIP-320).
test('a batch whose leader epoch was changed in the tier is never served, whatever the chunk size', async () => {
  const log = PartitionLog.open(tempDir());
  for (let i = 0; i < 21; i++) {
    if (i === 20) log.roll();
    log.append(buildRecordBatch([{ value: `value-${i}`.padEnd(100, '.'), timestamp: T0 + i }], { nowMs: T0 }), 1);
  }
  const store = new MemoryStore();
  const records = new TierRecords(new ControlStore(new MemoryStore(), 'cluster'));
  expect(await tiererOf(log, store, records).tierDue()).toBe(1);
  const segment = copiedSegments(await records.read(TOPIC_ID, 0))[0]!;
  const local = log.read(10, 0).batches[0]!;
  const localBefore = log.read(0, 1 << 20).batches.filter((batch) => batch.baseOffset < 10);
  const position = segment.sections.log!.position + localBefore.reduce((sum, batch) => sum + batch.sizeInBytes, 0);
  const key = tieredSegmentKey(PREFIX, TOPIC_ID, 0, segment.baseOffset, segment.endOffset, segment.uploadId);
  const body = (await store.get(key)).body;
  body[position + 15]! ^= 0x04; // the low byte of partitionLeaderEpoch: epoch 1 reads as 5
  await store.put(key, body);
  const reader = new RemoteReader({ store, prefix: PREFIX, records, clock: new ManualClock(), chunkBytes: 512 });
  let served: Uint8Array | null = null;
  try {
    served = (await reader.read(TOPIC_ID, 0, 10, 0)).batches[0]!.bytes;
  } catch (error) {
    expect(isFerryError(error, 'CorruptObject')).toBe(true);
  }
  if (served !== null) expect(Buffer.from(served).equals(Buffer.from(local.bytes))).toBe(true); // the bytes the local log holds, or nothing
  await log.close();
});
