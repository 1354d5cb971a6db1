// Adversarial review of the tierer's liveness (docs/tier-protocol.md [T1]-[T7]): one failure on
// the way to a commit must not stop a partition's tiering, retention or sweeping for the rest of
// its leader's epoch. Each test here failed when written; its comment says how.
import { expect, test } from 'bun:test';
import { ControlStore } from '../../src/control/control-store.ts';
import { buildRecordBatch } from '../../src/format/batch-builder.ts';
import { PartitionLog } from '../../src/log/partition-log.ts';
import { StoreError } from '../../src/store/errors.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import type { ObjectStore, PutOptions } from '../../src/store/object-store.ts';
import { type CopiedSegment, TIERED_SEGMENTS_MAX, TierRecords, tieredEnd, tierRecordKey } from '../../src/tier/tier-record.ts';
import { Tierer, type TierSource } from '../../src/tier/tierer.ts';
import { ManualClock } from '../../src/util/clock.ts';
import { SeededRandom } from '../../src/util/random.ts';
import { idOf } from '../support/topic-ids.ts';
import { tempDir } from '../support/temp-dir.ts';

const TOPIC_ID = idOf('review-liveness');
const HOUR_MS = 60 * 60_000;
const T0 = 1_700_000_000_000;
/** Rounds a healthy tierer needs at most to get past one failed attempt. */
const ROUNDS_TO_RECOVER = 4;

