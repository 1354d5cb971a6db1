// Issue 24: a last tiered segment whose producer state is unreadable for good (its section fails
// its checksum, or does not decode as a snapshot) must not stop a takeover (docs/tier-protocol.md
// [K2]): the start is the tiered end without it, and says what was lost. A store error, or bytes
// corrupted on the way (a second read differs), still fails as before: de-duplication state is
// given up only for bytes the store holds. The corruption cases failed when written (tierStartOf
// threw CorruptObject).
import { expect, test } from 'bun:test';
import { ControlStore } from '../../src/control/control-store.ts';
import { isFerryError } from '../../src/errors.ts';
import { buildRecordBatch } from '../../src/format/batch-builder.ts';
import { PartitionLog } from '../../src/log/partition-log.ts';
import { isStoreError, type StoreErrorKind } from '../../src/store/errors.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import type { GetOptions, GetResult } from '../../src/store/object-store.ts';
import { tieredSegmentKey } from '../../src/tier/keys.ts';
import { type CopiedSegment, copiedSegments, TierRecords } from '../../src/tier/tier-record.ts';
import { tierStartOf } from '../../src/tier/tier-start.ts';
import { Tierer, type TierSource } from '../../src/tier/tierer.ts';
import { ManualClock } from '../../src/util/clock.ts';
import { SeededRandom } from '../../src/util/random.ts';
import { idOf } from '../support/topic-ids.ts';
import { tempDir } from '../support/temp-dir.ts';

const TOPIC_ID = idOf('lost-producers');
const PREFIX = 'tiered';
const T0 = 1_700_000_000_000;
/** Idempotent batches in the segment that is tiered; one more starts the active segment. */
const TIERED_BATCHES = 10;

/** A store whose next `flips` GETs answer with one byte flipped: corruption on the path, not at rest. */
class FlippingStore extends MemoryStore {
  flips = 0;

  override async get(key: string, options?: GetOptions): Promise<GetResult> {
    const result = await super.get(key, options);
    if (this.flips === 0) return result;
    this.flips--;
    const body = result.body.slice();
    body[0]! ^= 0x01;
    return { ...result, body };
  }
}

interface Tiered {
  readonly store: FlippingStore;
  readonly records: TierRecords;
  readonly segment: CopiedSegment;
  readonly key: string;
}

/** One segment of TIERED_BATCHES idempotent batches tiered; `producers` replaces the snapshot the log would carry. */
async function tierOne(producers?: Uint8Array): Promise<Tiered> {
  const log = PartitionLog.open(tempDir());
  for (let sequence = 0; sequence <= TIERED_BATCHES; sequence++) {
    if (sequence === TIERED_BATCHES) log.roll();
    log.append(buildRecordBatch([{ value: `v-${sequence}`, timestamp: T0 }], { nowMs: T0, producerId: 7, producerEpoch: 0, baseSequence: sequence }), 1);
  }
  if (producers !== undefined) log.producerReplayFrom = () => ({ apply: () => {}, snapshotAt: () => producers });
  const store = new FlippingStore();
  const records = new TierRecords(new ControlStore(new MemoryStore(), 'cluster'));
  const source: TierSource = { topic: 't', topicId: TOPIC_ID, partition: 0, leaderEpoch: 1, log, highWatermark: log.logEndOffset };
  const tierer = new Tierer({ store, prefix: PREFIX, records, clock: new ManualClock(T0), random: new SeededRandom(24), partitions: () => [source] });
  expect(await tierer.tierDue()).toBe(1);
  await log.close();
  const segment = copiedSegments(await records.read(TOPIC_ID, 0)).at(-1)!;
  return { store, records, segment, key: tieredSegmentKey(PREFIX, TOPIC_ID, 0, segment.baseOffset, segment.endOffset, segment.uploadId) };
}

/** Flips one byte of the producers section in the store itself: every later read gets it. */
async function corruptProducersAtRest({ store, segment, key }: Tiered): Promise<void> {
  const body = (await store.get(key)).body.slice();
  body[segment.sections.producers!.position]! ^= 0xff;
  await store.put(key, body);
}

test('a producers section that fails its checksum in the store: the start is the tiered end without it, and says so', async () => {
  const tiered = await tierOne();
  await corruptProducersAtRest(tiered);
  const start = await tierStartOf(tiered.records, tiered.store, PREFIX, TOPIC_ID, 0);
  expect(start?.offset).toBe(TIERED_BATCHES);
  expect(start?.producers).toBeNull();
  expect(start?.epochs.length).toBe(1); // the tier's leader epochs are kept: only the producer state is lost
  expect(start?.producersLost?.segmentKey).toBe(tiered.key);
  expect(start?.producersLost?.reason).toContain('checksum');
});

test('a producers section whose checksum holds but that is no snapshot: lost the same way', async () => {
  const tiered = await tierOne(new TextEncoder().encode('not a producer snapshot'));
  const start = await tierStartOf(tiered.records, tiered.store, PREFIX, TOPIC_ID, 0);
  expect(start?.offset).toBe(TIERED_BATCHES);
  expect(start?.producers).toBeNull();
  expect(start?.producersLost?.segmentKey).toBe(tiered.key);
});

test('a readable producers section is no loss', async () => {
  const tiered = await tierOne();
  const start = await tierStartOf(tiered.records, tiered.store, PREFIX, TOPIC_ID, 0);
  expect(start?.producers?.length).toBe(tiered.segment.sections.producers!.length);
  expect(start?.producersLost).toBeUndefined();
});

for (const kind of ['Unavailable', 'Throttled', 'Timeout'] as const satisfies readonly StoreErrorKind[]) {
  test(`a ${kind} GET of the producers section still fails the start: nothing is given up on a blip`, async () => {
    const tiered = await tierOne();
    tiered.store.injectFault({ operation: 'get', kind, keyPrefix: tiered.key });
    const failed = await tierStartOf(tiered.records, tiered.store, PREFIX, TOPIC_ID, 0).catch((error: unknown) => error);
    expect(isStoreError(failed, kind)).toBe(true);
  });
}

test('a byte flipped on the way is read again, not taken for a corrupt object', async () => {
  const tiered = await tierOne();
  tiered.store.flips = 1;
  const start = await tierStartOf(tiered.records, tiered.store, PREFIX, TOPIC_ID, 0);
  expect(start?.producers?.length).toBe(tiered.segment.sections.producers!.length);
  expect(start?.producersLost).toBeUndefined();
});

test('reads corrupted on the way every time, each differently, still fail as before', async () => {
  const tiered = await tierOne();
  await corruptProducersAtRest(tiered); // the bytes at rest are bad too, but no two reads agree on them
  let reads = 0;
  const get = tiered.store.get.bind(tiered.store);
  tiered.store.get = async (key, options) => {
    const result = await get(key, options);
    const body = result.body.slice();
    body[1 + (reads++ % (body.length - 1))]! ^= 0x01; // a different byte each read
    return { ...result, body };
  };
  const failed = await tierStartOf(tiered.records, tiered.store, PREFIX, TOPIC_ID, 0).catch((error: unknown) => error);
  expect(isFerryError(failed, 'CorruptObject')).toBe(true);
});
