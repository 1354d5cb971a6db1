// Idempotent producers' state lives in the partition log (docs/design.md contract 11): checked in the
// append, rebuilt from the log after a crash or a truncation, snapshotted at roll and close,
// expired by the log's own time.
import { describe, expect, test } from 'bun:test';
import { copyFileSync, existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { isFerryError } from '../../src/errors.ts';
import { buildRecordBatch } from '../../src/format/batch-builder.ts';
import { LOCK_FILE } from '../../src/util/dir-lock.ts';
import { CLEAN_SHUTDOWN_FILE, PartitionLog } from '../../src/log/partition-log.ts';
import { PRODUCER_ID_EXPIRATION_MS, snapshotFileName } from '../../src/log/producer-state.ts';
import { tempDir } from '../support/temp-dir.ts';

const T0 = 1_700_000_000_000;

/** A batch of `count` records of producer `id` in `epoch`, starting at `sequence`. */
function idempotent(id: number, epoch: number, sequence: number, count = 1, timestampMs = T0): Uint8Array {
  const records = Array.from({ length: count }, (_, i) => ({ value: `${id}-${epoch}-${sequence + i}`, timestamp: timestampMs }));
  return buildRecordBatch(records, { nowMs: timestampMs, producerId: id, producerEpoch: epoch, baseSequence: sequence });
}

function plain(timestampMs: number): Uint8Array {
  return buildRecordBatch([{ value: 'plain', timestamp: timestampMs }], { nowMs: timestampMs });
}

function kindOf(action: () => unknown): string | null {
  try {
    action();
    return null;
  } catch (error) {
    return isFerryError(error) ? error.kind : String(error);
  }
}

/** The files a kill -9 leaves (everything but the lock), copied while the log is still open. */
function crashImage(source: string): string {
  const target = tempDir('ferry-crash-');
  for (const name of readdirSync(source)) if (name !== LOCK_FILE) copyFileSync(join(source, name), join(target, name));
  return target;
}

describe('checked in the append', () => {
  test('a retry of a batch the log holds is answered with the original offsets and writes nothing', async () => {
    const log = PartitionLog.open(tempDir());
    log.append(idempotent(7, 0, 0, 3), 0);
    log.append(idempotent(7, 0, 3, 2), 0);
    const retry = log.append(idempotent(7, 0, 0, 3), 0);
    expect(retry).toMatchObject({ baseOffset: 0, lastOffset: 2, duplicate: true, sizeBytes: 0 });
    expect(log.append(idempotent(7, 0, 3, 2), 0)).toMatchObject({ baseOffset: 3, lastOffset: 4, duplicate: true });
    expect(log.logEndOffset).toBe(5);
    expect(log.append(idempotent(7, 0, 5, 1), 0)).toMatchObject({ baseOffset: 5, duplicate: false });
    await log.close();
  });

  test('pipelined batches are checked against the ones appended before them, in order', async () => {
    const log = PartitionLog.open(tempDir());
    expect(log.append(idempotent(1, 0, 0, 5), 0).duplicate).toBe(false);
    expect(log.append(idempotent(1, 0, 5, 5), 0).duplicate).toBe(false); // the next batch, appended before the first is durable
    expect(log.append(idempotent(1, 0, 0, 5), 0)).toMatchObject({ baseOffset: 0, duplicate: true });
    expect(kindOf(() => log.append(idempotent(1, 0, 20, 1), 0))).toBe('OutOfOrderSequence');
    expect(kindOf(() => log.append(idempotent(1, 0, 11, 1), 0))).toBe('OutOfOrderSequence');
    await log.close();
  });

  test('an older epoch is refused, a newer one must start at sequence 0', async () => {
    const log = PartitionLog.open(tempDir());
    log.append(idempotent(3, 2, 0, 1), 0);
    expect(kindOf(() => log.append(idempotent(3, 1, 1, 1), 0))).toBe('InvalidProducerEpoch');
    expect(kindOf(() => log.append(idempotent(3, 3, 4, 1), 0))).toBe('OutOfOrderSequence');
    expect(log.append(idempotent(3, 3, 0, 1), 0).duplicate).toBe(false);
    expect(log.logEndOffset).toBe(2);
    await log.close();
  });

  test('only the last five batches answer retries, as in Kafka', async () => {
    const log = PartitionLog.open(tempDir());
    for (let sequence = 0; sequence < 6; sequence++) log.append(idempotent(9, 0, sequence, 1), 0);
    expect(log.producerBatches(9).map((b) => b.firstSequence)).toEqual([1, 2, 3, 4, 5]);
    expect(log.append(idempotent(9, 0, 1, 1), 0)).toMatchObject({ baseOffset: 1, duplicate: true });
    expect(kindOf(() => log.append(idempotent(9, 0, 0, 1), 0))).toBe('OutOfOrderSequence'); // too old to know
    await log.close();
  });

  test('an unknown producer is accepted at any sequence (Kafka 2.5+, KIP-360)', async () => {
    const log = PartitionLog.open(tempDir());
    expect(log.append(idempotent(4, 0, 42, 1), 0).duplicate).toBe(false);
    expect(kindOf(() => log.append(idempotent(4, 0, 44, 1), 0))).toBe('OutOfOrderSequence');
    await log.close();
  });

  test('a follower builds the same state from the batches it replicates', async () => {
    const leader = PartitionLog.open(tempDir());
    const follower = PartitionLog.open(tempDir());
    for (const records of [idempotent(5, 0, 0, 2), plain(T0), idempotent(5, 0, 2, 2)]) {
      const { batches } = leader.append(records, 0);
      follower.appendReplica(batches[0]!.bytes);
    }
    expect(follower.producerBatches(5)).toEqual(leader.producerBatches(5));
    expect(follower.append(idempotent(5, 0, 2, 2), 0)).toMatchObject({ baseOffset: 3, duplicate: true });
    await leader.close();
    await follower.close();
  });
});

describe('survives restarts', () => {
  test('rebuilt from the log after a crash: a retry of a batch written before it is a duplicate', async () => {
    const directory = tempDir();
    const log = PartitionLog.open(directory, { config: { flush: { kind: 'per-append' } } });
    log.append(idempotent(11, 0, 0, 4), 0);
    log.append(idempotent(11, 0, 4, 4), 0);
    // kill -9: no close, so no snapshot and no clean-shutdown marker.
    const image = crashImage(directory);
    await log.close();
    expect(readdirSync(image).some((name) => name.endsWith('.snapshot') || name === CLEAN_SHUTDOWN_FILE)).toBe(false);
    const reopened = PartitionLog.open(image);
    expect(reopened.append(idempotent(11, 0, 4, 4), 0)).toMatchObject({ baseOffset: 4, duplicate: true });
    expect(reopened.append(idempotent(11, 0, 8, 1), 0)).toMatchObject({ baseOffset: 8, duplicate: false });
    await reopened.close();
  });

  test('a clean close writes a snapshot at the log end, and a reopen loads it instead of replaying', async () => {
    const directory = tempDir();
    const log = PartitionLog.open(directory);
    log.append(idempotent(12, 0, 0, 3), 0);
    await log.close();
    expect(existsSync(join(directory, snapshotFileName(3)))).toBe(true);
    const reopened = PartitionLog.open(directory);
    expect(reopened.producerBatches(12)).toEqual([{ firstSequence: 0, lastSequence: 2, baseOffset: 0, lastOffset: 2, maxTimestamp: T0 }]);
    expect(reopened.append(idempotent(12, 0, 0, 3), 0).duplicate).toBe(true);
    await reopened.close();
  });

  test('a roll snapshots the state; a crash after it replays only the active segment on top', async () => {
    const directory = tempDir();
    const log = PartitionLog.open(directory, { config: { segmentBytes: 1024, flush: { kind: 'per-append' } } });
    let sequence = 0;
    while (log.segmentBaseOffsets.length < 3) {
      log.append(idempotent(13, 0, sequence, 10), 0);
      sequence += 10;
    }
    const rolledAt = log.segmentBaseOffsets.at(-1)!;
    expect(existsSync(join(directory, snapshotFileName(rolledAt)))).toBe(true);
    log.append(idempotent(13, 0, sequence, 10), 0);
    const before = log.producerBatches(13);
    const image = crashImage(directory);
    await log.close();
    const reopened = PartitionLog.open(image, { config: { segmentBytes: 1024 } });
    expect(reopened.producerBatches(13)).toEqual(before);
    expect(reopened.append(idempotent(13, 0, sequence, 10), 0)).toMatchObject({ duplicate: true, baseOffset: before.at(-1)!.baseOffset });
    await reopened.close();
  });

  test('a truncation forgets the truncated batches and deletes the snapshots above the new end', async () => {
    const directory = tempDir();
    const log = PartitionLog.open(directory, { config: { segmentBytes: 1024 } });
    let sequence = 0;
    while (log.segmentBaseOffsets.length < 3) {
      log.append(idempotent(14, 0, sequence, 10), 0);
      sequence += 10;
    }
    const [, cut, above] = log.segmentBaseOffsets as [number, number, number];
    expect(existsSync(join(directory, snapshotFileName(above)))).toBe(true);
    log.truncateTo(cut);
    expect(existsSync(join(directory, snapshotFileName(above)))).toBe(false);
    expect(existsSync(join(directory, snapshotFileName(cut)))).toBe(true);
    expect(log.producerBatches(14).at(-1)!.lastOffset).toBe(cut - 1);
    // The batch at `cut` is gone: its retry is new again (appended, at the same offset).
    expect(log.append(idempotent(14, 0, cut, 10), 0)).toMatchObject({ baseOffset: cut, duplicate: false });
    await log.close();
  });
});

describe('expiry by the log time (producer.id.expiration.ms)', () => {
  test('a producer silent for a day of log time is forgotten, the same way after a rebuild', async () => {
    const directory = tempDir();
    const log = PartitionLog.open(directory, { config: { retentionMs: -1 } });
    log.append(idempotent(21, 0, 0, 1, T0), 0);
    log.append(idempotent(22, 0, 0, 1, T0 + PRODUCER_ID_EXPIRATION_MS - 1), 0);
    expect(log.producerBatches(21)).toHaveLength(1); // the log's time is one ms short of a day later
    log.append(plain(T0 + PRODUCER_ID_EXPIRATION_MS), 0);
    expect(log.producerBatches(21)).toEqual([]);
    expect(log.producerBatches(22)).toHaveLength(1);
    // Unknown again: its next batch is accepted at any sequence instead of answered as a duplicate.
    expect(log.append(idempotent(21, 0, 0, 1, T0 + PRODUCER_ID_EXPIRATION_MS), 0).duplicate).toBe(false);
    const image = crashImage(directory);
    await log.close();
    const rebuilt = PartitionLog.open(image, { config: { retentionMs: -1 } });
    expect(rebuilt.producerBatches(21).map((b) => b.baseOffset)).toEqual([3]);
    expect(rebuilt.producerBatches(22)).toHaveLength(1);
    await rebuilt.close();
  });
});
