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

/** A log of BATCHES idempotent batches of PRODUCERS producers (ids from `firstProducerId`), of record sizes drawn from VALUE_BYTES, over several segments. */
function idempotentLog(seed: number, firstProducerId: number, stepMs: number): PartitionLog {
  const clock = new ManualClock();
  const random = new SeededRandom(seed);
  const log = PartitionLog.open(tempDir(), { clock, config: { segmentBytes: SEGMENT_BYTES } });
  const sequences = new Array<number>(PRODUCERS).fill(0);
  for (let index = 0; index < BATCHES; index++) {
    const producer = random.nextInt(PRODUCERS);
    const records = Array.from({ length: 1 + random.nextInt(3) }, () => ({ value: 'x'.repeat(VALUE_BYTES[random.nextInt(VALUE_BYTES.length)]!), timestamp: clock.nowMs() }));
    log.append(buildRecordBatch(records, { nowMs: clock.nowMs(), producerId: firstProducerId + producer, producerEpoch: 0, baseSequence: sequences[producer]! }), 1);
    sequences[producer]! += records.length;
    clock.advance(stepMs);
  }
  return log;
}

test('the state at an offset from batch headers is the state from whole batches', () => {
  const log = idempotentLog(27, 100, 7);
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

// The tierer brings the state forward with the batches it reads (producerReplayFrom) instead of
// replaying the range's headers again at its end (a synchronous read of the whole range: 45 ms of
// event loop for a 30 MB range of small batches). Both must give the same bytes, from a base with
// a kept snapshot (the previous tiered end) and from one without (the first range: the log start).
test('the state at an end, brought forward from a base by the batches after it, is the one replayed at that end', () => {
  const log = idempotentLog(2727, 200, 11);
  const ends: number[] = [0];
  for (let at = 0; at < log.logEndOffset; ) ends.push((at = log.read(at, 1).batches[0]!.nextOffset));
  // Consecutive ranges, as the tierer takes them: each base is the previous end.
  const cuts = [0, ends[Math.floor(ends.length / 4)]!, ends[Math.floor(ends.length / 2)]!, log.logEndOffset];
  for (let index = 1; index < cuts.length; index++) {
    const [base, end] = [cuts[index - 1]!, cuts[index]!];
    const walked = log.producerReplayFrom(base);
    for (let at = base; at < end; ) {
      const batch = log.read(at, 1).batches[0]!;
      walked.apply(batch);
      at = batch.nextOffset;
    }
    const broughtForward = walked.snapshotAt(end);
    const replayed = new ProducerStateManager(tempDir());
    for (let at = 0; at < end; ) {
      const batch = log.read(at, 1).batches[0]!;
      replayed.apply(batch);
      at = batch.nextOffset;
    }
    expect(Buffer.from(broughtForward).equals(Buffer.from(replayed.encodeSnapshot()))).toBe(true);
    expect(Buffer.from(log.producerSnapshotAt(end)).equals(Buffer.from(broughtForward))).toBe(true); // kept as the file a later base starts from
  }
  // A walk that stops short of the end it is asked for is refused, never answered with a partial state.
  const short = log.producerReplayFrom(cuts[1]!);
  expect(() => short.snapshotAt(cuts[2]!)).toThrow(/replayed to/);
  log.close();
});
