// Review of 744e0aa ([C1] storageFailing, "as a follower"): a landed write ends a read failure,
// and a broker that only follows writes nothing but the probe that the read failure itself
// starts at the next scan. So a follower whose every GET, HEAD and LIST of the WAL store goes
// unanswered while its tiny probe PUT lands (a cut of the read path only: a GET path or a
// blackholed large response, while a small request goes through) has its read failure ended
// every scan, one scan long at most, and is never flagged: it cannot follow, stays in its
// leaders' replica sets, no other broker follows in its place, and acks=all waits for
// replica.lag.time.max.ms (30 s). The probe proves the store takes writes; it says nothing of
// whether this follower can read its leaders' streams.
import { afterAll, expect, setDefaultTimeout, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Broker } from '../../src/broker/broker.ts';
import { ControlStore } from '../../src/control/control-store.ts';
import type { BrokerRecord } from '../../src/cluster/control-records.ts';
import { StoreError } from '../../src/store/errors.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import type { ObjectStore } from '../../src/store/object-store.ts';
import { until } from '../support/until.ts';

setDefaultTimeout(60_000);

const LEASE_MS = 1000;
const RESUME_WITHIN_MS = 8 * LEASE_MS;

const root = mkdtempSync(join(tmpdir(), 'ferry-follower-read-cut-'));
const brokers: Broker[] = [];

afterAll(async () => {
  for (const broker of brokers) await broker.stop().catch(() => {});
  rmSync(root, { recursive: true, force: true });
});

/** The WAL store as one broker reaches it: while `readsCut`, every GET, HEAD and LIST goes unanswered; writes go through. */
function readCuttable(store: ObjectStore): { store: ObjectStore; readsCut: boolean } {
  const view = { readsCut: false, store };
  view.store = new Proxy(store, {
    get(target, name) {
      const value: unknown = Reflect.get(target, name, target);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        if (view.readsCut && (name === 'get' || name === 'head' || name === 'list')) return Promise.reject(new StoreError('Timeout', `injected: ${String(name)} unanswered`));
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return view;
}

async function storageFailing(store: MemoryStore, nodeId: number): Promise<boolean> {
  return (await new ControlStore(store, '').read<BrokerRecord>(`brokers/${nodeId}`))?.value.storageFailing === true;
}

test('a follower that cannot read the WAL store steps out of the replica set even though its probe write lands', async () => {
  const store = new MemoryStore();
  const views = [1, 2, 3, 4].map(() => readCuttable(store));
  const started = await Promise.all(
    views.map((view, i) =>
      Broker.start({
        listenHost: '127.0.0.1',
        listenPort: 0,
        nodeId: i + 1,
        minInsyncReplicas: 2,
        cluster: { store, leaseMs: LEASE_MS, scanIntervalMs: 50 },
        engine: { directory: join(root, `broker-${i + 1}`), log: { flush: { kind: 'none' } }, wal: { store: view.store, writerId: `broker-${i + 1}`, config: { uploadIntervalMs: 1 } } },
      }),
    ),
  );
  brokers.push(...started);
  await started[0]!.context.topology.createTopic('t', 1, 3);
  await until(() => started.some((b) => b.context.engine.leads('t', 0)), 'a broker to lead t/0');
  const leader = started.find((b) => b.context.engine.leads('t', 0))!;
  const follow = () => started.filter((b) => b !== leader && b.context.engine.serves('t', 0));
  await until(() => follow().length === 2, 'two brokers to follow t/0');
  await leader.context.engine.produce('t', [{ value: 'before the cut' }], { acks: 'all' });
  const cutOff = follow()[0]!;

  views[cutOff.context.nodeId - 1]!.readsCut = true;
  let acknowledged = false;
  void leader.context.engine.produce('t', [{ value: 'during the cut' }], { acks: 'all' }).then(
    () => (acknowledged = true),
    () => {},
  );
  let flagged = false;
  for (const deadline = performance.now() + RESUME_WITHIN_MS; !(flagged && acknowledged) && performance.now() < deadline; await Bun.sleep(LEASE_MS / 10)) {
    flagged ||= await storageFailing(store, cutOff.context.nodeId);
  }
  for (const broker of started) await broker.stop().catch(() => {});
  expect({ flagged, acknowledged }).toEqual({ flagged: true, acknowledged: true });
});
