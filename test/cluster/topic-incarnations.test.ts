// A topic deleted and created again is another log (docs/design.md contract 10, issue 9 finding 5): its
// leader's WAL stream goes on carrying the old incarnation's frames under the same name, so the
// rebuild of a takeover, the stream tails of followers and the cluster's records must tell the
// incarnations apart by topic id.
import { expect, test } from 'bun:test';
import { ControlStore } from '../../src/control/control-store.ts';
import type { PartitionRecord, TopicRecord } from '../../src/cluster/control-records.ts';
import { rebuildFromChain } from '../../src/partition/rebuild.ts';
import { StreamTails } from '../../src/cluster/stream-tails.ts';
import { PartitionLog } from '../../src/log/partition-log.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import { ManualClock, systemClock } from '../../src/util/clock.ts';
import { SeededRandom } from '../../src/util/random.ts';
import type { StreamId } from '../../src/wal/keys.ts';
import { DEFAULT_WAL_READER_CONFIG, WalReader } from '../../src/wal/reader.ts';
import { sealStream } from '../../src/wal/seal.ts';
import { DEFAULT_WAL_WRITER_CONFIG, WalWriter } from '../../src/wal/writer.ts';
import { batchOf, decode } from '../support/batches.ts';
import { advanceThrough } from '../support/settle.ts';
import { testClusterNode } from '../support/cluster-node.ts';
import { tempDir } from '../support/temp-dir.ts';
import { idOf } from '../support/topic-ids.ts';

const OLD = idOf('d1', 0);
const NEW = idOf('d1', 1);
const STREAM: StreamId = { writerId: 'broker-1', epoch: 0 };

/** The reproduction of finding 5 as one stream: five records of d1, then (d1 deleted and created again) three of the new d1. */
async function streamOfTwoIncarnations(store: MemoryStore): Promise<void> {
  const wal = new WalWriter(store, { ...DEFAULT_WAL_WRITER_CONFIG, uploadIntervalMs: 1, prefix: 'p', stream: STREAM }, { clock: systemClock, random: new SeededRandom(1) });
  const ship = async (topicId: string, tag: string, count: number) => {
    const log = PartitionLog.open(tempDir());
    for (let i = 0; i < count; i++) {
      const { batches } = log.append(batchOf(`${tag}-${i}`), 0);
      wal.append({ topic: 'd1', topicId, partition: 0, leaderEpoch: 0, baseOffset: i, lastOffset: i, data: Uint8Array.from(batches[0]!.bytes) });
      await wal.flush(); // one object per record: the incarnations interleave object by object
    }
    await log.close();
  };
  await ship(OLD, 'old', 5);
  await ship(NEW, 'new', 3);
}

function values(log: PartitionLog): string[] {
  return log.read(0, 1 << 20).batches.flatMap((batch) => [...batch.records()].map((record) => decode(record.value)!));
}

test('a rebuild applies only the frames of the incarnation it rebuilds, wherever the stream has others', async () => {
  const store = new MemoryStore();
  await streamOfTwoIncarnations(store);
  await sealStream(store, 'p', STREAM, { writerId: 'broker-2', nowMs: 0 });
  const reader = new WalReader(
    store,
    { ...DEFAULT_WAL_READER_CONFIG, prefix: 'p', wants: (topic, partition) => topic === 'd1' && partition === 0 },
    { clock: systemClock, random: new SeededRandom(2) },
  );
  const rebuilt = PartitionLog.open(tempDir());
  const seen: string[] = [];
  await rebuildFromChain(reader, rebuilt, [STREAM], NEW, (frame) => seen.push(frame.entry.topicId));
  expect(values(rebuilt)).toEqual(['new-0-0', 'new-1-0', 'new-2-0']);
  expect(rebuilt.logEndOffset).toBe(3); // the next write lands right after the new incarnation's records
  expect(seen).toEqual([NEW, NEW, NEW]); // producer state is rebuilt from these frames only
  const old = PartitionLog.open(tempDir());
  await rebuildFromChain(reader, old, [STREAM], OLD);
  expect(values(old)).toEqual(['old-0-0', 'old-1-0', 'old-2-0', 'old-3-0', 'old-4-0']);
  await rebuilt.close();
  await old.close();
});

