// docs/tier-protocol.md [K6]: the streams at the head of a partition's chain that hold nothing from
// the tiered end on are settled: a rebuild says how many it found so, the leader notes them in the
// record, and the next takeover neither seals nor reads them again. Without it every takeover of
// a partition LISTed and sealed every stream it was ever led through (40 streams took 0.7 s).
import { expect, test } from 'bun:test';
import { ControlStore } from '../../src/control/control-store.ts';
import type { PartitionRecord } from '../../src/cluster/control-records.ts';
import { rebuildFromTierAndChain } from '../../src/partition/rebuild.ts';
import { planTakeover } from '../../src/cluster/takeover.ts';
import { PartitionLog } from '../../src/log/partition-log.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import type { ListOptions, ListPage } from '../../src/store/object-store.ts';
import { ManualClock } from '../../src/util/clock.ts';
import { SeededRandom } from '../../src/util/random.ts';
import { type StreamId, walObjectKey } from '../../src/wal/keys.ts';
import { DEFAULT_WAL_READER_CONFIG, WalReader } from '../../src/wal/reader.ts';
import { servedHooks, testClusterNode } from '../support/cluster-node.ts';
import { passTime } from '../support/settle.ts';
import { tempDir } from '../support/temp-dir.ts';
import { collectPrefix, writeWalChain } from '../support/wal-chain.ts';

/** The key prefix of a stream's objects. */
function streamPrefix(stream: StreamId): string {
  return walObjectKey('', stream, 0).replace(/[^/]+$/, '');
}

class ListRecordingStore extends MemoryStore {
  readonly lists: string[] = [];
  override async list(prefix: string, options?: ListOptions): Promise<ListPage> {
    this.lists.push(prefix);
    return super.list(prefix, options);
  }
}

test('a rebuild finds the head of the chain that holds nothing from the tiered end, and skips it next time', async () => {
  const store = new ListRecordingStore();
  const written = await writeWalChain(store, [5, 5, 5]); // offsets 0..4, 5..9, 10..14
  const [a, b, c] = written.chain;
  await collectPrefix(store, a!, 5);
  await collectPrefix(store, b!, 3); // 8 and 9 stay: the tier ends at 7... then at 10
  const reader = new WalReader(store, { ...DEFAULT_WAL_READER_CONFIG, prefix: '', wants: () => true }, { clock: written.clock, random: new SeededRandom(1) });
  const first = await rebuildFromTierAndChain(reader, PartitionLog.open(tempDir()), written.chain, written.topicId, async () => ({ offset: 10, epochs: [], producers: null }));
  expect(first.settled).toEqual({ count: 2, fromOffset: 10 }); // b's 8 and 9 lie below 10
  store.lists.length = 0;
  const log = PartitionLog.open(tempDir());
  const second = await rebuildFromTierAndChain(reader, log, written.chain, written.topicId, async () => ({ offset: 12, epochs: [], producers: null }), undefined, false, first.settled);
  const listedStreams = [a!, b!, c!].map((stream) => store.lists.some((prefix) => prefix.startsWith(streamPrefix(stream))));
  expect(listedStreams).toEqual([false, false, true]); // neither sealed nor read: not even LISTed
  expect([log.logStartOffset, log.logEndOffset]).toEqual([12, 15]);
  expect(second.settled).toEqual({ count: 2, fromOffset: 12 }); // c holds 12..14
  // A rebuild from below the settled offset (the tier unreadable: from the record's start) reads them all.
  const below = await rebuildFromTierAndChain(
    reader,
    PartitionLog.open(tempDir()),
    written.chain,
    written.topicId,
    async () => ({ offset: 8, epochs: [], producers: null }),
    undefined,
    false,
    first.settled,
  );
  expect(below.settled).toEqual({ count: 1, fromOffset: 8 });
});

test('a takeover seals only the streams after the settled prefix, and the next record keeps it', () => {
  const stream = (writerId: string, epoch: number) => ({ writerId, epoch });
  const chain = [stream('b1', 0), stream('b2', 0), stream('b1', 1), stream('b2', 1)];
  const record = { topicId: 't-id', leader: 2, leaderEpoch: 5, chain, settled: { count: 2, fromOffset: 100 } };
  const plan = planTakeover(record, 3, stream('b3', 0), { topicId: 't-id', leaderEpochBase: 0 });
  expect(plan.kind).toBe('claim');
  if (plan.kind !== 'claim') return;
  expect(plan.seal).toEqual([stream('b1', 1), stream('b2', 1)]);
  expect(plan.rebuildFrom).toEqual(chain); // the rebuild skips the prefix itself, once it knows where it starts
  expect(plan.settled).toEqual({ count: 2, fromOffset: 100 });
  expect(plan.next).toEqual({ topicId: 't-id', leader: 3, leaderEpoch: 6, chain: [...chain, stream('b3', 0)], settled: { count: 2, fromOffset: 100 } });
});

test('the new leader notes the settled prefix its adoption found in the record it claimed', async () => {
  const store = new MemoryStore();
  const clock = new ManualClock();
  const served = new Map<string, number>();
  const hooks = (nodeId: number) => servedHooks(served, nodeId);
  const a = testClusterNode({ store, clock, nodeId: 1, ...hooks(1) });
  const b = testClusterNode({ store, clock, nodeId: 2, ...hooks(2), adopt: async (topic, partition) => (served.set(`${topic}/${partition}`, 2), { count: 1, fromOffset: 40 }) });
  await a.start();
  await b.start();
  await a.createTopic('t', 1);
  await a.scan();
  expect(served.get('t/0')).toBe(1);
  a.stop(); // its lease lapses unrenewed: b takes the partition over
  await passTime(clock, 1100);
  await b.scan();
  expect(served.get('t/0')).toBe(2);
  const record = (await new ControlStore(store, 'c').read<PartitionRecord>('partitions/t/0'))!.value;
  expect(record.chain.map((s) => s.writerId)).toEqual(['broker-1', 'broker-2']);
  expect(record.settled).toEqual({ count: 1, fromOffset: 40 });
  await b.scan(); // its view of the record is the version it wrote: nothing is claimed again
  expect(record.leaderEpoch).toBe((await new ControlStore(store, 'c').read<PartitionRecord>('partitions/t/0'))!.value.leaderEpoch);
  b.stop();
});
