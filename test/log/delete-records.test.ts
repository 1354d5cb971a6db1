// PartitionLog.deleteRecordsBefore (DeleteRecords' local part): the log start rises durably (its
// checkpoint), never falls, and only whole sealed segments below it go; with a tier, only those
// below the tiered end too.
import { expect, test } from 'bun:test';
import { buildRecordBatch } from '../../src/format/batch-builder.ts';
import { LOG_START_CHECKPOINT_FILE } from '../../src/log/log-start-checkpoint.ts';
import { CLEAN_SHUTDOWN_FILE, PartitionLog } from '../../src/log/partition-log.ts';
import { existsSync, readdirSync, rmSync, truncateSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from '../support/temp-dir.ts';

const T0 = 1_700_000_000_000;

/** Four segments of five 1-record batches each: [0, 5), [5, 10), [10, 15), [15, 20). */
function fourSegments(directory = tempDir()): PartitionLog {
  const log = PartitionLog.open(directory);
  for (let i = 0; i < 20; i++) {
    if (i > 0 && i % 5 === 0) log.roll();
    log.append(buildRecordBatch([{ value: `v${i}`, timestamp: T0 }], { nowMs: T0 }), 1);
  }
  return log;
}

test('the segments wholly below the new start go; the one holding it stays', async () => {
  const log = fourSegments();
  expect(log.deleteRecordsBefore(12)).toBe(2);
  expect(log.segmentBaseOffsets).toEqual([10, 15]);
  expect(log.logStartOffset).toBe(10);
  expect(log.deletedBeforeOffset).toBe(12);
  expect(log.deleteRecordsBefore(3)).toBe(0); // never down
  expect(log.deletedBeforeOffset).toBe(12);
  await log.close();
});

test('the active segment stays even when every offset is deleted', async () => {
  const log = fourSegments();
  expect(log.deleteRecordsBefore(20)).toBe(3);
  expect(log.segmentBaseOffsets).toEqual([15]);
  expect(log.deletedBeforeOffset).toBe(20);
  await log.close();
});

test('with a tier, only segments wholly below the tiered end go', async () => {
  const log = fourSegments();
  expect(log.deleteRecordsBefore(17, 7)).toBe(1); // [5, 10) is not wholly tiered
  expect(log.segmentBaseOffsets).toEqual([5, 10, 15]);
  expect(log.deletedBeforeOffset).toBe(17);
  await log.close();
});

test('the new start is checkpointed at once (before any close) and read back at open', async () => {
  const directory = tempDir();
  const log = fourSegments(directory);
  log.deleteRecordsBefore(8);
  expect(existsSync(join(directory, LOG_START_CHECKPOINT_FILE))).toBe(true); // before any close
  await log.close();
  const reopened = PartitionLog.open(directory);
  expect(reopened.deletedBeforeOffset).toBe(8);
  expect(reopened.logStartOffset).toBe(5);
  await reopened.close();
});

test('the producer state keeps the producers of deleted records (their retries stay duplicates)', async () => {
  const log = PartitionLog.open(tempDir());
  log.append(buildRecordBatch([{ value: 'a' }], { nowMs: T0, producerId: 9, producerEpoch: 0, baseSequence: 0 }), 1);
  log.roll();
  log.append(buildRecordBatch([{ value: 'b' }], { nowMs: T0 }), 1);
  log.deleteRecordsBefore(1);
  expect(log.segmentBaseOffsets).toEqual([1]);
  expect(log.activeProducers()).toEqual([{ producerId: 9, producerEpoch: 0, lastSequence: 0, lastTimestamp: T0 }]);
  const retry = log.append(buildRecordBatch([{ value: 'a' }], { nowMs: T0, producerId: 9, producerEpoch: 0, baseSequence: 0 }), 1);
  expect(retry.duplicate).toBe(true);
  await log.close();
});

test('a crash that took the log below the checkpointed start reopens it there (as Kafka: truncated fully, started at the log start)', async () => {
  const directory = tempDir();
  const log = PartitionLog.open(directory);
  for (let i = 0; i < 5; i++) log.append(buildRecordBatch([{ value: `v${i}` }], { nowMs: T0 }), 1);
  log.deleteRecordsBefore(3);
  await log.close();
  // What an unsynced segment looks like after the power cut: empty, and no clean-shutdown marker.
  for (const name of readdirSync(directory)) if (name.endsWith('.log')) truncateSync(join(directory, name), 0);
  rmSync(join(directory, CLEAN_SHUTDOWN_FILE), { force: true });
  const reopened = PartitionLog.open(directory);
  expect(reopened.logStartOffset).toBe(3);
  expect(reopened.logEndOffset).toBe(3);
  expect(reopened.append(buildRecordBatch([{ value: 'next' }], { nowMs: T0 }), 1).baseOffset).toBe(3);
  await reopened.close();
});
