// [K7] "What is kept lives ... up to SHARED_READS_BYTES_MAX, oldest out first." The eviction in
// SharedWalReads.#settled walks the kept map from its oldest entry and stops at the entry that
// just settled: entries inserted after it (issued later) that settled before it are never looked
// at. Reads that settle in the reverse of the order they were issued (GETs of varying latency,
// e.g. a rebuild's REBUILD_READ_AHEAD reads) each stop at themselves and evict nothing, so what is
// kept ends far above the budget with nothing in flight, and stays there until a later read
// settles or the last holder lets go.
import { expect, test } from 'bun:test';
import { MemoryStore } from '../../src/store/memory.ts';
import type { GetOptions, GetResult } from '../../src/store/object-store.ts';
import { concatBytes } from '../../src/util/bytes.ts';
import { ManualClock } from '../../src/util/clock.ts';
import { SeededRandom } from '../../src/util/random.ts';
import { encodeSeal, WalObjectBuilder } from '../../src/wal/format.ts';
import { type StreamId, walObjectKey } from '../../src/wal/keys.ts';
import { DEFAULT_WAL_READER_CONFIG, WalReader } from '../../src/wal/reader.ts';
import { SharedWalReads } from '../../src/wal/shared-reads.ts';
import { buildRecordBatch } from '../../src/format/batch-builder.ts';
import { idOf } from '../support/topic-ids.ts';

const TOPIC_ID = idOf('t');
const STREAM: StreamId = { writerId: 'broker-1', epoch: 3 };
const OBJECTS = 4;

/** GETs of object `sequence` wait `OBJECTS - sequence` turns: later objects answer first. */
class ReverseLatencyStore extends MemoryStore {
  override async get(key: string, options?: GetOptions): Promise<GetResult> {
    const sequence = Number(key.slice(key.lastIndexOf('/') + 1));
    for (let turn = 0; turn < (OBJECTS - sequence) * 20; turn++) await new Promise<void>((resolve) => setTimeout(resolve, 0));
    return super.get(key, options);
  }
}

test('what is kept stays within its budget once every read settled, whatever order they settled in', async () => {
  const store = new ReverseLatencyStore();
  for (let sequence = 0; sequence < OBJECTS; sequence++) {
    const builder = new WalObjectBuilder({ kind: 'data', writerId: STREAM.writerId, epoch: STREAM.epoch, sequence, createdMs: 0 });
    const data = buildRecordBatch([{ value: `v${sequence}`, timestamp: 0 }], { nowMs: 0, baseOffset: sequence });
    builder.addFrame({ topic: 't', topicId: TOPIC_ID, partition: 0, leaderEpoch: 0, baseOffset: sequence, lastOffset: sequence, data });
    await store.put(walObjectKey('', STREAM, sequence), concatBytes(builder.finish()));
  }
  await store.put(walObjectKey('', STREAM, OBJECTS), encodeSeal({ writerId: 'broker-2', epoch: STREAM.epoch, sequence: OBJECTS, createdMs: 0 }));
  const objectBytes = (await MemoryStore.prototype.get.call(store, walObjectKey('', STREAM, 0))).body.length;
  const budget = objectBytes; // room for one object
  const shared = new SharedWalReads((wants) => new WalReader(store, { ...DEFAULT_WAL_READER_CONFIG, prefix: '', wants }, { clock: new ManualClock(), random: new SeededRandom(1) }), budget);
  const view = shared.view((topic, partition, id) => topic === 't' && partition === 0 && id === TOPIC_ID);
  let release: () => void = () => {};
  const other = shared.hold(() => new Promise<void>((resolve) => (release = resolve))); // a second rebuild: reads are shared
  await shared.hold(async () => {
    // As a rebuild's read-ahead issues them: all at once, in sequence order.
    await Promise.all(Array.from({ length: OBJECTS }, (_, sequence) => view.read(STREAM, sequence)));
    // Nothing is in flight now: what is kept must be within the budget.
    expect(shared.keptBytes).toBeLessThanOrEqual(budget);
  });
  release();
  await other;
});
