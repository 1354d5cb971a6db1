// [K4] A scan adopts up to ADOPTIONS_IN_FLIGHT partitions at once (a survivor takes a dead
// broker's share in about one adoption's time), never more, and still only within its fair share;
// an adoption that fails leaves its partition to a later scan.
import { expect, test } from 'bun:test';
import { ADOPTIONS_IN_FLIGHT } from '../../src/cluster/partition-claims.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import { ManualClock } from '../../src/util/clock.ts';
import { testClusterNode } from '../support/cluster-node.ts';
import { settle, settleUntil } from '../support/settle.ts';

const PARTITIONS = 3 * ADOPTIONS_IN_FLIGHT;
/** The nodes scan only when the test says. */
const NO_SCAN_MS = 3_600_000;

/** Adoptions that wait until the test lets them go, counting how many run at once. */
function heldAdoptions() {
  const state = { inFlight: 0, mostAtOnce: 0, adopted: new Set<string>(), failOnce: new Set<string>() };
  const waiting: (() => void)[] = [];
  const adopt = async (topic: string, partition: number) => {
    state.inFlight++;
    state.mostAtOnce = Math.max(state.mostAtOnce, state.inFlight);
    await new Promise<void>((resolve) => waiting.push(resolve));
    state.inFlight--;
    const id = `${topic}/${partition}`;
    if (state.failOnce.delete(id)) throw new Error(`adoption of ${id} fails this once`);
    state.adopted.add(id);
  };
  const releaseAll = () => {
    for (const resolve of waiting.splice(0)) resolve();
  };
  return { state, adopt, releaseAll, waiting };
}

test('a scan runs ADOPTIONS_IN_FLIGHT adoptions at once and no more, and waits for all of them', async () => {
  const store = new MemoryStore();
  const clock = new ManualClock();
  const held = heldAdoptions();
  const node = testClusterNode({ store, clock, nodeId: 1, scanIntervalMs: NO_SCAN_MS, adopt: held.adopt });
  await node.start();
  await node.createTopic('t', PARTITIONS);
  held.state.failOnce.add('t/5');
  let scanned = false;
  const scan = node.scan().then(() => (scanned = true));
  while (held.state.adopted.size + (held.state.failOnce.size === 0 ? 1 : 0) < PARTITIONS) {
    await settleUntil(() => held.waiting.length > 0 || scanned, 'adoptions waiting');
    expect(held.state.inFlight).toBeLessThanOrEqual(ADOPTIONS_IN_FLIGHT);
    expect(scanned).toBe(false); // the scan ends only after every adoption it started
    held.releaseAll();
    await settle();
  }
  await scan;
  expect(held.state.mostAtOnce).toBe(ADOPTIONS_IN_FLIGHT);
  expect(held.state.adopted.size).toBe(PARTITIONS - 1);
  expect(held.state.adopted.has('t/5')).toBe(false);
  // the failed one is claimed again by the next scan
  const again = node.scan();
  await settleUntil(() => held.waiting.length > 0, 'the retried adoption');
  held.releaseAll();
  await again;
  expect(held.state.adopted.has('t/5')).toBe(true);
  node.stop();
});

test('adoptions under way count towards the fair share', async () => {
  const store = new MemoryStore();
  const clock = new ManualClock();
  const held = heldAdoptions();
  const a = testClusterNode({ store, clock, nodeId: 1, scanIntervalMs: NO_SCAN_MS, adopt: held.adopt });
  const b = testClusterNode({ store, clock, nodeId: 2, scanIntervalMs: NO_SCAN_MS });
  await a.start();
  await b.start();
  await a.createTopic('t', 4); // fair share of 2 each, with both alive
  const scan = a.scan();
  await settleUntil(() => held.waiting.length >= 2, 'two adoptions');
  await settle(20);
  expect(held.state.inFlight).toBe(2);
  held.releaseAll();
  await scan;
  expect(held.state.adopted.size).toBe(2);
  a.stop();
  b.stop();
});

test('[K5] an adoption under way is there to wait for until it ends, served or not', async () => {
  const store = new MemoryStore();
  const clock = new ManualClock();
  const held = heldAdoptions();
  const node = testClusterNode({ store, clock, nodeId: 1, scanIntervalMs: NO_SCAN_MS, adopt: held.adopt });
  await node.start();
  await node.createTopic('t', 2);
  held.state.failOnce.add('t/1');
  expect(node.adoptionOf('t', 0)).toBeNull();
  const scan = node.scan();
  await settleUntil(() => held.waiting.length === 2, 'two adoptions');
  const [first, second] = [node.adoptionOf('t', 0), node.adoptionOf('t', 1)];
  expect(first).not.toBeNull();
  expect(second).not.toBeNull();
  let ended = 0;
  void first!.then(() => ended++);
  void second!.then(() => ended++); // the failed adoption settles too: the waiter then finds the partition not served
  await settle();
  expect(ended).toBe(0);
  held.releaseAll();
  await scan;
  expect(ended).toBe(2);
  expect([node.adoptionOf('t', 0), node.adoptionOf('t', 1)]).toEqual([null, null]);
  node.stop();
});
