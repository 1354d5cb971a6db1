// Review of issue 28 (e), found and fixed: TakeoverStages lets a scan's claims run ahead of its
// adoptions, so a takeover of many partitions has all of them claimed, through the current
// writer's stream, within the first moments. When that writer was fenced or failed mid-takeover
// ([C7]), `mayClaim()` stopped only new claims: every adoption already queued still started
// afterwards, sealed the old chain, rebuilt and served through the writer that can acknowledge
// nothing, only for the scan's #startNewEpoch to release them all and claim every one of them
// again, one epoch up (64 of 96 here). A stopped node did the same. Now a queued adoption does not
// start once the node stopped or its writer was fenced (PartitionClaims.#adoptNow).
//
// Severity: liveness/performance (no acknowledged record was at risk: the fenced writer acks
// nothing), ~500 wasted seal+rebuild adoptions in a 500-partition takeover fenced early.
import { expect, test } from 'bun:test';
import { ADOPTIONS_IN_FLIGHT } from '../../src/cluster/partition-claims.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import { ManualClock } from '../../src/util/clock.ts';
import { testClusterNode } from '../support/cluster-node.ts';
import { settle, settleUntil } from '../support/settle.ts';

const PARTITIONS = 3 * ADOPTIONS_IN_FLIGHT;
const NO_SCAN_MS = 3_600_000;

test('[C7] once the writer is fenced mid-takeover, no queued adoption starts through the fenced stream', async () => {
  const store = new MemoryStore();
  const clock = new ManualClock();
  let fence!: () => void;
  const fenced = new Promise<void>((resolve) => (fence = resolve));
  let writerEpoch = 0;
  let isFenced = false;
  const waiting: (() => void)[] = [];
  let startedThroughFencedStream = 0;
  let done = false;
  const adopt = async (_topic: string, _partition: number, _partitions: number, plan: { next: { chain: readonly { writerId: string; epoch: number }[] } }) => {
    if (isFenced && plan.next.chain.at(-1)!.epoch === 0) startedThroughFencedStream++;
    if (done) return;
    await new Promise<void>((resolve) => waiting.push(resolve));
  };
  const node = testClusterNode({
    store,
    clock,
    nodeId: 1,
    scanIntervalMs: NO_SCAN_MS,
    adopt,
    writer: {
      whenFailed: () => (writerEpoch === 0 ? fenced.then(() => new Error('fenced') as never) : new Promise(() => {})),
      startNewEpoch: async () => ({ writerId: 'broker-1', epoch: ++writerEpoch }),
    },
  });
  await node.start();
  await node.createTopic('t', PARTITIONS);
  const scan = node.scan();
  await settleUntil(() => waiting.length === ADOPTIONS_IN_FLIGHT, 'the first adoptions');
  await settle(20);
  // The writer is fenced while the first ADOPTIONS_IN_FLIGHT adoptions run.
  isFenced = true;
  fence();
  await settle(20);
  let rounds = 0;
  while (writerEpoch === 0 && rounds++ < 50) {
    for (const resolve of waiting.splice(0)) resolve();
    await settle(20);
  }
  expect(writerEpoch).toBe(1); // the new epoch came, after the scan
  done = true;
  for (const resolve of waiting.splice(0)) resolve();
  await scan;
  // Adoptions that started after the fence through stream broker-1/0: pure waste, released by
  // #startNewEpoch. At most the one claim already waiting for a slot; 64 before the fix.
  expect(startedThroughFencedStream).toBeLessThanOrEqual(1);
  done = true;
  node.stop();
  for (const resolve of waiting.splice(0)) resolve();
  await scan.catch(() => {});
});

// The same root: a node stopped mid-takeover (ClusterNode.stop, a broker's stop before its engine
// closes) stopped the claim loop, but every adoption already queued still started afterwards (each
// sealed the old chain's streams in the store and only then met the closed engine).
test('once the node stopped mid-takeover, no queued adoption starts', async () => {
  const store = new MemoryStore();
  const clock = new ManualClock();
  const waiting: (() => void)[] = [];
  let stopped = false;
  let startedAfterStop = 0;
  const adopt = async () => {
    if (stopped) {
      startedAfterStop++;
      return;
    }
    await new Promise<void>((resolve) => waiting.push(resolve));
  };
  const node = testClusterNode({ store, clock, nodeId: 1, scanIntervalMs: NO_SCAN_MS, adopt });
  await node.start();
  await node.createTopic('t', PARTITIONS);
  const scan = node.scan();
  await settleUntil(() => waiting.length === ADOPTIONS_IN_FLIGHT, 'the first adoptions');
  await settle(20);
  stopped = true;
  node.stop();
  for (const resolve of waiting.splice(0)) resolve();
  await scan.catch(() => {});
  // At most the one claim waiting for a slot; every queued adoption (64) before the fix.
  expect(startedAfterStop).toBeLessThanOrEqual(1);
});
