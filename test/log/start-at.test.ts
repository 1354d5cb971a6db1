// A log that starts over at an offset whose history lives in the tier (docs/tier-protocol.md
// [K2]): Kafka's truncateFullyAndStartAt, carrying the leader epochs and the producer state of
// the copy it continues, so that a leader rebuilt from the tail still knows an idempotent
// producer's retry for a duplicate and answers OffsetForLeaderEpoch as the old log did.
import { expect, test } from 'bun:test';
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { isFerryError } from '../../src/errors.ts';
import { buildRecordBatch } from '../../src/format/batch-builder.ts';
import { PartitionLog } from '../../src/log/partition-log.ts';
import { snapshotFileName } from '../../src/log/producer-state.ts';
import { tempDir } from '../support/temp-dir.ts';

const T0 = 1_700_000_000_000;

function kindOf(action: () => unknown): string | null {
  try {
    action();
    return null;
  } catch (error) {
    return isFerryError(error) ? error.kind : String(error);
  }
}

function idempotent(sequence: number, count = 2): Uint8Array {
  const records = Array.from({ length: count }, (_, i) => ({ value: `p-${sequence + i}`, timestamp: T0 }));
  return buildRecordBatch(records, { nowMs: T0, producerId: 7, producerEpoch: 0, baseSequence: sequence });
}

/** A log of ten 2-record batches of producer 7 written in epochs 3 (offsets 0-9) and 5 (10-19), rolled at 10. */
function sourceLog(): PartitionLog {
  const log = PartitionLog.open(tempDir());
  for (let i = 0; i < 5; i++) log.append(idempotent(i * 2), 3);
  log.roll();
  for (let i = 5; i < 10; i++) log.append(idempotent(i * 2), 5);
  return log;
}

test('a log started at an offset continues the copy whose epochs and producer state it was given', async () => {
  const source = sourceLog();
  const directory = tempDir();
  const log = PartitionLog.open(directory);
  log.append(idempotent(0, 5), 1); // a stale local log that is thrown away
  log.startAt(20, source.leaderEpochs, source.producerSnapshotAt(20));
  expect([log.logStartOffset, log.logEndOffset]).toEqual([20, 20]);
  expect(log.leaderEpochs).toEqual([
    { epoch: 3, startOffset: 0 },
    { epoch: 5, startOffset: 10 },
  ]);
  expect(kindOf(() => log.read(10, 1000))).toBe('OffsetOutOfRange');
  // the producer's retry of its last batch is a duplicate, answered with the original's offsets
  const retry = log.append(idempotent(18), 5);
  expect([retry.duplicate, retry.baseOffset]).toEqual([true, 18]);
  const next = log.append(idempotent(20), 5);
  expect([next.duplicate, next.baseOffset]).toEqual([false, 20]);
  await log.close();
  const reopened = PartitionLog.open(directory);
  expect([reopened.logStartOffset, reopened.logEndOffset]).toEqual([20, 22]);
  expect(reopened.leaderEpochs).toEqual([
    { epoch: 3, startOffset: 0 },
    { epoch: 5, startOffset: 10 },
  ]);
  expect(reopened.append(idempotent(20), 5).duplicate).toBe(true);
  await reopened.close();
  await source.close();
});

test('a log started at its own base offset is emptied, and one started without producer state knows no producer', async () => {
  const log = PartitionLog.open(tempDir());
  for (let i = 0; i < 3; i++) log.append(idempotent(i * 2), 1);
  log.startAt(0, [], null);
  expect([log.logStartOffset, log.logEndOffset, log.leaderEpochs.length]).toEqual([0, 0, 0]);
  expect(log.append(idempotent(4), 2).duplicate).toBe(false); // sequence 4 is new to an empty state
  await log.close();
});

test("the producer state at a past offset is the roll's snapshot, or the same state replayed when that file is gone", async () => {
  const source = sourceLog();
  const atRoll = source.producerSnapshotAt(10);
  rmSync(join(source.directory, snapshotFileName(10)));
  expect(source.producerSnapshotAt(10)).toEqual(atRoll);
  // a log started from the state at 10 takes the retry of the batch at 8 as a duplicate, and the one at 10 as new
  const log = PartitionLog.open(tempDir());
  log.startAt(
    10,
    source.leaderEpochs.filter((entry) => entry.startOffset < 10),
    source.producerSnapshotAt(10),
  );
  expect(log.append(idempotent(8), 3).duplicate).toBe(true);
  expect(log.append(idempotent(10), 5).baseOffset).toBe(10);
  await log.close();
  await source.close();
});

test('producer state from a snapshot of another offset is refused before anything changes', async () => {
  const source = sourceLog();
  const log = PartitionLog.open(tempDir());
  log.append(idempotent(0), 1);
  expect(() => log.startAt(20, [], source.producerSnapshotAt(10))).toThrow(/snapshot for offset 20 is of offset 10/);
  expect([log.logStartOffset, log.logEndOffset]).toEqual([0, 2]);
  expect(log.read(0, 1000).batches.length).toBe(1);
  await source.close();
  await log.close();
});

test('the producer state replayed to an offset inside a segment is kept there, so the next one replays only from it', async () => {
  const source = sourceLog();
  const at14 = source.producerSnapshotAt(14);
  expect(existsSync(join(source.directory, snapshotFileName(14)))).toBe(true);
  expect(source.producerSnapshotAt(14)).toEqual(at14); // read back from the kept file
  // a restart recovers from the kept snapshot and still knows the producer's last batches
  await source.close();
  const reopened = PartitionLog.open(source.directory);
  expect(reopened.append(idempotent(18), 5).duplicate).toBe(true);
  expect(reopened.append(idempotent(20), 5).baseOffset).toBe(20);
  await reopened.close();
});
