// Issue 9 finding 16, review: after a failed fdatasync the log writes the unsynced bytes again
// and syncs them, reading them back from the page cache. But a failed writeback may leave those
// pages clean and the kernel may evict them ("fsyncgate"): read back, they are what the disk held
// before, here zeros. Rewritten and synced as they were, the log then acknowledged a later batch
// and a retry of the lost one (a duplicate, by the producer state) while the disk held zeros
// where the lost batch should be: the next recovery cut the log there, taking both acknowledged
// batches with it. Bytes read back must be checked before they are made durable again.
import { afterEach, expect, test } from 'bun:test';
import { closeSync, openSync, statSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { buildRecordBatch } from '../../src/format/batch-builder.ts';
import { PartitionLog } from '../../src/log/partition-log.ts';
import { failNext, healDisk } from '../support/failing-fs.ts';
import { tempDir } from '../support/temp-dir.ts';

const T0 = 1_700_000_000_000;
const ACTIVE = '00000000000000000000.log';

afterEach(healDisk);

function idempotent(sequence: number): Uint8Array {
  return buildRecordBatch([{ value: `s${sequence}`, timestamp: T0 }], { nowMs: T0, producerId: 8, producerEpoch: 0, baseSequence: sequence });
}

/** Appends and waits for the flush (the acknowledgement without a WAL): the offset, or null when it failed. */
async function acknowledged(log: PartitionLog, batch: Uint8Array): Promise<number | null> {
  try {
    const { baseOffset, lastOffset } = log.append(batch, 0);
    await log.waitForFlush(lastOffset);
    return baseOffset;
  } catch {
    return null;
  }
}

/** What eviction of never-written-back pages leaves: the file's bytes from `position` on read as the disk's (zeros). */
function dropPages(path: string, position: number, length: number): void {
  const fd = openSync(path, 'r+');
  try {
    writeSync(fd, new Uint8Array(length), 0, length, position);
  } finally {
    closeSync(fd);
  }
}

test('bytes read back after a failed fdatasync are checked: nothing acknowledged rests on pages the kernel dropped', async () => {
  const directory = tempDir();
  const path = join(directory, ACTIVE);
  let log = PartitionLog.open(directory, { config: { flush: { kind: 'per-append' } } });
  const acked = new Map<number, string>(); // offset -> value acknowledged there
  expect(await acknowledged(log, idempotent(0))).toBe(0);
  acked.set(0, 's0');
  const before = statSync(path).size;
  failNext('fdatasyncSync');
  expect(await acknowledged(log, idempotent(1))).toBeNull();
  dropPages(path, before, statSync(path).size - before);
  for (const sequence of [2, 1]) {
    // the next batch, then the retry of the failed one
    const offset = await acknowledged(log, idempotent(sequence));
    if (offset !== null) acked.set(offset, `s${sequence}`);
  }
  await log.close();
  log = PartitionLog.open(directory, { config: { flush: { kind: 'per-append' } } });
  const heldAt = (offset: number): string | undefined => {
    try {
      const batch = log.read(offset, 1).batches[0];
      const record = batch === undefined ? undefined : [...batch.records()].find((r) => r.offset === offset);
      return record === undefined ? undefined : new TextDecoder().decode(record.value!);
    } catch {
      return undefined; // unreadable: what the log claims to hold here is not there
    }
  };
  for (const [offset, value] of acked) expect({ offset, value: heldAt(offset) }).toEqual({ offset, value });
  // ...and the producer goes on: the lost sequence 1 is not in its state, so it can land.
  if (!acked.has(1)) expect(log.append(idempotent(1), 0)).toMatchObject({ baseOffset: 1, duplicate: false });
  await log.close();
});
