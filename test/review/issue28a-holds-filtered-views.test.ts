// [K7] holds: rebuilds at once over one stream that carries two incarnations of a topic (deleted
// and created again, a new topic id), two of its partitions and another topic, in frames of two
// batches each, one rebuild starting at a tiered end inside a frame (at its second batch) and the
// chain naming the stream twice: each log is byte-identical to the same rebuild done alone (ranged
// reads, no sharing), holds no frame of another partition or incarnation, misses nothing and
// duplicates nothing; and the reads were shared.
import { expect, test } from 'bun:test';
import { rebuildFromTierAndChain } from '../../src/partition/rebuild.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import type { GetOptions, GetResult } from '../../src/store/object-store.ts';
import { concatBytes } from '../../src/util/bytes.ts';
import { ManualClock } from '../../src/util/clock.ts';
import { SeededRandom } from '../../src/util/random.ts';
import type { Uuid } from '../../src/util/uuid.ts';
import { encodeSeal, WalObjectBuilder } from '../../src/wal/format.ts';
import { type StreamId, walObjectKey } from '../../src/wal/keys.ts';
import { DEFAULT_WAL_READER_CONFIG, WalReader } from '../../src/wal/reader.ts';
import { SharedWalReads } from '../../src/wal/shared-reads.ts';
import { buildRecordBatch } from '../../src/format/batch-builder.ts';
import { PartitionLog } from '../../src/log/partition-log.ts';
import { bytesFrom } from '../support/wal-chain.ts';
import { tempDir } from '../support/temp-dir.ts';
import { idOf } from '../support/topic-ids.ts';

const OLD = idOf('t', 0);
const NEW = idOf('t', 1);
const OTHER = idOf('u');
const STREAM: StreamId = { writerId: 'broker-1', epoch: 7 };
const OBJECTS = 6;
const BATCH = 5; // records a batch; a frame is two batches

class GetCountingStore extends MemoryStore {
  gets = 0;
  override async get(key: string, options?: GetOptions): Promise<GetResult> {
    this.gets++;
    return super.get(key, options);
  }
}

function frame(tag: string, base: number): Uint8Array {
  const batch = (from: number) =>
    buildRecordBatch(
      Array.from({ length: BATCH }, (_, i) => ({ value: `${tag}-${from + i}`, timestamp: 1_700_000_000_000 })),
      { nowMs: 1_700_000_000_000, baseOffset: from },
    );
  return concatBytes([batch(base), batch(base + BATCH)]);
}

/** Objects 0..2: the old incarnation's partition 0; objects 3..5: the new one's partitions 0 and 1; topic u throughout. */
async function stream(): Promise<GetCountingStore> {
  const store = new GetCountingStore();
  for (let sequence = 0; sequence < OBJECTS; sequence++) {
    const builder = new WalObjectBuilder({ kind: 'data', writerId: STREAM.writerId, epoch: STREAM.epoch, sequence, createdMs: 0 });
    const add = (topic: string, topicId: Uuid, partition: number, base: number) =>
      builder.addFrame({ topic, topicId, partition, leaderEpoch: 0, baseOffset: base, lastOffset: base + 2 * BATCH - 1, data: frame(`${topic}${topicId.slice(0, 4)}p${partition}`, base) });
    if (sequence < 3) add('t', OLD, 0, sequence * 2 * BATCH);
    else for (const partition of [1, 0]) add('t', NEW, partition, (sequence - 3) * 2 * BATCH);
    add('u', OTHER, 0, sequence * 2 * BATCH);
    await store.put(walObjectKey('', STREAM, sequence), concatBytes(builder.finish()));
  }
  await store.put(walObjectKey('', STREAM, OBJECTS), encodeSeal({ writerId: 'broker-2', epoch: STREAM.epoch, sequence: OBJECTS, createdMs: 0 }));
  store.gets = 0;
  return store;
}

interface Case {
  readonly topic: string;
  readonly topicId: Uuid;
  readonly partition: number;
  readonly tieredEnd: number | null;
  readonly end: number;
}

const CASES: Case[] = [
  { topic: 't', topicId: NEW, partition: 0, tieredEnd: 15, end: 30 }, // the tier ends at the second batch of object 4's frame
  { topic: 't', topicId: NEW, partition: 1, tieredEnd: null, end: 30 },
  { topic: 't', topicId: OLD, partition: 0, tieredEnd: null, end: 30 },
  { topic: 'u', topicId: OTHER, partition: 0, tieredEnd: 20, end: 60 },
];

async function rebuild(shared: SharedWalReads, c: Case): Promise<PartitionLog> {
  const log = PartitionLog.open(tempDir());
  const view = shared.view((topic, partition, id) => topic === c.topic && partition === c.partition && id === c.topicId);
  const startOf = async () => (c.tieredEnd === null ? null : { offset: c.tieredEnd, epochs: [], producers: null });
  await shared.hold(() => rebuildFromTierAndChain(view, log, [STREAM, STREAM], c.topicId, startOf));
  return log;
}

const sharedOver = (store: MemoryStore) =>
  new SharedWalReads((wants) => new WalReader(store, { ...DEFAULT_WAL_READER_CONFIG, prefix: '', wants }, { clock: new ManualClock(), random: new SeededRandom(1) }));

test('rebuilds at once take exactly their own partition and incarnation, from their tiered end, as each alone would', async () => {
  const aloneStore = await stream();
  const alone: PartitionLog[] = [];
  for (const c of CASES) alone.push(await rebuild(sharedOver(aloneStore), c));
  const aloneGets = aloneStore.gets;

  const togetherStore = await stream();
  const shared = sharedOver(togetherStore);
  const together = await Promise.all(CASES.map((c) => rebuild(shared, c)));
  for (const [index, c] of CASES.entries()) {
    const log = together[index]!;
    expect([log.logStartOffset, log.logEndOffset]).toEqual([c.tieredEnd ?? 0, c.end]);
    const bytes = bytesFrom(log, log.logStartOffset);
    expect(bytes).toEqual(bytesFrom(alone[index]!, alone[index]!.logStartOffset));
    const values = log.read(log.logStartOffset, 1 << 24).batches.flatMap((batch) => [...batch.records()].map((record) => new TextDecoder().decode(record.value!)));
    const tag = `${c.topic}${c.topicId.slice(0, 4)}p${c.partition}`;
    expect(values).toEqual(Array.from({ length: c.end - (c.tieredEnd ?? 0) }, (_, i) => `${tag}-${(c.tieredEnd ?? 0) + i}`));
  }
  expect(togetherStore.gets).toBeLessThan(aloneGets / 2); // shared indeed
  expect(shared.keptBytes).toBe(0);
});
