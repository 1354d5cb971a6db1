// docs/cluster-protocol.md [C1] storageFailing, as a follower: a follower cut from the WAL store but
// not from the control store keeps its lease, so its leaders' in-sync sets kept it for
// replica.lag.time.max.ms (30 s), and acks=all on their partitions waited for it all that time.
// Simulation seed 279570 (test/sim/found-bugs.test.ts): RF 3, min.insync.replicas 2, a follower
// that led nothing cut for 7 s, every acks=all of its leader timing out meanwhile. Now its reads
// that go unanswered for a lease flag its record, it follows nothing, and the next broker follows
// in its place.
import { afterAll, expect, setDefaultTimeout, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Broker } from '../../src/broker/broker.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import type { ObjectStore } from '../../src/store/object-store.ts';
import { cuttableStore } from '../support/cuttable-store.ts';
import { until } from '../support/until.ts';
import { recordSaysStorageFailing, startWalCutBroker } from '../support/wal-cut-broker.ts';

setDefaultTimeout(60_000);

const LEASE_MS = 1000;
/** Far below replica.lag.time.max.ms (30 s): acks=all must not wait for the cut follower's lag to run out. */
const RESUME_WITHIN_MS = 8 * LEASE_MS;

const root = mkdtempSync(join(tmpdir(), 'ferry-follower-cut-'));
const brokers: Broker[] = [];

afterAll(async () => {
  for (const broker of brokers) await broker.stop().catch(() => {});
  rmSync(root, { recursive: true, force: true });
});

async function startBroker(store: MemoryStore, walStore: ObjectStore, nodeId: number): Promise<Broker> {
  const broker = await startWalCutBroker(root, store, walStore, nodeId, { minInsyncReplicas: 2 });
  brokers.push(broker);
  return broker;
}

test('a follower cut from the WAL store steps out of the replica set within leases, and acks=all goes on without it', async () => {
  const store = new MemoryStore();
  const views = [1, 2, 3, 4].map(() => cuttableStore(store));
  const started = await Promise.all(views.map((view, i) => startBroker(store, view.store, i + 1)));
  await started[0]!.context.topology.createTopic('t', 1, 3);
  await until(() => started.some((b) => b.context.engine.leads('t', 0)), 'a broker to lead t/0');
  const leader = started.find((b) => b.context.engine.leads('t', 0))!;
  const follow = () => started.filter((b) => b !== leader && b.context.engine.serves('t', 0));
  await until(() => follow().length === 2, 'two brokers to follow t/0');
  await leader.context.engine.produce('t', [{ value: 'before the cut' }], { acks: 'all' });
  // Both followers in the leader's in-sync set before the cut: a follower that had not joined it
  // yet would not hold acks=all back, and its cut would show nothing (a full run met that).
  const inSync = (follower: Broker) => (leader.context.engine.inSyncReplicaEnd('t', 0, `broker-${follower.context.nodeId}`) ?? -1) >= 1;
  await until(() => follow().length === 2 && follow().every(inSync), 'both followers in sync at the record before the cut');
  const cutOff = follow()[0]!;
  const spare = started.find((b) => b !== leader && !follow().includes(b))!;

  views[cutOff.context.nodeId - 1]!.cut = true;
  let acknowledged = false;
  void leader.context.engine.produce('t', [{ value: 'during the cut' }], { acks: 'all' }).then(() => (acknowledged = true));
  await until(() => acknowledged, 'acks=all to go on without the cut-off follower', RESUME_WITHIN_MS);
  expect(await recordSaysStorageFailing(store, cutOff.context.nodeId)).toBe(true); // its reads went unanswered: it says its storage fails
  await until(() => spare.context.engine.serves('t', 0), 'the spare broker to follow in its place', RESUME_WITHIN_MS);
  await until(() => !cutOff.context.engine.serves('t', 0), 'the cut-off broker to stop following', RESUME_WITHIN_MS);

  views[cutOff.context.nodeId - 1]!.cut = false; // its probe lands: the flag drops, and it follows again
  let flagged = true;
  for (const deadline = performance.now() + 10 * LEASE_MS; flagged && performance.now() < deadline; await Bun.sleep(LEASE_MS / 10)) {
    flagged = await recordSaysStorageFailing(store, cutOff.context.nodeId);
  }
  expect(flagged).toBe(false); // the flag drops once the store answers
  await until(() => cutOff.context.engine.serves('t', 0), 'the healed broker to follow again', 10 * LEASE_MS);
});
