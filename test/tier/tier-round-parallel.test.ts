// [T3] A tier round steps through TIER_PARTITIONS_IN_FLIGHT partitions at once, and at most
// TIER_UPLOADS_IN_FLIGHT of them upload more than TIER_SMALL_RANGE_BYTES (their memory). Two at a
// time, a new leader took ~12 s to tier the 500 tails it inherited, longer than the time between
// takeovers in the failover bench (issue 28). Scheduled rounds wait while the broker adopts
// (TiererOptions.holdWhile), at most TIER_HOLD_FOR_ADOPTIONS_MAX_MS in a row.
import { afterEach, expect, test } from 'bun:test';
import { ControlStore } from '../../src/control/control-store.ts';
import { buildRecordBatch } from '../../src/format/batch-builder.ts';
import { PartitionLog } from '../../src/log/partition-log.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import type { ObjectStore, PutOptions } from '../../src/store/object-store.ts';
import { TierRecords, tieredEnd } from '../../src/tier/tier-record.ts';
import { TIER_HOLD_FOR_ADOPTIONS_MAX_MS, TIER_INTERVAL_MS, TIER_PARTITIONS_IN_FLIGHT, TIER_SMALL_RANGE_BYTES, TIER_UPLOADS_IN_FLIGHT, Tierer, type TierSource } from '../../src/tier/tierer.ts';
import { ManualClock } from '../../src/util/clock.ts';
import { SeededRandom } from '../../src/util/random.ts';
import { idOf } from '../support/topic-ids.ts';
import { overriding } from '../support/store-override.ts';
import { tempDir } from '../support/temp-dir.ts';

const TOPIC_ID = idOf('tier-round-parallel');
const T0 = 1_700_000_000_000;
/** How long each put of a tiered object is held: long enough for every worker of the round to reach its own. */
const PUT_HOLD_MS = 20;

/** A tier store whose puts are held PUT_HOLD_MS, counting how many were under way at once, all and large ones apart. */
class HeldPuts {
  inFlight = 0;
  largeInFlight = 0;
  mostInFlight = 0;
  mostLargeInFlight = 0;
  readonly store: ObjectStore;

  constructor(inner: MemoryStore) {
    const put = async (key: string, body: Uint8Array, options?: PutOptions) => {
      const large = body.length > TIER_SMALL_RANGE_BYTES;
      this.inFlight++;
      if (large) this.largeInFlight++;
      this.mostInFlight = Math.max(this.mostInFlight, this.inFlight);
      this.mostLargeInFlight = Math.max(this.mostLargeInFlight, this.largeInFlight);
      try {
        await Bun.sleep(PUT_HOLD_MS);
        return await inner.put(key, body, options);
      } finally {
        this.inFlight--;
        if (large) this.largeInFlight--;
      }
    };
    this.store = overriding(inner, 'put', put);
  }
}

const logs: PartitionLog[] = [];
afterEach(async () => {
  for (const log of logs.splice(0)) await log.close();
});

/** A log holding one rolled segment of `batches` batches of `valueBytes` each (a range due at once), then an active one. */
function logWithRolledSegment(batches: number, valueBytes: number): PartitionLog {
  const log = PartitionLog.open(tempDir(), {});
  logs.push(log);
  const value = 'v'.repeat(valueBytes);
  for (let i = 0; i < batches; i++) log.append(buildRecordBatch([{ value, timestamp: T0 + i }], { nowMs: T0 + i }), 1);
  log.roll();
  log.append(buildRecordBatch([{ value: 'active', timestamp: T0 + batches }], { nowMs: T0 + batches }), 1);
  return log;
}

async function tierOneRound(sourceLogs: readonly PartitionLog[]): Promise<{ puts: HeldPuts; records: TierRecords; tiered: number }> {
  const puts = new HeldPuts(new MemoryStore());
  const records = new TierRecords(new ControlStore(new MemoryStore(), 'cluster'));
  const sources: TierSource[] = sourceLogs.map((log, partition) => ({ topic: 't', topicId: TOPIC_ID, partition, leaderEpoch: 1, log, highWatermark: log.logEndOffset }));
  const tierer = new Tierer({ store: puts.store, prefix: '', records, clock: new ManualClock(T0), random: new SeededRandom(5), partitions: () => sources, log: () => undefined });
  const tiered = await tierer.tierDue();
  return { puts, records, tiered };
}

