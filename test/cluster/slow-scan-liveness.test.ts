// [C1] Others' liveness is judged by whether their record changed within their lease, on the
// scanning broker's clock. A scan reads the broker records first and the partition records after;
// when that second read is slow (a long LIST under load), the judgement must still be of what the
// broker records said when read: a broker that renewed all along must not look dead because the
// scanner took long to get to its verdict.
import { expect, test } from 'bun:test';
import { ControlStore } from '../../src/control/control-store.ts';
import type { PartitionRecord } from '../../src/cluster/control-records.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import type { ListOptions, ListPage, ObjectStore } from '../../src/store/object-store.ts';
import { ManualClock } from '../../src/util/clock.ts';
import { servedHooks, testClusterNode } from '../support/cluster-node.ts';
import { settle, settleUntil } from '../support/settle.ts';

const LEASE_MS = 1000;

function node(store: ObjectStore, clock: ManualClock, nodeId: number, served: Map<string, number>) {
  const { adopt, release } = servedHooks(served, nodeId); // nothing is forgotten here: no topic is deleted
  return testClusterNode({
    store,
    clock,
    nodeId,
    self: { leaseMs: LEASE_MS },
    scanIntervalMs: 100_000, // scans only when the test says
    adopt,
    release,
  });
}

test('a scan whose partition LIST is slow does not take over a broker that renewed all along', async () => {
  const inner = new MemoryStore();
  const clock = new ManualClock();
  let slow = false;
  let listing = false;
  let answer!: () => void;
  const list = async (prefix: string, options?: ListOptions): Promise<ListPage> => {
    if (slow && prefix === 'c/control/partitions/') {
      slow = false;
      listing = true;
      await new Promise<void>((resolve) => (answer = resolve));
    }
    return inner.list(prefix, options);
  };
  const slowStore = new Proxy(inner, {
    get: (target, name) => (name === 'list' ? list : typeof Reflect.get(target, name) === 'function' ? Reflect.get(target, name).bind(target) : Reflect.get(target, name)),
  }) as ObjectStore;
  const served = new Map<string, number>();
  const a = node(slowStore, clock, 1, served);
  const b = node(inner, clock, 2, served);
  await a.start();
  await b.start();
  await b.createTopic('t', 2);
  await b.scan(); // b claims its fair share: one of two
  await a.scan(); // a the other, and sees b's current record
  await b.scan();
  expect([...served.values()].sort()).toEqual([1, 2]);
  const ofB = [...served].find(([, n]) => n === 2)![0];
  slow = true;
  const scanning = a.scan(); // reads the broker records, then waits on the partition LIST
  await settleUntil(() => listing, 'the slow LIST');
  for (let elapsed = 0; elapsed < 1.5 * LEASE_MS; elapsed += 50) {
    clock.advance(50); // b renews every lease / 3 all the while (so does a)
    await settle();
  }
  answer();
  await scanning;
  expect(served.get(ofB)).toBe(2); // nothing taken from a broker that never stopped renewing
  const record = (await new ControlStore(inner, 'c').read<PartitionRecord>(`partitions/${ofB}`))!.value;
  expect(record.leader).toBe(2);
  a.stop();
  b.stop();
});
