// Review of bd86748: [C1] "as a follower" says a broker flagged storageFailing follows nothing and
// "each partition's next live broker without the flag follows in its place". Only the stream
// tails' reads report unanswered reads, not a follow's rebuild (PartitionHost's own WalReader over
// the chain's sealed streams). So when the next broker is cut from the WAL store too, its follow
// fails in the rebuild on every scan, it reports nothing, is never flagged, and stays the
// partition's follower: acks=all stalls for as long as the cut lasts, though a healthy broker
// could follow. 5 brokers, RF 2, min.insync.replicas 2; the first leader is stopped so that the
// chain holds a sealed stream (any partition that ever changed leader).
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

setDefaultTimeout(90_000);

const LEASE_MS = 1000;
/** As test/cluster/follower-wal-store-cut.test.ts: far below replica.lag.time.max.ms (30 s). */
const RESUME_WITHIN_MS = 8 * LEASE_MS;

const root = mkdtempSync(join(tmpdir(), 'ferry-spare-cut-'));
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

test('when the next broker is cut from the WAL store too, a healthy one follows in place of the cut follower', async () => {
  const store = new MemoryStore();
  const views = [1, 2, 3, 4, 5].map(() => cuttableStore(store));
  const started = await Promise.all(views.map((view, i) => startBroker(store, view.store, i + 1)));
  await started[0]!.context.topology.createTopic('t', 1, 2);
  await until(() => started.some((b) => b.context.engine.leads('t', 0)), 'a broker to lead t/0');
  const first = started.find((b) => b.context.engine.leads('t', 0))!;
  await first.context.engine.produce('t', [{ value: 'in the first stream' }], { acks: 'all' });
  await first.stop(); // another takes over and seals its stream: the chain holds a sealed stream
  const live = started.filter((b) => b !== first);
  await until(() => live.some((b) => b.context.engine.leads('t', 0)), 'another broker to lead t/0');
  const leader = live.find((b) => b.context.engine.leads('t', 0))!;
  await until(() => live.some((b) => b !== leader && b.context.engine.serves('t', 0)), 'a broker to follow t/0');
  await leader.context.engine.produce('t', [{ value: 'before the cut' }], { acks: 'all' });
  // The live brokers after the leader by node id: the follower, the next one, then the rest.
  const ring = [...live.filter((b) => b.context.nodeId > leader.context.nodeId), ...live.filter((b) => b.context.nodeId < leader.context.nodeId)];
  const [follower, next] = ring;
  expect(follower!.context.engine.serves('t', 0)).toBe(true);

  views[follower!.context.nodeId - 1]!.cut = true;
  views[next!.context.nodeId - 1]!.cut = true; // a healthy fourth broker remains
  let acknowledged = false;
  let failed: unknown = null;
  const produceUntilAcked = async () => {
    for (const deadline = performance.now() + RESUME_WITHIN_MS; !acknowledged && performance.now() < deadline; ) {
      try {
        const left = Math.max(1, deadline - performance.now());
        await Promise.race([leader.context.engine.produce('t', [{ value: 'during the cut' }], { acks: 'all' }), Bun.sleep(left).then(() => Promise.reject(new Error('still waiting for acks=all')))]);
        acknowledged = true;
      } catch (error) {
        failed = error;
        await Bun.sleep(100);
      }
    }
  };
  await produceUntilAcked();
  const flagged = async (b: Broker) => recordSaysStorageFailing(store, b.context.nodeId);
  const state = {
    acknowledged,
    failed: acknowledged ? null : String(failed),
    followerFlagged: await flagged(follower!),
    nextFlagged: await flagged(next!),
    nextServes: next!.context.engine.serves('t', 0),
    healthyFollows: ring.slice(2).some((b) => b.context.engine.serves('t', 0)),
  };
  expect(state).toEqual({ acknowledged: true, failed: null, followerFlagged: true, nextFlagged: true, nextServes: false, healthyFollows: true });
});