test('a stream tail feeds a followed partition only the frames of its incarnation', async () => {
  const store = new MemoryStore();
  await streamOfTwoIncarnations(store);
  const tails = new StreamTails({ store, prefix: 'p', clock: systemClock, random: new SeededRandom(3), pollIntervalMs: 1, pollIntervalMaxMs: 5, readChain: async () => [STREAM] });
  const follower = PartitionLog.open(tempDir());
  let applied = 0;
  tails.follow({ topic: 'd1', topicId: NEW, partition: 0, log: follower, applied: () => void applied++ }, [STREAM]);
  const deadline = performance.now() + 10_000;
  while (follower.logEndOffset < 3 && performance.now() < deadline) await Bun.sleep(5);
  await Bun.sleep(50); // the tail has read every object: anything more would show now
  tails.stopAll();
  expect(values(follower)).toEqual(['new-0-0', 'new-1-0', 'new-2-0']);
  expect(applied).toBe(3);
  await follower.close();
});

/** One control store on a manual clock, and the events its nodes' hooks record. */
/** A scan interval no test here reaches: the node scans only when the test says. */
const NO_SCANS_OF_ITS_OWN_MS = 1e9;

function fixture() {
  const store = new MemoryStore();
  return { store, clock: new ManualClock(), events: [] as string[], control: new ControlStore(store, 'c') };
}

function clusterNode(store: MemoryStore, clock: ManualClock, nodeId: number, events: string[], scanIntervalMs?: number) {
  return testClusterNode({
    ...(scanIntervalMs === undefined ? {} : { scanIntervalMs }),
    store,
    clock,
    nodeId,
    random: new SeededRandom(nodeId),
    adopt: async (topic, partition, _partitions, { next }) => void events.push(`${nodeId} adopt ${topic}/${partition} ${next.topicId} [${next.chain.map((s) => s.writerId)}]`),
    release: async (topic, partition) => void events.push(`${nodeId} release ${topic}/${partition}`),
    forget: async (topic) => void events.push(`${nodeId} forget ${topic}`),
  });
}

test('a partition record left by a deleted incarnation is replaced whole, never inherited', async () => {
  const { store, clock, events, control } = fixture();
  const a = clusterNode(store, clock, 1, events);
  const b = clusterNode(store, clock, 2, events);
  await a.start();
  await b.start();
  await b.createTopic('other', 1);
  await b.scan(); // b leads `other`: its fair share is full, so a claims d1
  events.length = 0;
  await a.createTopic('d1', 1);
  const first = (await control.read<TopicRecord>('topics/d1'))!.value.topicId;
  await a.scan();
  // A delete that stopped after the topic record: the partition record outlives it.
  await control.delete('topics/d1');
  await a.scan();
  expect(events).toEqual([`1 adopt d1/0 ${first} [broker-1]`, '1 forget d1']);
  await b.createTopic('d1', 1);
  const second = (await control.read<TopicRecord>('topics/d1'))!.value.topicId;
  expect(second).not.toBe(first);
  await a.scan();
  const record = (await control.read<PartitionRecord>('partitions/d1/0'))!.value;
  expect(record).toEqual({ topicId: second, leader: 1, leaderEpoch: 0, chain: [{ writerId: 'broker-1', epoch: 0 }] });
  expect(events.at(-1)).toBe(`1 adopt d1/0 ${second} [broker-1]`);
  a.stop();
  b.stop();
});

test('a broker that misses the gap between delete and create again still lets the old incarnation go', async () => {
  const { store, clock, events } = fixture();
  const a = clusterNode(store, clock, 1, events, NO_SCANS_OF_ITS_OWN_MS);
  const b = clusterNode(store, clock, 2, events);
  await a.start();
  await b.start();
  await b.createTopic('other', 1);
  await b.scan();
  events.length = 0;
  await a.createTopic('d1', 1);
  await a.scan();
  const control = new ControlStore(store, 'c');
  const first = (await control.read<TopicRecord>('topics/d1'))!.value.topicId;
  // b deletes and creates d1 again between two scans of a: a never sees it absent.
  expect(await advanceThrough(clock, b.deleteTopic('d1'), 'the delete', 50)).toBe(true); // [L8] the delete waits out the other broker's lease-long sighting of the topic
  await b.createTopic('d1', 1);
  const second = (await control.read<TopicRecord>('topics/d1'))!.value.topicId;
  await a.scan();
  expect(events).toEqual([`1 adopt d1/0 ${first} [broker-1]`, '1 forget d1', `1 adopt d1/0 ${second} [broker-1]`]);
  expect(a.leaderOf('d1', 0)?.record.topicId).toBe(second);
  a.stop();
  b.stop();
});

