// Review of bd86748: a follower's read that went unanswered counts as a WAL store failure from
// when it was SENT, and only a write ends it; reads answered since count for nothing. A broker
// that only follows has no writes of its own, so one GET that hung for a lease and timed out,
// while every other request (reads before and after it, the probe) is answered, reports a
// failure already a lease long: the next renewal writes storageFailing unless the next scan's
// probe lands first. [C1] says a shorter outage moves nothing; here no outage at all flags a
// healthy follower, so its leaders' in-sync sets drop it and another broker starts following.
//
// Deterministic here: the control store's LIST of partition records is slowish (400 ms, a
// cluster with many partitions), and the hung GET gives up just after a scan's probe check, so
// a renewal (every lease / 3) comes before the next scan can probe.
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
const SCAN_MS = 100;
const LIST_MS = 400;
/** The one slow GET: hangs this long (over a lease), then times out. */
const HANG_MS = 1500;

const root = mkdtempSync(join(tmpdir(), 'ferry-one-slow-read-'));
const brokers: Broker[] = [];

afterAll(async () => {
  for (const broker of brokers) await broker.stop().catch(() => {});
  rmSync(root, { recursive: true, force: true });
});

/** Listeners told when a LIST of partition records by a given broker's control view has answered. */
const listed = new Map<number, (() => void)[]>();

function controlView(store: ObjectStore, nodeId: number): ObjectStore {
  return new Proxy(store, {
    get(target, name) {
      const value: unknown = Reflect.get(target, name, target);
      if (typeof value !== 'function') return value;
      if (name !== 'list') return value.bind(target);
      return async (prefix: string, ...rest: unknown[]) => {
        const answer = await (value as (...a: unknown[]) => Promise<unknown>).apply(target, [prefix, ...rest]);
        if (!prefix.includes('partitions/')) return answer;
        await Bun.sleep(LIST_MS);
        for (const wake of listed.get(nodeId)?.splice(0) ?? []) setTimeout(wake, 30); // just after this scan's probe check
        return answer;
      };
    },
  });
}

/** The WAL store as one broker reaches it: healthy, but one armed GET hangs, then times out. */
function walView(store: ObjectStore, nodeId: number): { store: ObjectStore; arm: () => void } {
  let armed = false;
  const view = new Proxy(store, {
    get(target, name) {
      const value: unknown = Reflect.get(target, name, target);
      if (typeof value !== 'function') return value;
      if (name !== 'get') return value.bind(target);
      return async (key: string, ...rest: unknown[]) => {
        if (!armed || !key.startsWith('wal/')) return (value as (...a: unknown[]) => Promise<unknown>).apply(target, [key, ...rest]);
        armed = false;
        await Bun.sleep(HANG_MS);
        await new Promise<void>((wake) => {
          const list = listed.get(nodeId) ?? [];
          list.push(wake);
          listed.set(nodeId, list);
        });
        throw new StoreError('Timeout', `GET ${key}: no answer (one slow request; the store is healthy)`, { key });
      };
    },
  });
  return { store: view, arm: () => (armed = true) };
}

async function storageFailing(store: MemoryStore, nodeId: number): Promise<boolean> {
  return (await new ControlStore(store, '').read<BrokerRecord>(`brokers/${nodeId}`))?.value.storageFailing === true;
}

test('one GET that hung and timed out, on an otherwise healthy store, does not flag a follower storageFailing', async () => {
  const control = new MemoryStore();
  const wal = new MemoryStore();
  const views = [1, 2, 3].map((nodeId) => walView(wal, nodeId));
  const started = await Promise.all(
    views.map((view, i) =>
      Broker.start({
        listenHost: '127.0.0.1',
        listenPort: 0,
        nodeId: i + 1,
        cluster: { store: controlView(control, i + 1), leaseMs: LEASE_MS, scanIntervalMs: SCAN_MS },
        engine: { directory: join(root, `broker-${i + 1}`), log: { flush: { kind: 'none' } }, wal: { store: view.store, writerId: `broker-${i + 1}`, config: { uploadIntervalMs: 1 } } },
      }),
    ),
  );
  brokers.push(...started);
  await started[0]!.context.topology.createTopic('t', 1, 2);
  await until(() => started.some((b) => b.context.engine.leads('t', 0)), 'a broker to lead t/0', 20_000);
  const leader = started.find((b) => b.context.engine.leads('t', 0))!;
  await until(() => started.some((b) => b !== leader && b.context.engine.serves('t', 0)), 'a broker to follow t/0', 20_000);
  const follower = started.find((b) => b !== leader && b.context.engine.serves('t', 0))!;
  expect(started.filter((b) => b.context.engine.leads('t', 0) || b === follower).length).toBe(2);
  await leader.context.engine.produce('t', [{ value: 'before' }], { acks: 'all' });

  views[follower.context.nodeId - 1]!.arm(); // its next WAL read hangs, then times out; all else is answered
  let flagged = false;
  for (const deadline = performance.now() + HANG_MS + 4 * LEASE_MS; !flagged && performance.now() < deadline; await Bun.sleep(10)) {
    flagged = await storageFailing(control, follower.context.nodeId);
  }
  expect(flagged).toBe(false);
});
