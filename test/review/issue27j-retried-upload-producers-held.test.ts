// Review 27j (f6305a9), what held: an upload of tail pieces that fails at its put and is retried
// the next round (a new generator, a new replay from the same base) commits pieces whose producer
// state is the log's at each piece end, byte for byte a replay from the log start, with several
// producers interleaved and the kept snapshots of earlier pieces in place.
import { expect, test } from 'bun:test';
import { ControlStore } from '../../src/control/control-store.ts';
import { buildRecordBatch } from '../../src/format/batch-builder.ts';
import { PartitionLog } from '../../src/log/partition-log.ts';
import { ProducerStateManager } from '../../src/log/producer-state.ts';
import { StoreError } from '../../src/store/errors.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import type { PutOptions, PutResult } from '../../src/store/object-store.ts';
import { tieredSegmentKey } from '../../src/tier/keys.ts';
import { decodeTieredSegment } from '../../src/tier/segment-object.ts';
import { copiedSegments, TierRecords } from '../../src/tier/tier-record.ts';
import { Tierer, type TierSource } from '../../src/tier/tierer.ts';
import { ManualClock } from '../../src/util/clock.ts';
import { SeededRandom } from '../../src/util/random.ts';
import { idOf } from '../support/topic-ids.ts';
import { tempDir } from '../support/temp-dir.ts';

const T0 = 1_700_000_000_000;
const TOPIC_ID = idOf('review-27j-retry');

class FailingPuts extends MemoryStore {
  failures = 0;
  override async put(key: string, body: Uint8Array, options?: PutOptions): Promise<PutResult> {
    if (this.failures > 0 && key.startsWith('tiered')) {
      this.failures--;
      throw new StoreError('Unavailable', 'injected', { key });
    }
    return super.put(key, body, options);
  }
}

test('retried tail uploads carry the producer state of the log at each piece end', async () => {
  const clock = new ManualClock(T0);
  const random = new SeededRandom(2727);
  const log = PartitionLog.open(tempDir(), { clock });
  const store = new FailingPuts();
  const records = new TierRecords(new ControlStore(new MemoryStore(), 'cluster'));
  let source: TierSource = { topic: 't', topicId: TOPIC_ID, partition: 0, leaderEpoch: 1, log, highWatermark: 0 };
  const tierer = new Tierer({ store, prefix: 'tiered', records, clock, random: new SeededRandom(1), partitions: () => [source], tailMaxBytes: 1 });
  const sequences = [0, 0, 0];
  for (let round = 0; round < 4; round++) {
    for (let index = 0; index < 20; index++) {
      const producer = random.nextInt(3);
      log.append(
        buildRecordBatch([{ value: `r${round}-${index}`, timestamp: clock.nowMs() }], { nowMs: clock.nowMs(), producerId: 100 + producer, producerEpoch: 0, baseSequence: sequences[producer]! }),
        1,
      );
      sequences[producer]! += 1;
      clock.advance(1000);
    }
    source = { ...source, highWatermark: log.logEndOffset };
    store.failures = round % 2 === 0 ? 1 : 0;
    if (store.failures > 0) expect(await tierer.tierDue()).toBe(0);
    expect(await tierer.tierDue()).toBe(1);
  }
  const segments = copiedSegments(await records.read(TOPIC_ID, 0));
  expect(segments.at(-1)!.endOffset).toBe(log.logEndOffset);
  for (const segment of segments) {
    const object = await store.get(tieredSegmentKey('tiered', TOPIC_ID, 0, segment.baseOffset, segment.endOffset, segment.uploadId));
    const replayed = new ProducerStateManager(tempDir());
    for (let at = 0; at < segment.endOffset; ) {
      const batch = log.read(at, 1).batches[0]!;
      replayed.apply(batch);
      at = batch.nextOffset;
    }
    expect(Buffer.from(decodeTieredSegment(object.body).producers!).equals(Buffer.from(replayed.encodeSnapshot()))).toBe(true);
  }
  await log.close();
});