test('issue 9 finding 5: a delete records the highest leader epoch its partitions reached; the next incarnation starts its partitions one above it', async () => {
  const { store, clock, events, control } = fixture();
  const a = clusterNode(store, clock, 1, events);
  await a.start();
  await a.createTopic('d1', 2);
  expect((await control.read<TopicRecord>('topics/d1'))!.value.leaderEpochBase).toBe(0); // the name's first incarnation
  await a.scan();
  // Partition 1 changed leaders a few times (here by compare-and-swap, as claims do): epoch 4.
  const led = (await control.read<PartitionRecord>('partitions/d1/1'))!;
  expect(await control.replace<PartitionRecord>('partitions/d1/1', led, { ...led.value, leaderEpoch: 4 })).not.toBeNull();
  // [L8] a never adopted epoch 4 (a claim whose adoption is under way): the delete waits a lease.
  expect(await advanceThrough(clock, a.deleteTopic('d1'), 'the delete', 50)).toBe(true);
  expect((await control.read<{ leaderEpoch: number }>('epoch-floors/d1'))?.value).toEqual({ leaderEpoch: 4 });

  expect(await a.createTopic('d1', 2)).toBe(true);
  expect((await control.read<TopicRecord>('topics/d1'))!.value.leaderEpochBase).toBe(5);
  await a.scan();
  for (const partition of [0, 1]) expect((await control.read<PartitionRecord>(`partitions/d1/${partition}`))!.value.leaderEpoch).toBe(5);
  expect(a.leaderOf('d1', 0)?.record.leaderEpoch).toBe(5);

  // A third incarnation goes on from the second's epochs, never back to 0; the floor outlives each delete.
  expect(await a.deleteTopic('d1')).toBe(true);
  expect((await control.read<{ leaderEpoch: number }>('epoch-floors/d1'))?.value).toEqual({ leaderEpoch: 5 });
  expect(await a.createTopic('d1', 1)).toBe(true);
  await a.scan();
  expect((await control.read<PartitionRecord>('partitions/d1/0'))!.value.leaderEpoch).toBe(6);
  a.stop();
});

test("issue 9 finding 5: a leftover partition record of a deleted incarnation is claimed at the new incarnation's base epoch, not 0", async () => {
  const { store, clock, events, control } = fixture();
  const a = clusterNode(store, clock, 1, events);
  await a.start();
  await a.createTopic('d1', 1);
  await a.scan();
  expect(await a.deleteTopic('d1')).toBe(true); // floor 0
  await a.createTopic('d1', 1);
  await a.scan(); // claimed at 1
  // The partition record at epoch 1 outlives the delete (the window of deletes without conditions, [L4]).
  const mark = (await control.read<TopicRecord>('topics/d1'))!;
  expect(await a.deleteTopic('d1')).toBe(true); // floor 1
  await control.create<PartitionRecord>('partitions/d1/0', { topicId: mark.value.topicId, leader: 2, leaderEpoch: 1, chain: [{ writerId: 'broker-2', epoch: 0 }] }); // the leftover
  await a.createTopic('d1', 1);
  await a.scan();
  const record = (await control.read<PartitionRecord>('partitions/d1/0'))!.value;
  expect(record.topicId).not.toBe(mark.value.topicId);
  expect(record.leaderEpoch).toBe(2);
  a.stop();
});

test('issue 9 finding 5: the first claim of a partition goes past an epoch floor written after its topic was created (an incarnation created and deleted while the create ran)', async () => {
  const { store, clock, events, control } = fixture();
  const a = clusterNode(store, clock, 1, events);
  await a.start();
  await a.createTopic('d1', 1); // read no floor: base 0
  expect((await control.read<TopicRecord>('topics/d1'))!.value.leaderEpochBase).toBe(0);
  // What a delete of an incarnation that lived between that read and the create would have left.
  await control.create('epoch-floors/d1', { leaderEpoch: 9 });
  await a.scan();
  expect((await control.read<PartitionRecord>('partitions/d1/0'))!.value.leaderEpoch).toBe(10);
  a.stop();
});
