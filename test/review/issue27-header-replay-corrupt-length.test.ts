// Review of issue 27's header-only producer-state replay (log-read.ts readBatchHeaders). The replay
// at open walks the bytes no recovery scan looked at: after a clean shutdown the active segment is
// restored from its marker, not scanned, and the replay runs over it from its roll snapshot when the
// snapshot the close writes was lost (snapshotProducers swallows a failed write: "only a shortcut is
// lost"). Before (98f6344) the replay read whole batches, and a batch whose length no longer framed
// it (a damaged sector) stopped the open with an error. The header walk trusts batchLength: a length
// running past the segment's end skips the rest of the segment without a word, so the log opens with
// a producer state that lacks every producer of the skipped batches, and a retry of one of them is
// appended a second time (exactly once lost), at a new offset.
import { expect, test } from 'bun:test';
import { readdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildRecordBatch } from '../../src/format/batch-builder.ts';
import { PartitionLog } from '../../src/log/partition-log.ts';
import { ManualClock } from '../../src/util/clock.ts';
import { tempDir } from '../support/temp-dir.ts';

const SEGMENT_BYTES = 4096;
const VALUE_BYTES = 300;
/** Producer A's batches: enough to roll a few segments, so the active one starts above 0. */
const A_BATCHES = 20;
const PRODUCER_A = 7;
const PRODUCER_B = 8;
/** batchLength's place in a batch: after the 8-byte baseOffset. */
const BATCH_LENGTH_POSITION = 8;

function batchOf(producerId: number, sequence: number, nowMs: number): Uint8Array {
  return buildRecordBatch([{ value: `${producerId}-${sequence}`.padEnd(VALUE_BYTES, '.') }], { nowMs, producerId, producerEpoch: 0, baseSequence: sequence });
}

test('a batch length damaged in a segment the open does not scan fails the open, rather than dropping producers from its state', async () => {
  const clock = new ManualClock();
  const directory = tempDir();
  const log = PartitionLog.open(directory, { clock, config: { segmentBytes: SEGMENT_BYTES } });
  for (let sequence = 0; sequence < A_BATCHES; sequence++) log.append(batchOf(PRODUCER_A, sequence, clock.nowMs()), 0);
  const activeBase = log.segmentBaseOffsets.at(-1)!;
  expect(activeBase).toBeGreaterThan(0);
  const damaged = log.read(activeBase, 1).batches[0]!; // the active segment's first batch (producer A's)
  const retried = batchOf(PRODUCER_B, 0, clock.nowMs());
  const original = log.append(retried.slice(), 0); // producer B's first batch, after the damaged one
  const logEnd = log.logEndOffset;
  await log.close();

  // The snapshot the close wrote was lost (its write failed), so the next open replays the active segment from its roll snapshot.
  unlinkSync(join(directory, `${String(logEnd).padStart(20, '0')}.snapshot`));
  expect(readdirSync(directory)).toContain(`${String(activeBase).padStart(20, '0')}.snapshot`);
  // A damaged sector: the first batch's length now runs past the end of the segment (the file's size is unchanged).
  const segmentPath = join(directory, `${String(activeBase).padStart(20, '0')}.log`);
  const bytes = readFileSync(segmentPath);
  new DataView(bytes.buffer, bytes.byteOffset).setInt32(BATCH_LENGTH_POSITION, damaged.batchLength + SEGMENT_BYTES);
  writeFileSync(segmentPath, bytes);

  let reopened: PartitionLog | null = null;
  let openFailure: unknown = null;
  try {
    reopened = PartitionLog.open(directory, { clock, config: { segmentBytes: SEGMENT_BYTES } });
  } catch (error) {
    openFailure = error; // 98f6344: "no whole batch at position 0 of segment ..."
  }
  if (reopened !== null) {
    // Opened: then its producer state must still know producer B, so B's retry is the duplicate it is.
    const retry = reopened.append(retried.slice(), 0);
    await reopened.close();
    expect({ duplicate: retry.duplicate, baseOffset: retry.baseOffset }).toEqual({ duplicate: true, baseOffset: original.baseOffset });
  }
  expect(openFailure).not.toBeNull();
});