test('a round tiers many partitions’ small ranges side by side, up to TIER_PARTITIONS_IN_FLIGHT', async () => {
  const partitions = 2 * TIER_PARTITIONS_IN_FLIGHT;
  const { puts, records, tiered } = await tierOneRound(Array.from({ length: partitions }, () => logWithRolledSegment(3, 100)));
  expect(tiered).toBe(partitions);
  for (let partition = 0; partition < partitions; partition++) expect(tieredEnd(await records.read(TOPIC_ID, partition))).toBe(3);
  expect(puts.mostInFlight).toBe(TIER_PARTITIONS_IN_FLIGHT); // two at a time before
  expect(puts.mostLargeInFlight).toBe(0);
});

test('at most TIER_UPLOADS_IN_FLIGHT ranges larger than TIER_SMALL_RANGE_BYTES upload at once', async () => {
  const largeValueBytes = TIER_SMALL_RANGE_BYTES / 2;
  const large = Array.from({ length: 3 * TIER_UPLOADS_IN_FLIGHT }, () => logWithRolledSegment(3, largeValueBytes)); // 1.5 MiB ranges
  const small = Array.from({ length: TIER_PARTITIONS_IN_FLIGHT }, () => logWithRolledSegment(3, 100));
  const { puts, tiered } = await tierOneRound([...large, ...small]);
  expect(tiered).toBe(large.length + small.length);
  expect(puts.mostLargeInFlight).toBe(TIER_UPLOADS_IN_FLIGHT);
  expect(puts.mostInFlight).toBeGreaterThan(TIER_UPLOADS_IN_FLIGHT); // small ones went on beside the large ones
});

/** Lets the round a timer started run to its end (a memory store answers in a few turns). */
async function settled(done: () => boolean): Promise<void> {
  for (let turn = 0; turn < 200 && !done(); turn++) await Bun.sleep(1);
}

/** A started tierer of one partition with a range due (3 offsets), its rounds scheduled on `clock` and held while `holdWhile` says so. */
function scheduledTierer(clock: ManualClock, holdWhile: () => boolean): Tierer {
  const log = logWithRolledSegment(3, 100);
  const source: TierSource = { topic: 't', topicId: TOPIC_ID, partition: 0, leaderEpoch: 1, log, highWatermark: log.logEndOffset };
  const records = new TierRecords(new ControlStore(new MemoryStore(), 'cluster'));
  const tierer = new Tierer({ store: new MemoryStore(), prefix: '', records, clock, random: new SeededRandom(5), partitions: () => [source], holdWhile, log: () => undefined });
  tierer.start();
  return tierer;
}

test('scheduled rounds wait while the broker adopts, and go on once the adoptions ended', async () => {
  const clock = new ManualClock(T0);
  let adopting = true;
  const tierer = scheduledTierer(clock, () => adopting);
  for (let waited = 0; waited < TIER_HOLD_FOR_ADOPTIONS_MAX_MS / 2; waited += TIER_INTERVAL_MS) {
    clock.advance(TIER_INTERVAL_MS);
    await Bun.sleep(1);
  }
  expect(tierer.tieredEndOf(TOPIC_ID, 0)).toBeNull(); // not even taken
  adopting = false;
  clock.advance(TIER_INTERVAL_MS);
  await settled(() => tierer.tieredEndOf(TOPIC_ID, 0) === 3);
  expect(tierer.tieredEndOf(TOPIC_ID, 0)).toBe(3);
  tierer.stop();
});

test('adoptions hold the rounds at most TIER_HOLD_FOR_ADOPTIONS_MAX_MS in a row', async () => {
  const clock = new ManualClock(T0);
  const tierer = scheduledTierer(clock, () => true);
  for (let waited = 0; waited < TIER_HOLD_FOR_ADOPTIONS_MAX_MS; waited += TIER_INTERVAL_MS) {
    expect(tierer.tieredEndOf(TOPIC_ID, 0)).toBeNull();
    clock.advance(TIER_INTERVAL_MS);
    await Bun.sleep(1);
  }
  clock.advance(TIER_INTERVAL_MS);
  await settled(() => tierer.tieredEndOf(TOPIC_ID, 0) === 3);
  expect(tierer.tieredEndOf(TOPIC_ID, 0)).toBe(3);
  tierer.stop();
});
