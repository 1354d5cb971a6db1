// The tier's own retention and orphan sweeping (docs/tier-protocol.md [T6], [T7]): retention.ms and
// retention.bytes count the whole log, tier included; segments past them leave the tier record,
// and an object no entry names (retention's, or a dead upload's) is deleted only after it was
// seen unnamed for TIER_ORPHAN_DELAY_MS, so a read that picked it just before still finds it.
import { expect, test } from 'bun:test';
import { ControlStore } from '../../src/control/control-store.ts';
import { buildRecordBatch } from '../../src/format/batch-builder.ts';
import { PartitionLog } from '../../src/log/partition-log.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import { tieredSegmentKey } from '../../src/tier/keys.ts';
import { OrphanSweeper } from '../../src/tier/orphan-sweeper.ts';
import { type CopiedSegment, TierRecords, tieredEnd } from '../../src/tier/tier-record.ts';
import { retainedStart } from '../../src/tier/tier-retention.ts';
import { tierStartOf } from '../../src/tier/tier-start.ts';
import { Tierer } from '../../src/tier/tierer.ts';
import { ManualClock } from '../../src/util/clock.ts';
import { SeededRandom } from '../../src/util/random.ts';
import { idOf } from '../support/topic-ids.ts';
import { tempDir } from '../support/temp-dir.ts';

const TOPIC_ID = idOf('t');
const HOUR_MS = 60 * 60_000;

function copied(baseOffset: number, endOffset: number, logBytes: number, maxTimestamp: number): CopiedSegment {
  return {
    state: 'copied',
    baseOffset,
    endOffset,
    uploadId: `u${baseOffset}`,
    leaderEpoch: 1,
    bytes: logBytes + 200,
    maxTimestamp,
    epochs: [],
    sections: { log: { position: 52, length: logBytes, checksum: '0' } },
  };
}

const RECORD = { leaderEpoch: 1, startOffset: 0, segments: [copied(0, 10, 1000, 1 * HOUR_MS), copied(10, 20, 1000, 2 * HOUR_MS), copied(20, 30, 1000, 3 * HOUR_MS)] };

test('retention.ms moves the start past the tiered segments whose newest record is older', () => {
  expect(retainedStart(RECORD, { retentionMs: HOUR_MS, retentionBytes: -1 }, 0, 3.5 * HOUR_MS)).toBe(20);
  expect(retainedStart(RECORD, { retentionMs: -1, retentionBytes: -1 }, 0, 100 * HOUR_MS)).toBeNull();
  expect(retainedStart(RECORD, { retentionMs: 10 * HOUR_MS, retentionBytes: -1 }, 0, 3.5 * HOUR_MS)).toBeNull();
});

test('retention.bytes counts the whole log: the tier and the local bytes above it', () => {
  expect(retainedStart(RECORD, { retentionMs: -1, retentionBytes: 2000 }, 0, 0)).toBe(10); // 3000 bytes tiered: one segment goes
  expect(retainedStart(RECORD, { retentionMs: -1, retentionBytes: 2000 }, 1000, 0)).toBe(20); // 1000 more locally: two go
  expect(retainedStart(RECORD, { retentionMs: -1, retentionBytes: 10_000 }, 1000, 0)).toBeNull();
});

/** A log of three rolled segments and an active one, 1-record batches with timestamps from T0. */
function rolledLog(t0: number): PartitionLog {
  const log = PartitionLog.open(tempDir(), { config: { retentionMs: HOUR_MS } });
  for (let i = 0; i < 16; i++) {
    if (i > 0 && i % 5 === 0) log.roll();
    log.append(buildRecordBatch([{ value: `v${i}`, timestamp: t0 + i }], { nowMs: t0 + i }), 1);
  }
  return log;
}

test('the tierer expires tiered segments past retention, and sweeps their objects once they have been orphans for the delay', async () => {
  const clock = new ManualClock(1_700_000_000_000);
  const log = rolledLog(clock.nowMs());
  const store = new MemoryStore();
  const records = new TierRecords(new ControlStore(new MemoryStore(), 'cluster'));
  const source = { topic: 't', topicId: TOPIC_ID, partition: 0, leaderEpoch: 1, log, highWatermark: log.logEndOffset };
  const tierer = new Tierer({ store, prefix: '', records, clock, random: new SeededRandom(3), partitions: () => [source], sweepIntervalMs: 0, orphanDelayMs: 60_000, tailMaxMs: 24 * HOUR_MS }); // the active segment's tail is not this test's
  while ((await tierer.tierDue()) > 0);
  expect(tieredEnd(await records.read(TOPIC_ID, 0))).toBe(15);
  const objects = async () => (await store.list('tier/')).objects.length;
  expect(await objects()).toBe(3);
  clock.advance(2 * HOUR_MS); // every tiered segment's records are older than retention.ms now
  await tierer.tierDue();
  const record = await records.read(TOPIC_ID, 0);
  // All but the last: it holds the producer state at the tier's end, which a rebuild starts from [T7].
  expect([record.startOffset, record.segments.length]).toEqual([10, 1]);
  expect(await objects()).toBe(3); // orphans now, first seen: kept for the delay
  clock.advance(59_000);
  await tierer.tierDue();
  expect(await objects()).toBe(3);
  clock.advance(1_000);
  await tierer.tierDue();
  expect(await objects()).toBe(1);
  expect((await tierStartOf(records, store, '', TOPIC_ID, 0))?.producers).not.toBeNull();
  await log.close();
});

test("the sweeper deletes a dead upload's object after the delay and never one an entry names", async () => {
  const clock = new ManualClock();
  const store = new MemoryStore();
  const records = new TierRecords(new ControlStore(new MemoryStore(), 'cluster'));
  await records.take(TOPIC_ID, 0, 1);
  const [liveId, deadId] = [idOf('live upload'), idOf('dead upload')];
  await records.announce(TOPIC_ID, 0, 1, { baseOffset: 0, endOffset: 10, uploadId: liveId });
  const live = tieredSegmentKey('', TOPIC_ID, 0, 0, 10, liveId);
  const dead = tieredSegmentKey('', TOPIC_ID, 0, 0, 10, deadId); // a deposed leader's upload, its entry dropped
  await store.put(live, new Uint8Array([1]));
  await store.put(dead, new Uint8Array([2]));
  const sweeper = new OrphanSweeper({ store, prefix: '', clock, delayMs: 1000 });
  expect(await sweeper.sweep(records, TOPIC_ID, 0)).toBe(0);
  clock.advance(1000);
  expect(await sweeper.sweep(records, TOPIC_ID, 0)).toBe(1);
  expect((await store.list('tier/')).objects.map((o) => o.key)).toEqual([live]);
  clock.advance(10_000);
  expect(await sweeper.sweep(records, TOPIC_ID, 0)).toBe(0);
  expect(sweeper.remembered).toBe(0);
});
