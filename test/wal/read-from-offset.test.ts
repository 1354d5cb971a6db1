// A rebuild from the tier's end reads a WAL object's frames only from the log's end on: frames
// wholly below it are neither fetched nor returned. After a fill, a takeover's rebuild fetched
// every byte of the tiered frames still in the WAL (GC had not run yet) only for applyFrame to
// skip them: 54 MB a partition, 2.3 s of a takeover at 10 GB of history.
import { expect, test } from 'bun:test';
import { MemoryStore } from '../../src/store/memory.ts';
import type { GetOptions, GetResult } from '../../src/store/object-store.ts';
import { concatBytes } from '../../src/util/bytes.ts';
import { ManualClock } from '../../src/util/clock.ts';
import { SeededRandom } from '../../src/util/random.ts';
import { WalObjectBuilder } from '../../src/wal/format.ts';
import { walObjectKey } from '../../src/wal/keys.ts';
import { DEFAULT_WAL_READER_CONFIG, WalReader } from '../../src/wal/reader.ts';
import { batchOf } from '../support/batches.ts';
import { idOf } from '../support/topic-ids.ts';

const TOPIC_ID = idOf('t');
/** Each frame far above the reader's 64 KiB tail probe, so it is fetched by a GET of its own. */
const VALUE_BYTES = 200_000;

class ByteCountingStore extends MemoryStore {
  bytesRead = 0;
  override async get(key: string, options?: GetOptions): Promise<GetResult> {
    const result = await super.get(key, options);
    this.bytesRead += result.body.length;
    return result;
  }
}

test('frames wholly below the offset asked from are not fetched, and the rest are', async () => {
  const store = new ByteCountingStore();
  const stream = { writerId: 'broker-1', epoch: 0 };
  const builder = new WalObjectBuilder({ kind: 'data', writerId: stream.writerId, epoch: 0, sequence: 0, createdMs: 0 });
  for (const base of [0, 10, 20])
    builder.addFrame({ topic: 't', topicId: TOPIC_ID, partition: 0, leaderEpoch: 0, baseOffset: base, lastOffset: base + 9, data: batchOf(`r${base}`, 10, 1_700_000_000_000, VALUE_BYTES / 10) });
  await store.put(walObjectKey('', stream, 0), concatBytes(builder.finish()));
  const reader = new WalReader(store, { ...DEFAULT_WAL_READER_CONFIG, rangeMergeGapBytes: 0, prefix: '', wants: () => true }, { clock: new ManualClock(), random: new SeededRandom(1) });
  const all = await reader.read(stream, 0);
  const allBytes = store.bytesRead;
  store.bytesRead = 0;
  const from15 = await reader.read(stream, 0, 15);
  if (all.kind !== 'data' || from15.kind !== 'data') throw new Error('a data object');
  expect(all.frames.map((frame) => frame.entry.baseOffset)).toEqual([0, 10, 20]);
  expect(from15.frames.map((frame) => frame.entry.baseOffset)).toEqual([10, 20]); // 10..19 holds 15: it is read
  expect(store.bytesRead).toBeLessThan(allBytes - VALUE_BYTES / 2); // the first frame's bytes were not
});
