// L6/[C7]: a scan that finds this broker's current stream followed by another in any partition's
// chain knows its writer is fenced (the later leader sealed the stream, or is about to [C4]). It
// claims nothing more through that stream and starts a new writer epoch at once. Before, it went
// on claiming other partitions through the sealed stream and spent a whole rebuild on each, only
// to learn of the fence at its next WAL put and claim them all again (found by the simulation,
// seed 111: acks=all on a partition stayed down for 10 s after a control-store outage).
import { expect, test } from 'bun:test';
import { ControlStore } from '../../src/control/control-store.ts';
import type { PartitionRecord } from '../../src/cluster/control-records.ts';
import type { ClaimPlan } from '../../src/cluster/takeover.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import { ManualClock } from '../../src/util/clock.ts';
import type { StreamId } from '../../src/wal/keys.ts';
import { testClusterNode } from '../support/cluster-node.ts';

const A0: StreamId = { writerId: 'broker-1', epoch: 0 };
const A1: StreamId = { writerId: 'broker-1', epoch: 1 };
const B0: StreamId = { writerId: 'broker-2', epoch: 0 };
/** A broker with no record: dead to everyone, so what it leads is up for grabs. */
const GONE = 3;
const C0: StreamId = { writerId: `broker-${GONE}`, epoch: 0 };

test("a scan that sees its stream sealed in another partition's chain claims nothing through it and starts a new writer epoch", async () => {
  const store = new MemoryStore();
  const clock = new ManualClock(); // never advanced: both leases stay live, and no scan comes on its own
  const adoptions: { id: string; stream: StreamId }[] = [];
  let newEpochs = 0;
  const a = testClusterNode({
    store,
    clock,
    nodeId: 1,
    adopt: async (topic, partition, _partitions, plan: ClaimPlan) => void adoptions.push({ id: `${topic}/${partition}`, stream: plan.next.chain.at(-1)! }),
    writer: { whenFailed: () => new Promise(() => {}), startNewEpoch: async () => (newEpochs++, A1) },
  });
  const b = testClusterNode({ store, clock, nodeId: 2 });
  await a.start();
  await b.start();
  await a.createTopic('t', 2);
  await a.scan(); // two live brokers: a claims its fair share, one partition, through A0
  expect(adoptions).toEqual([{ id: 't/0', stream: A0 }]);
  adoptions.length = 0;
  const control = new ControlStore(store, 'c');
  // b took t/0 over (so A0 is sealed, or about to be [C4]); t/1 is led by a broker that is gone: up for grabs.
  const t0 = (await control.read<PartitionRecord>('partitions/t/0'))!;
  expect(await control.replace('partitions/t/0', t0, { ...t0.value, leader: 2, leaderEpoch: t0.value.leaderEpoch + 1, chain: [A0, B0] })).not.toBeNull();
  expect(await control.create('partitions/t/1', { topicId: t0.value.topicId, leader: GONE, leaderEpoch: 0, chain: [C0] })).not.toBeNull();
  await a.scan();
  expect(newEpochs).toBe(1);
  expect(a.stream).toEqual(A1);
  expect(adoptions).toEqual([{ id: 't/1', stream: A1 }]); // through the new stream only, never the sealed one
  a.stop();
  b.stop();
});
