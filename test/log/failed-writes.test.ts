// Issue 9, finding 16: a full disk must not wedge a log. A failed write leaves the log as it was
// before it; a failed fdatasync fails its waiters and the next write writes the unsynced bytes
// again before taking new ones; once the disk has room the log takes writes again, by itself.
import { afterEach, describe, expect, test } from 'bun:test';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { isFerryError } from '../../src/errors.ts';
import { buildRecordBatch } from '../../src/format/batch-builder.ts';
import { PartitionLog } from '../../src/log/partition-log.ts';
import { StorageHealth, type StorageObserver } from '../../src/log/storage-health.ts';
import { MetricsRegistry } from '../../src/metrics/index.ts';
import { failNext, healDisk, recordCalls, takeCalls } from '../support/failing-fs.ts';
import { batchOf } from '../support/batches.ts';
import { tempDir } from '../support/temp-dir.ts';

const T0 = 1_700_000_000_000;
const ACTIVE = '00000000000000000000.log';

afterEach(healDisk);

function idempotent(sequence: number): Uint8Array {
  return buildRecordBatch([{ value: `s${sequence}`, timestamp: T0 }], { nowMs: T0, producerId: 3, producerEpoch: 0, baseSequence: sequence });
}

function storageErrorOf(action: () => unknown): boolean {
  try {
    action();
    return false;
  } catch (error) {
    return isFerryError(error, 'Storage');
  }
}

class Spells implements StorageObserver {
  failed = 0;
  succeeded = 0;
  writeFailed(): void {
    this.failed++;
  }
  writeSucceeded(): void {
    this.succeeded++;
  }
}

describe('a failed segment write', () => {
  test('leaves the log, its file and its producer state as before; the next write succeeds', async () => {
    const directory = tempDir();
    const spells = new Spells();
    const log = PartitionLog.open(directory, { config: { flush: { kind: 'per-append' } }, storage: spells });
    log.append(idempotent(0), 0);
    const sizeBefore = statSync(join(directory, ACTIVE)).size;
    failNext('writevSync');
    expect(storageErrorOf(() => log.append(idempotent(1), 0))).toBe(true);
    expect(spells.failed).toBe(1);
    expect(log.logEndOffset).toBe(1);
    expect(statSync(join(directory, ACTIVE)).size).toBe(sizeBefore);
    expect(log.producerBatches(3).map((batch) => batch.firstSequence)).toEqual([0]);
    // The retry is new to the log (nothing of it was kept) and lands where the failed one would have.
    expect(log.append(idempotent(1), 0)).toMatchObject({ baseOffset: 1, duplicate: false });
    expect(spells.succeeded).toBeGreaterThan(0);
    await log.close();
    const reopened = PartitionLog.open(directory);
    expect(reopened.logEndOffset).toBe(2);
    await reopened.close();
  });

  test('a roll whose index write fails is a Storage error and is done by a later append', async () => {
    const log = PartitionLog.open(tempDir(), { config: { segmentBytes: 1024 } });
    while (log.sizeBytes < 900) log.append(batchOf('fill', 1, T0, 100), 0);
    failNext('writeSync'); // the sealed segment's index file
    expect(storageErrorOf(() => log.append(batchOf('rolls', 1, T0, 200), 0))).toBe(true);
    expect(log.segmentBaseOffsets).toHaveLength(1);
    const end = log.logEndOffset;
    expect(log.append(batchOf('rolls', 1, T0, 200), 0).baseOffset).toBe(end);
    expect(log.segmentBaseOffsets).toEqual([0, end]);
    await log.close();
  });
});

describe('a failed fdatasync', () => {
  test('per append: the request fails, its retry is a duplicate once the bytes were written again and synced', async () => {
    const directory = tempDir();
    const log = PartitionLog.open(directory, { config: { flush: { kind: 'per-append' } } });
    log.append(idempotent(0), 0);
    const unsyncedAt = statSync(join(directory, ACTIVE)).size;
    failNext('fdatasyncSync');
    expect(storageErrorOf(() => log.append(idempotent(1), 0))).toBe(true);
    recordCalls();
    expect(log.append(idempotent(1), 0)).toMatchObject({ baseOffset: 1, duplicate: true });
    const calls = takeCalls();
    // Recovery wrote the unsynced batch again at its place, then synced, before answering.
    expect(calls.filter((c) => c.call === 'writevSync').map((c) => c.position)).toEqual([unsyncedAt]);
    expect(calls.at(-1)!.call).toBe('fdatasyncSync');
    await log.waitForFlush(1);
    expect(log.append(idempotent(2), 0)).toMatchObject({ baseOffset: 2, duplicate: false });
    await log.close();
  });

  test('group commit: the waiters fail, and the log takes writes again at the next append', async () => {
    const log = PartitionLog.open(tempDir(), { config: { flush: { kind: 'group', bytes: 0, ms: 0 } } });
    const first = log.append(batchOf('a'), 0);
    failNext('fdatasync');
    const waited = await log.waitForFlush(first.lastOffset).then(
      () => 'flushed',
      (error: unknown) => (isFerryError(error, 'Storage') ? 'storage error' : String(error)),
    );
    expect(waited).toBe('storage error');
    recordCalls();
    const second = log.append(batchOf('b'), 0);
    expect(
      takeCalls()
        .filter((c) => c.call === 'writevSync')
        .map((c) => c.position),
    ).toEqual([0, first.sizeBytes]); // the unsynced batch again, then the new one
    await log.waitForFlush(second.lastOffset);
    expect(log.flushedOffset).toBe(2);
    await log.close();
  });
});

test('storage health: every failure counted, one line when a spell starts and one when it ends', async () => {
  const metrics = new MetricsRegistry();
  const lines: string[] = [];
  const health = new StorageHealth(metrics, (line) => lines.push(line));
  const log = PartitionLog.open(tempDir(), { storage: health });
  log.append(batchOf('a'), 0);
  failNext('writevSync', 3);
  for (let attempt = 0; attempt < 3; attempt++) expect(storageErrorOf(() => log.append(batchOf('b'), 0))).toBe(true);
  expect(health.failing).toBe(true);
  expect(lines).toHaveLength(1);
  expect(lines[0]).toContain('ENOSPC');
  log.append(batchOf('b'), 0);
  expect(health.failing).toBe(false);
  expect(lines).toHaveLength(2);
  const text = metrics.renderPrometheus();
  expect(text).toContain('ferry_storage_write_failures_total 3');
  expect(text).toContain('ferry_storage_failing 0');
  await log.close();
});
