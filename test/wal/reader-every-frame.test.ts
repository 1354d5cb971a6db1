// A reader whose `wants` takes every frame (a read replica of every partition) reads each object
// whole in one GET (WalReaderConfig.wantsEveryFrame): its ends first and its frames after cost a
// large object three GETs (issue 28's catch-up: 3.06 GETs an object where raw GETs made one).
import { expect, test } from 'bun:test';
import { buildRecordBatch } from '../../src/format/batch-builder.ts';
import type { MemoryStore } from '../../src/store/memory.ts';
import { concatBytes } from '../../src/util/bytes.ts';
import { ManualClock } from '../../src/util/clock.ts';
import { SeededRandom } from '../../src/util/random.ts';
import { WalObjectBuilder } from '../../src/wal/format.ts';
import { type StreamId, walObjectKey } from '../../src/wal/keys.ts';
import { DEFAULT_WAL_READER_CONFIG, WalReader } from '../../src/wal/reader.ts';
import { GetCountingStore } from '../support/get-counting-store.ts';
import { idOf } from '../support/topic-ids.ts';

const STREAM: StreamId = { writerId: 'leader', epoch: 0 };
const TOPIC_ID = idOf('t');
const PARTITIONS = 4;
/** Each frame's record: four frames of it make an object far larger than the reader's 64 KiB probe. */
const VALUE_BYTES = 100 * 1024;

async function largeObject(): Promise<GetCountingStore> {
  const store = new GetCountingStore();
  const builder = new WalObjectBuilder({ kind: 'data', writerId: STREAM.writerId, epoch: STREAM.epoch, sequence: 0, createdMs: 0 });
  for (let partition = 0; partition < PARTITIONS; partition++) {
    const data = buildRecordBatch([{ value: new Uint8Array(VALUE_BYTES).fill(partition), timestamp: 0 }], { nowMs: 0, baseOffset: 0 });
    builder.addFrame({ topic: 't', topicId: TOPIC_ID, partition, leaderEpoch: 0, baseOffset: 0, lastOffset: 0, data });
  }
  await store.put(walObjectKey('', STREAM, 0), concatBytes(builder.finish()));
  store.gets = 0;
  return store;
}

const readerOver = (store: MemoryStore, wantsEveryFrame: boolean) =>
  new WalReader(store, { ...DEFAULT_WAL_READER_CONFIG, prefix: '', wants: () => true, wantsEveryFrame }, { clock: new ManualClock(), random: new SeededRandom(1) });

test('a reader that wants every frame reads a large object whole in one GET, every frame verified', async () => {
  for (const wantsEveryFrame of [false, true]) {
    const store = await largeObject();
    const read = await readerOver(store, wantsEveryFrame).read(STREAM, 0);
    if (read.kind !== 'data') throw new Error('a data object');
    expect(read.frames.map((frame) => frame.entry.partition)).toEqual([0, 1, 2, 3]);
    expect(store.gets).toBe(wantsEveryFrame ? 1 : 3); // its ends, then the frames between: three GETs
  }
});
