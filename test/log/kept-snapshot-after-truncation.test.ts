// Review (issue 11, [T2]): a producer state snapshotAt keeps as `<offset>.snapshot` must not
// outlive the log it describes. Held: a truncation below it deletes it (the producer state is
// rebuilt from the newest snapshot at or below the new end), so the state at that offset after
// other batches are appended there, and after a restart, is the new log's, not the old one's.
import { expect, test } from 'bun:test';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { buildRecordBatch } from '../../src/format/batch-builder.ts';
import { PartitionLog } from '../../src/log/partition-log.ts';
import { snapshotFileName } from '../../src/log/producer-state.ts';
import { tempDir } from '../support/temp-dir.ts';

const T0 = 1_700_000_000_000;

function idempotent(producerId: number, sequence: number): Uint8Array {
  return buildRecordBatch([{ value: `p${producerId}-${sequence}`, timestamp: T0 + sequence }], { nowMs: T0, producerId, producerEpoch: 0, baseSequence: sequence });
}

test("a kept snapshot above a truncation is gone: the state there is the new batches', now and after a restart", async () => {
  const directory = tempDir();
  const log = PartitionLog.open(directory);
  for (let i = 0; i < 10; i++) log.append(idempotent(1, i), 1);
  const old = log.producerSnapshotAt(8);
  expect(existsSync(join(directory, snapshotFileName(8)))).toBe(true);
  log.truncateTo(5); // a follower diverged: [5, 10) goes
  expect(existsSync(join(directory, snapshotFileName(8)))).toBe(false);
  for (let i = 0; i < 6; i++) log.append(idempotent(2, i), 1); // [5, 11): another producer's batches
  const now = log.producerSnapshotAt(8);
  expect([...now]).not.toEqual([...old]);
  // [K2] A leader started at 8 with it knows producer 2's batches, not producer 1's truncated ones.
  const started = PartitionLog.open(tempDir());
  started.startAt(8, log.leaderEpochs, now);
  expect(started.append(idempotent(2, 2), 1).duplicate).toBe(true);
  await log.close();
  const reopened = PartitionLog.open(directory);
  expect(reopened.append(idempotent(2, 5), 1).duplicate).toBe(true);
  expect(reopened.append(idempotent(1, 5), 1).duplicate).toBe(false); // truncated away: not a duplicate
  await Promise.all([reopened.close(), started.close()]);
});
