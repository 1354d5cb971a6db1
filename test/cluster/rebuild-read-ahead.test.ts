// Seed 1269 of the simulation: a restarted broker rebuilt each of its partitions from a chain of
// ~630 WAL objects read one GET at a time (~1.8 s of store latency per partition, one partition
// after another), so acks=all stayed NOT_LEADER_OR_FOLLOWER past the takeover bound. The rebuild
// now keeps several reads of a stream in flight, and still applies them in sequence order.
import { expect, test } from 'bun:test';
import { REBUILD_READ_AHEAD, rebuildFromChain } from '../../src/partition/rebuild.ts';
import { Engine } from '../../src/engine/index.ts';
import { buildRecordBatch } from '../../src/format/batch-builder.ts';
import { PartitionLog } from '../../src/log/partition-log.ts';
import type { GetOptions, GetResult } from '../../src/store/object-store.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import { ManualClock } from '../../src/util/clock.ts';
import { SeededRandom } from '../../src/util/random.ts';
import { DEFAULT_WAL_READER_CONFIG, WalReader } from '../../src/wal/reader.ts';
import { ensureSealed } from '../../src/wal/seal.ts';
import { tempDir } from '../support/temp-dir.ts';

const UPLOAD_INTERVAL_MS = 100;
const OBJECTS = 3 * REBUILD_READ_AHEAD;

/** A store that counts the GETs it is serving at once. */
class ConcurrencyCountingStore extends MemoryStore {
  inFlight = 0;
  maxInFlight = 0;

  override async get(key: string, options?: GetOptions): Promise<GetResult> {
    this.inFlight++;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    try {
      await Promise.resolve(); // the answer comes later than the request, as over a network
      return await super.get(key, options);
    } finally {
      this.inFlight--;
    }
  }
}

test('a rebuild reads several WAL objects of a stream at once and applies them in order', async () => {
  const clock = new ManualClock();
  const store = new ConcurrencyCountingStore();
  const ferry = await Engine.open({ directory: tempDir(), clock, wal: { store, writerId: 'w', config: { uploadIntervalMs: UPLOAD_INTERVAL_MS } } });
  const topicId = ferry.createTopic('t').id;
  const stream = ferry.wal!.config.stream;
  for (let i = 0; i < OBJECTS; i++) {
    const appended = await ferry.appendBatches('t', 0, buildRecordBatch([{ value: `r${i}` }], { nowMs: clock.nowMs() }));
    clock.advance(UPLOAD_INTERVAL_MS); // each batch in its own WAL object
    await appended.committed;
  }
  await ferry.close();
  await ensureSealed(store, '', stream, { writerId: 'successor', nowMs: clock.nowMs() });
  store.maxInFlight = 0;
  const rebuilt = PartitionLog.open(tempDir());
  const reader = new WalReader(store, { ...DEFAULT_WAL_READER_CONFIG, prefix: '', wants: () => true }, { clock, random: new SeededRandom(1) });
  const { objectsRead } = await rebuildFromChain(reader, rebuilt, [stream], topicId);
  expect(objectsRead).toBeGreaterThanOrEqual(OBJECTS);
  expect(rebuilt.logEndOffset).toBe(OBJECTS); // every record, in order (an out-of-order apply would fail or drop)
  expect(store.maxInFlight).toBe(REBUILD_READ_AHEAD);
  expect(store.inFlight).toBe(0);
  await rebuilt.close();
});
