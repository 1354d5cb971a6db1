// Review of 744e0aa ([C1] storageFailing, "as a follower"): reportingReads counts a throttle
// (Throttled: S3's 503 SlowDown / ServiceUnavailable, what a store that is down answers) and an
// AccessDenied (revoked access, which [C1] itself names as a cut) as answers, so a follower whose
// every read is refused that way starts no read failure, never probes (recheck runs only while
// something fails), and is never flagged: it stays in its leaders' replica sets, following
// nothing, and acks=all waits replica.lag.time.max.ms (30 s) for it, as before bd86748 (seed
// 279570). The write track counts the very same refusals of an upload as failures. As
// test/cluster/follower-wal-store-cut.test.ts, with the cut answering instead of timing out.
import { afterAll, expect, setDefaultTimeout, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Broker } from '../../src/broker/broker.ts';
import type { StoreErrorKind } from '../../src/store/errors.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import type { ObjectStore } from '../../src/store/object-store.ts';
import { cuttableStore } from '../support/cuttable-store.ts';
import { until } from '../support/until.ts';
import { recordSaysStorageFailing, startWalCutBroker } from '../support/wal-cut-broker.ts';

setDefaultTimeout(90_000);

const LEASE_MS = 1000;
/** As follower-wal-store-cut: far below replica.lag.time.max.ms (30 s). */
const RESUME_WITHIN_MS = 8 * LEASE_MS;

const root = mkdtempSync(join(tmpdir(), 'ferry-follower-refused-'));
const brokers: Broker[] = [];

afterAll(async () => {
  for (const broker of brokers) await broker.stop().catch(() => {});
  rmSync(root, { recursive: true, force: true });
});

async function startBroker(control: MemoryStore, walStore: ObjectStore, nodeId: number, tag: string): Promise<Broker> {
  const broker = await startWalCutBroker(join(root, tag), control, walStore, nodeId, { minInsyncReplicas: 2 });
  brokers.push(broker);
  return broker;
}

for (const kind of ['AccessDenied', 'Throttled'] as StoreErrorKind[]) {
  test(`a follower whose every WAL store request is refused with ${kind} steps out of the replica set, and acks=all goes on without it`, async () => {
    const store = new MemoryStore();
    const views = [1, 2, 3, 4].map(() => cuttableStore(store, kind));
    const started = await Promise.all(views.map((view, i) => startBroker(store, view.store, i + 1, kind)));
    await started[0]!.context.topology.createTopic('t', 1, 3);
    await until(() => started.some((b) => b.context.engine.leads('t', 0)), 'a broker to lead t/0');
    const leader = started.find((b) => b.context.engine.leads('t', 0))!;
    const follow = () => started.filter((b) => b !== leader && b.context.engine.serves('t', 0));
    await until(() => follow().length === 2, 'two brokers to follow t/0');
    await leader.context.engine.produce('t', [{ value: 'before the cut' }], { acks: 'all' });
    const cutOff = follow()[0]!;

    views[cutOff.context.nodeId - 1]!.cut = true;
    let acknowledged = false;
    void leader.context.engine.produce('t', [{ value: 'during the cut' }], { acks: 'all' }).then(
      () => (acknowledged = true),
      () => {},
    );
    let flagged = false;
    for (const deadline = performance.now() + RESUME_WITHIN_MS; !(flagged && acknowledged) && performance.now() < deadline; await Bun.sleep(LEASE_MS / 10)) {
      flagged = await recordSaysStorageFailing(store, cutOff.context.nodeId);
    }
    for (const broker of started) await broker.stop().catch(() => {});
    expect({ flagged, acknowledged }).toEqual({ flagged: true, acknowledged: true });
  });
}
