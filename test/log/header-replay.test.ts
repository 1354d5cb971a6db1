// Issue 27: the producer-state replay (recovery, and the state at each end the tierer copies) reads
// batch headers only (log-read.ts readBatchHeaders), not whole batches. The state it builds must be
// the one a replay of the whole batches builds: over segment rolls, between batches smaller than
// the header walk's window and batches larger than it, and from ends inside a segment.
import { expect, test } from 'bun:test';
import { buildRecordBatch } from '../../src/format/batch-builder.ts';
import { PartitionLog } from '../../src/log/partition-log.ts';
import { ProducerStateManager } from '../../src/log/producer-state.ts';
import { ManualClock } from '../../src/util/clock.ts';
import { SeededRandom } from '../../src/util/random.ts';
import { tempDir } from '../support/temp-dir.ts';

const SEGMENT_BYTES = 512 * 1024;
const BATCHES = 120;
const PRODUCERS = 5;
/** Record sizes either side of the header walk's 64 KiB window. */
const VALUE_BYTES = [100, 3_000, 70_000, 150_000] as const;

test('the state at an offset from batch headers is the state from whole batches', () => {
  const clock = new ManualClock();
  const random = new SeededRandom(27);
  const log = PartitionLog.open(tempDir(), { clock, config: { segmentBytes: SEGMENT_BYTES } });
  const sequences = new Array<number>(PRODUCERS).fill(0);
  for (let index = 0; index < BATCHES; index++) {
    const producer = random.nextInt(PRODUCERS);
    const records = Array.from({ length: 1 + random.nextInt(3) }, () => ({ value: 'x'.repeat(VALUE_BYTES[random.nextInt(VALUE_BYTES.length)]!), timestamp: clock.nowMs() }));
    log.append(buildRecordBatch(records, { nowMs: clock.nowMs(), producerId: 100 + producer, producerEpoch: 0, baseSequence: sequences[producer]! }), 1);
    sequences[producer]! += records.length;
    clock.advance(7);
  }
  expect(log.segmentBaseOffsets.length).toBeGreaterThan(3);
  const ends: number[] = []; // batch boundaries: where a copy of the log may end
  for (let at = 0; at < log.logEndOffset; ) ends.push((at = log.read(at, 1).batches[0]!.nextOffset));
  for (const offset of [ends[0]!, ends[Math.floor(ends.length / 3)]!, ends[Math.floor(ends.length / 2) + 1]!, log.logEndOffset]) {
    const fromWholeBatches = new ProducerStateManager(tempDir());
    for (let at = 0; at < offset; ) {
      const batch = log.read(at, 1).batches[0]!;
      if (batch.baseOffset >= offset) break;
      fromWholeBatches.apply(batch);
      at = batch.nextOffset;
    }
    expect(Buffer.from(log.producerSnapshotAt(offset)).equals(Buffer.from(fromWholeBatches.encodeSnapshot()))).toBe(true);
  }
  log.close();
});