/** A store whose `n`-th put (counting from 1) lands and then answers Timeout: S3's "did my write win?". */
function losingAnswerOfPut(inner: MemoryStore, n: number): ObjectStore {
  let puts = 0;
  const put = async (key: string, body: Uint8Array, options?: PutOptions) => {
    const result = await inner.put(key, body, options);
    if (++puts === n) throw new StoreError('Timeout', 'injected: the put landed, its answer was lost', { key });
    return result;
  };
  return new Proxy(inner, {
    get: (target, name) => {
      if (name === 'put') return put;
      const value: unknown = Reflect.get(target, name, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  }) as ObjectStore;
}

/** A log of rolled 5-record segments [0, 5), [5, 10), ... starting at `start`, 1-record batches timestamped from `t0`. */
function rolledLog(t0: number, batches: number, start = 0): PartitionLog {
  const log = PartitionLog.open(tempDir(), { config: { retentionMs: HOUR_MS } });
  if (start > 0) log.startAt(start, [], null);
  for (let i = 0; i < batches; i++) {
    if (i > 0 && i % 5 === 0) log.roll();
    log.append(buildRecordBatch([{ value: `v${i}`, timestamp: t0 + i }], { nowMs: t0 + i }), 1);
  }
  return log;
}

function tiererOver(log: PartitionLog, records: TierRecords, tierStore: ObjectStore, clock: ManualClock, logLines: string[] = []): Tierer {
  const source: TierSource = { topic: 't', topicId: TOPIC_ID, partition: 0, leaderEpoch: 1, log, highWatermark: log.logEndOffset };
  return new Tierer({ store: tierStore, prefix: '', records, clock, random: new SeededRandom(11), partitions: () => [source], log: (line) => logLines.push(line) });
}

// Found by review (finding 1), fixed: a commit whose answer is lost (the record PUT landed, then a Timeout) wedges the
// partition's tiering for the rest of the epoch. Tierer.#tierRange leaves `held.record` as it was
// after the announce (the entry still `copying`), and #take keeps serving that stale copy, so
// every later round computes the old tiered end, announces [old TE, x) and is refused
// InvalidOffsets ("does not start at the tiered end") by the record, which is already past it.
// Only NotLeader drops the held copy. Tiering, T7 retention and T6 sweeping of the partition stop
// until leadership moves, and tieredEndOf stays behind (local retention frees nothing more).
test('after a commit whose answer was lost, the next rounds go on tiering', async () => {
  const clock = new ManualClock(T0);
  const log = rolledLog(T0, 16); // rolled [0,5) [5,10) [10,15), active [15,16)
  // puts to the record: 1 take (create), 2 announce, 3 commit: the commit lands and times out
  const records = new TierRecords(new ControlStore(losingAnswerOfPut(new MemoryStore(), 3), 'cluster'));
  const logLines: string[] = [];
  const tierer = tiererOver(log, records, new MemoryStore(), clock, logLines);
  expect(await tierer.tierDue()).toBe(0); // the commit's answer was lost
  expect(tieredEnd(await records.read(TOPIC_ID, 0))).toBe(5); // ...but it landed
  for (let round = 0; round < ROUNDS_TO_RECOVER; round++) await tierer.tierDue();
  expect(logLines.filter((line) => /does not start at the tiered end/.test(line))).toEqual([]);
  expect(tieredEnd(await records.read(TOPIC_ID, 0))).toBe(15);
  expect(tierer.tieredEndOf(TOPIC_ID, 0)).toBe(15);
  await log.close();
});

// Found by review (finding 2), fixed: T7 retention (and the T6 sweep) run in Tierer.#tierOne only after the next range was
// tiered: any failure of the upload (tier store down or refusing puts, a read-back that never
// matches, dueRange's InvalidOffsets) skips #expire and #sweepWhenDue for that round, every round.
// With the tier store down and the record store up, retention.ms never moves the log start: the
// tier keeps (and serves, and bills for) history retention deletes, for as long as the outage or
// the bad object lasts.
test('tier retention still runs while uploads of the next segment keep failing', async () => {
  const clock = new ManualClock(T0);
  const log = rolledLog(T0, 16);
  const tierStore = new MemoryStore();
  const records = new TierRecords(new ControlStore(new MemoryStore(), 'cluster'));
  const tierer = tiererOver(log, records, tierStore, clock);
  expect(await tierer.tierDue()).toBe(1);
  expect(await tierer.tierDue()).toBe(1);
  expect(tieredEnd(await records.read(TOPIC_ID, 0))).toBe(10);
  tierStore.injectFault({ operation: 'put', kind: 'Unavailable', count: 1_000 }); // the tier store refuses every upload from now on
  clock.advance(2 * HOUR_MS); // [0, 5) and [5, 10) are past retention.ms
  for (let round = 0; round < ROUNDS_TO_RECOVER; round++) await tierer.tierDue();
  expect((await records.read(TOPIC_ID, 0)).startOffset).toBe(5); // [0, 5) goes; the last copied segment holds the producer state at the tier's end [T7]
  await log.close();
});

// Found by review (finding 3, a deadlock case of 2), fixed: a partition whose record holds TIERED_SEGMENTS_MAX entries
// has its announce refused (InvalidArgument) before #expire runs, so retention can never remove
// the old entries that would make room: it stays full, untiered and unexpired forever, although
// every one of its tiered segments is past retention.ms. The docs say such a partition "stops
// tiering and says so"; retention was meant to keep it from getting (or staying) there.
test('a full tier record whose segments are all past retention makes room and tiers again', async () => {
  const clock = new ManualClock(T0);
  const control = new ControlStore(new MemoryStore(), 'cluster');
  const records = new TierRecords(control);
  const full: CopiedSegment[] = Array.from({ length: TIERED_SEGMENTS_MAX }, (_, i) => ({
    state: 'copied',
    baseOffset: i,
    endOffset: i + 1,
    uploadId: `u${i}`,
    leaderEpoch: 1,
    bytes: 300,
    maxTimestamp: T0 - 2 * HOUR_MS,
    epochs: [],
    sections: { log: { position: 52, length: 70, checksum: '0' } },
  }));
  await control.create(tierRecordKey(TOPIC_ID, 0), { leaderEpoch: 1, startOffset: 0, segments: full });
  const log = rolledLog(T0, 11, TIERED_SEGMENTS_MAX); // local segments from the tiered end on
  const tierer = tiererOver(log, records, new MemoryStore(), clock);
  for (let round = 0; round < ROUNDS_TO_RECOVER; round++) await tierer.tierDue();
  const record = await records.read(TOPIC_ID, 0);
  expect(record.startOffset).toBe(TIERED_SEGMENTS_MAX); // every old entry was past retention.ms
  expect(tieredEnd(record)).toBeGreaterThan(TIERED_SEGMENTS_MAX);
  await log.close();
});
