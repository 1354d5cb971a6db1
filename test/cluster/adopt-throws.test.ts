// [C3] An adoption that fails after its compare-and-swap leaves the partition's record naming this
// broker: the next scan claims it again one leader epoch up, sealing and rebuilding the same chain
// (not left leaderless, not served from nothing).
import { expect, test } from 'bun:test';
import { ControlStore } from '../../src/control/control-store.ts';
import type { PartitionRecord } from '../../src/cluster/control-records.ts';
import type { ClaimPlan } from '../../src/cluster/takeover.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import { ManualClock } from '../../src/util/clock.ts';
import { testClusterNode } from '../support/cluster-node.ts';

test('an adoption that throws after the claim is claimed again at the next scan, one epoch up, from the same chain', async () => {
  const store = new MemoryStore();
  const clock = new ManualClock();
  const plans: ClaimPlan[] = [];
  let failures = 1;
  const make = (nodeId: number) =>
    testClusterNode({
      store,
      clock,
      nodeId,
      scanIntervalMs: 100_000,
      adopt: async (_t, _p, _n, plan) => {
        plans.push(plan);
        if (nodeId === 2 && failures-- > 0) throw new Error('injected: the rebuild failed');
      },
    });
  const a = make(1);
  await a.start();
  await a.createTopic('t', 1);
  await a.scan(); // broker 1 leads t-0 in broker-1/0
  a.stop(); // and dies
  const b = make(2);
  await b.start();
  clock.advance(1100);
  await b.scan(); // claims t-0 (epoch 1), adopting fails
  await b.scan(); // claims it again (epoch 2)
  expect(plans.map((p) => [p.next.leaderEpoch, p.seal.map((s) => s.writerId), p.rebuildFrom.map((s) => s.writerId), p.next.chain.map((s) => s.writerId)])).toEqual([
    [0, [], [], ['broker-1']],
    [1, ['broker-1'], ['broker-1'], ['broker-1', 'broker-2']],
    [2, ['broker-1'], ['broker-1'], ['broker-1', 'broker-2']],
  ]);
  expect((await new ControlStore(store, 'c').read<PartitionRecord>('partitions/t/0'))!.value.leaderEpoch).toBe(2);
  expect(b.leaderOf('t', 0)?.broker.nodeId).toBe(2);
  b.stop();
});
