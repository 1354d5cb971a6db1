// A partition log under its topic's settings, changed while it runs (PartitionLog.reconfigure), and
// message.timestamp.type=LogAppendTime: the leader stamps the batch and recomputes its CRC.
import { expect, test } from 'bun:test';
import { buildRecordBatch, splitBatches } from '../../src/format/index.ts';
import { PartitionLog } from '../../src/log/partition-log.ts';
import { ManualClock } from '../../src/util/clock.ts';
import { batchOf } from '../support/batches.ts';
import { tempDir } from '../support/temp-dir.ts';

const T0 = 1_700_000_000_000;
const PRODUCER_TIME = T0 - 3_600_000;
const NO_LIMIT = 2 ** 31 - 1;

for (const compression of ['none', 'gzip'] as const) {
  test(`LogAppendTime (${compression}): the batch carries the append time and the timestamp-type bit, its CRC verifies, its records read back with the append time`, async () => {
    const clock = new ManualClock(T0);
    const log = PartitionLog.open(tempDir(), { clock, config: { messageTimestampType: 'LogAppendTime' } });
    const batch = buildRecordBatch(
      [
        { value: 'a', timestamp: PRODUCER_TIME },
        { value: 'b', timestamp: PRODUCER_TIME + 1 },
      ],
      { nowMs: PRODUCER_TIME, compression },
    );
    const sent = batch.slice();
    const result = log.append(batch, 0);
    expect(result.logAppendTimeMs).toBe(T0);
    const [stored] = log.read(0, 1 << 20).batches;
    // Read back through the validating parser: a stale CRC would throw here.
    const [parsed] = splitBatches(stored!.bytes.slice(), NO_LIMIT);
    expect(parsed!.isCrcValid()).toBe(true);
    expect(parsed!.timestampType).toBe('LogAppendTime');
    expect(parsed!.maxTimestamp).toBe(T0);
    expect(parsed!.compression).toBe(compression);
    expect([...parsed!.records()].map((record) => record.timestamp)).toEqual([T0, T0]);
    // Only the header changed: the records section is the producer's bytes (no recompression).
    expect(stored!.bytes.subarray(61)).toEqual(sent.subarray(61));
    await log.close();
  });
}

test("CreateTime keeps the producer's timestamps and reports no append time", async () => {
  const clock = new ManualClock(T0);
  const log = PartitionLog.open(tempDir(), { clock });
  expect(log.append(batchOf('a', 1, PRODUCER_TIME), 0).logAppendTimeMs).toBe(-1);
  const [stored] = log.read(0, 1 << 20).batches;
  expect(stored!.timestampType).toBe('CreateTime');
  expect(stored!.maxTimestamp).toBe(PRODUCER_TIME);
  await log.close();
});

test('reconfigure: a lowered max.message.bytes rejects larger appends at once, while the larger batches already in the log stay readable, replicable and recoverable', async () => {
  const directory = tempDir();
  const log = PartitionLog.open(directory, { config: { flush: { kind: 'none' } } });
  const big = batchOf('big', 1, T0, 3000);
  log.append(big, 0);
  log.reconfigure({ maxBatchBytes: 1000 });
  expect(log.config.maxBatchBytes).toBe(1000);
  expect(() => log.append(batchOf('big2', 1, T0, 3000), 0)).toThrow(expect.objectContaining({ kind: 'RecordTooLarge' }));
  log.append(batchOf('small', 1, T0), 0);
  const replica = PartitionLog.open(tempDir(), { config: { maxBatchBytes: 1000 } });
  const copied = log.read(0, 1 << 20).batches;
  replica.appendReplica(copied[0]!.bytes.slice()); // a follower takes what its leader took
  expect(replica.logEndOffset).toBe(1);
  await replica.close();
  await log.close();
  const reopened = PartitionLog.open(directory, { config: { maxBatchBytes: 1000 } });
  expect(reopened.logEndOffset).toBe(2);
  expect(reopened.recovery.truncatedBytes).toBe(0);
  await reopened.close();
});

test('reconfigure: a smaller segment.bytes rolls at the next append, a smaller retention.ms deletes at the next pass', async () => {
  const clock = new ManualClock(T0);
  const log = PartitionLog.open(tempDir(), { clock });
  for (let i = 0; i < 4; i++) log.append(batchOf(`a${i}`, 1, T0, 500), 0);
  expect(log.segmentBaseOffsets).toEqual([0]);
  log.reconfigure({ segmentBytes: 1024 });
  for (let i = 0; i < 4; i++) log.append(batchOf(`b${i}`, 1, T0, 500), 0);
  expect(log.segmentBaseOffsets.length).toBeGreaterThan(2);
  clock.advance(60_000);
  expect(log.enforceRetention()).toBe(0); // a week by default
  log.reconfigure({ segmentBytes: 1024, retentionMs: 30_000 });
  expect(log.enforceRetention()).toBeGreaterThan(0);
  expect(log.logStartOffset).toBeGreaterThan(0);
  expect(() => log.reconfigure({ segmentBytes: 10 })).toThrow(/segmentBytes/);
  await log.close();
});

test('LogAppendTime: a retried idempotent batch answers the time its original was stamped with', async () => {
  const clock = new ManualClock(T0);
  const log = PartitionLog.open(tempDir(), { clock, config: { messageTimestampType: 'LogAppendTime' } });
  const build = () => buildRecordBatch([{ value: 'a' }], { nowMs: PRODUCER_TIME, producerId: 7, producerEpoch: 0, baseSequence: 0 });
  expect(log.append(build(), 0).logAppendTimeMs).toBe(T0);
  clock.advance(1000);
  const retry = log.append(build(), 0);
  expect({ duplicate: retry.duplicate, logAppendTimeMs: retry.logAppendTimeMs }).toEqual({ duplicate: true, logAppendTimeMs: T0 });
  await log.close();
});

test('reconfigure: segment.ms rolls a segment whose first batch is older than it; retention.bytes deletes down to it', async () => {
  const clock = new ManualClock(T0);
  const log = PartitionLog.open(tempDir(), { clock });
  log.append(batchOf('a', 1, T0, 500), 0);
  log.append(batchOf('b', 1, T0 + 2000, 500), 0);
  expect(log.segmentBaseOffsets).toEqual([0]); // a week by default
  log.reconfigure({ segmentMs: 1000 });
  log.append(batchOf('c', 1, T0 + 4000, 500), 0);
  expect(log.segmentBaseOffsets).toEqual([0, 2]);
  log.append(batchOf('d', 1, T0 + 6000, 500), 0);
  expect(log.segmentBaseOffsets).toEqual([0, 2, 3]);
  expect(log.enforceRetention()).toBe(0);
  log.reconfigure({ segmentMs: 1000, retentionBytes: 1100 }); // segments of ~1160, ~580 and ~580 bytes
  expect(log.enforceRetention()).toBe(1); // the two-batch segment goes: the rest fits in 1100 bytes
  expect(log.logStartOffset).toBe(2);
  await log.close();
});
