// REVIEW of 4c85326 ([C1] storageFailing for the WAL store), tests by the reviewer. Each test
// names the finding it proves. The WAL-store flag is read off the *current* writer, and a writer
// that failed or was fenced reads 0, as does the new writer that replaces it (nothing uploaded
// yet): so a broker still cut from the WAL store drops its flag as soon as its writer is replaced,
// claims its partitions again, cannot seal for them, and holds them unserved for the whole cut.
import { afterAll, expect, setDefaultTimeout, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Broker } from '../../src/broker/broker.ts';
import type { BrokerRecord } from '../../src/cluster/control-records.ts';
import { ControlStore } from '../../src/control/control-store.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import type { ObjectStore } from '../../src/store/object-store.ts';
import { cuttableStore } from '../support/cuttable-store.ts';
import { until } from '../support/until.ts';

setDefaultTimeout(60_000);

const LEASE_MS = 1000;

const root = mkdtempSync(join(tmpdir(), 'ferry-wal-cut-review-'));
const brokers: Broker[] = [];

afterAll(async () => {
  for (const broker of brokers) await broker.stop().catch(() => {});
  rmSync(root, { recursive: true, force: true });
});

let nextDirectory = 0;
async function startBroker(control: ObjectStore, walStore: ObjectStore, nodeId: number): Promise<Broker> {
  const broker = await Broker.start({
    listenHost: '127.0.0.1',
    listenPort: 0,
    nodeId,
    cluster: { store: control, leaseMs: LEASE_MS, scanIntervalMs: 50 },
    engine: {
      directory: join(root, `broker-${nodeId}-${nextDirectory++}`),
      log: { flush: { kind: 'none' } },
      wal: { store: walStore, writerId: `broker-${nodeId}-${nextDirectory}`, config: { uploadIntervalMs: 1 } },
    },
  });
  brokers.push(broker);
  return broker;
}

async function storageFlag(store: MemoryStore, nodeId: number): Promise<boolean> {
  return (await new ControlStore(store, '').read<BrokerRecord>(`brokers/${nodeId}`))?.value.storageFailing === true;
}

// FINDING 1. The code's own comment names "revoked access" as a cut this flag is for, but a
// revoked credential answers AccessDenied, which is not retriable: the writer fails at once, so
// uploadsFailingForMs() is 0 (failed writer), then 0 again for each new epoch. The broker is never
// flagged; each new epoch re-claims its partition, whose seal of the old stream fails, so the
// partition is named to a broker that cannot serve it, and no one else takes it for the whole cut.
test('REVIEW finding 1: a leader whose WAL store access is revoked (AccessDenied) hands its partition over', async () => {
  const store = new MemoryStore();
  const view = cuttableStore(store, 'AccessDenied');
  const cutOff = await startBroker(store, view.store, 1);
  const other = await startBroker(store, store, 2);
  await cutOff.context.topology.createTopic('t', 2, 1);
  await until(() => [0, 1].some((p) => cutOff.context.engine.leads('t', p)), 'broker 1 to lead a partition');
  const partition = [0, 1].find((p) => cutOff.context.engine.leads('t', p))!;
  await cutOff.context.engine.produce('t', [{ value: 'acked' }], { partition, acks: 'all' });

  view.cut = true;
  await cutOff.context.engine.produce('t', [{ value: 'sent during the cut' }], { partition, acks: 'all' }).catch(() => {});
  // Broker 2 reaches the store: within a few leases it should lead the partition (or broker 1 say its storage fails).
  await until(() => other.context.engine.leads('t', partition), 'broker 2 to take the partition over', 8 * LEASE_MS).catch(() => {});
  const flagged = await storageFlag(store, 1);
  const leaders = [cutOff, other].filter((b) => b.context.engine.leads('t', partition)).length;
  view.cut = false;
  expect({ flagged, someoneServes: leaders === 1, otherLeads: other.context.engine.leads('t', partition) }).toEqual({ flagged: true, someoneServes: true, otherLeads: true });
});

/** The control store as one broker reaches it: its first compare-and-swap of `key` after `armed` waits `delayMs` (a slow request). */
function slowOnce(store: ObjectStore, delayMs: number): { store: ObjectStore; armedKey: string | null } {
  const view = { armedKey: null as string | null, store };
  view.store = new Proxy(store, {
    get(target, name) {
      const value: unknown = Reflect.get(target, name, target);
      if (typeof value !== 'function') return value;
      return async (...args: unknown[]) => {
        const [key, , options] = args as [string, unknown, { ifMatch?: string } | undefined];
        if (name === 'put' && view.armedKey !== null && key.endsWith(view.armedKey) && options?.ifMatch !== undefined) {
          view.armedKey = null;
          await Bun.sleep(delayMs);
        }
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return view;
}

// FINDING 2. A retriable cut (Unavailable), as in seed 224952: broker 1 is flagged and broker 2
// starts taking its partitions. As soon as broker 2's claim of ONE of them lands, broker 1's scan
// sees its stream sealed in that chain ([C7] #noteSealedStream) and starts a new writer epoch
// (which needs no WAL store request to succeed: retire() swallows the failed LIST). The new writer
// has uploaded nothing, so uploadsFailingForMs() is 0 and the very next renewal drops the flag
// while the cut goes on. Broker 1 then re-claims every partition still naming it (served was
// cleared) one epoch up, fails to seal its old stream (cut), and serves none of them; broker 2
// sees a live, unflagged leader and never takes them. The partition is down for the whole cut.
test('REVIEW finding 2: a cut-off leader whose writer is replaced mid-cut does not drop its flag and re-claim (and wedge) its partitions', async () => {
  const store = new MemoryStore();
  const view = cuttableStore(store, 'Unavailable');
  const slow = slowOnce(store, 3 * LEASE_MS);
  const cutOff = await startBroker(store, view.store, 11);
  const other = await startBroker(slow.store, store, 12);
  await cutOff.context.topology.createTopic('u', 4, 1);
  const ledBy = (b: Broker) => [0, 1, 2, 3].filter((p) => b.context.engine.leads('u', p));
  await until(() => ledBy(cutOff).length + ledBy(other).length === 4 && ledBy(cutOff).length >= 2, 'broker 11 to lead two partitions, broker 12 the rest');
  const [first, second] = ledBy(cutOff) as [number, number];
  await cutOff.context.engine.produce('u', [{ value: 'acked' }], { partition: first, acks: 'all' });

  view.cut = true;
  slow.armedKey = `partitions/u/${second}`; // broker 12's claim of the second partition is slow; of the first, not
  cutOff.context.engine.produce('u', [{ value: 'sent during the cut' }], { partition: first, acks: 'all' }).catch(() => {});
  await until(() => other.context.engine.leads('u', first), 'broker 12 to take the first partition over', 8 * LEASE_MS);
  // The cut goes on. Within a few more leases broker 12 should lead the second partition too.
  await until(() => other.context.engine.leads('u', second), 'broker 12 to take the second partition over', 8 * LEASE_MS).catch(() => {});
  const flagged = await storageFlag(store, 11);
  const stillCut = view.cut;
  view.cut = false;
  expect({ stillCut, flagged, otherLeadsSecond: other.context.engine.leads('u', second) }).toEqual({ stillCut: true, flagged: true, otherLeadsSecond: true });
});

/** The control store as one broker reaches it: while `stalled`, a LIST of partition records waits until it is not (a slow scan). */
function stallableScans(store: ObjectStore): { store: ObjectStore; stalled: boolean } {
  const view = { stalled: false, store };
  view.store = new Proxy(store, {
    get(target, name) {
      const value: unknown = Reflect.get(target, name, target);
      if (typeof value !== 'function') return value;
      return async (...args: unknown[]) => {
        if (name === 'list' && String(args[0]).includes('partitions/')) while (view.stalled) await Bun.sleep(5);
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return view;
}

// FINDING 3. A takeover used to need the old leader's lease to have lapsed in others' eyes, and the
// old leader stops acting as leader (acknowledging, serving reads as leader, L5) a safety margin
// before that. A takeover for the WAL-store flag happens while the flagged broker's lease is held,
// and nothing stops it acting as leader once it wrote the flag: until its next scan notices, it
// acknowledges acks=1 (its local log works; only the WAL store is cut) and serves reads as leader
// while the new leader acknowledges on the same partition. (The disk flag had the read hole too, but
// there a local append fails, so no acks=1 was acknowledged.)
test('REVIEW finding 3: a broker that flagged its WAL store as failing stops acting as leader once others may take over', async () => {
  const store = new MemoryStore();
  const view = cuttableStore(store, 'Unavailable');
  const scans = stallableScans(store);
  const cutOff = await startBroker(scans.store, view.store, 21);
  const other = await startBroker(store, store, 22);
  await cutOff.context.topology.createTopic('v', 2, 1);
  await until(() => [0, 1].some((p) => cutOff.context.engine.leads('v', p)), 'broker 21 to lead a partition');
  const partition = [0, 1].find((p) => cutOff.context.engine.leads('v', p))!;
  await cutOff.context.engine.produce('v', [{ value: 'acked' }], { partition, acks: 'all' });

  view.cut = true;
  scans.stalled = true; // broker 21's scans are slow (a long LIST); its renewals go on
  cutOff.context.engine.produce('v', [{ value: 'sent during the cut' }], { partition, acks: 'all' }).catch(() => {});
  await until(() => other.context.engine.leads('v', partition), 'broker 22 to take the partition over', 8 * LEASE_MS);
  await other.context.engine.produce('v', [{ value: 'after the takeover' }], { partition, acks: 'all' });
  const newHighWatermark = (await other.context.engine.fetchWithTier('v', partition, 0, { maxBytes: 1 << 20 })).highWatermark;

  const acks1 = await cutOff.context.engine.produce('v', [{ value: 'acks=1 at the flagged broker' }], { partition, acks: 1 }).then(
    () => 'acknowledged',
    () => 'refused',
  );
  const read = await cutOff.context.engine.fetchWithTier('v', partition, 0, { maxBytes: 1 << 20 }).then(
    (r) => `served as leader, high watermark ${r.highWatermark} (the new leader's: ${newHighWatermark})`,
    () => 'refused',
  );
  scans.stalled = false;
  view.cut = false;
  expect({ acks1, read }).toEqual({ acks1: 'refused', read: 'refused' });
});

// HELD (coverage; on 4c85326 too): a whole-store outage flags every broker, so no one claims; once
// the store returns every partition is led by one broker again, acks=all resume on each, and a
// produce held during the outage is in the log exactly once if it was acknowledged.
test('REVIEW held: after a WAL outage of every broker, every partition comes back and an acknowledged produce is kept once', async () => {
  const store = new MemoryStore();
  const view = cuttableStore(store, 'Unavailable');
  const a = await startBroker(store, view.store, 31);
  const b = await startBroker(store, view.store, 32);
  await a.context.topology.createTopic('w', 4, 1);
  const leader = (p: number) => [a, b].filter((x) => x.context.engine.leads('w', p));
  await until(() => [0, 1, 2, 3].every((p) => leader(p).length === 1), 'every partition to be led');
  view.cut = true;
  const held = [0, 1, 2, 3].map((p) =>
    leader(p)[0]!
      .context.engine.produce('w', [{ value: `held ${p}` }], { partition: p, acks: 'all' })
      .then(
        () => true,
        () => false,
      ),
  );
  await Bun.sleep(3 * LEASE_MS);
  expect(await storageFlag(store, 31)).toBe(true);
  view.cut = false;
  const acked = await Promise.all(held);
  await until(() => [0, 1, 2, 3].every((p) => leader(p).length === 1), 'every partition to be led again', 10 * LEASE_MS);
  for (let p = 0; p < 4; p++) {
    let done = false;
    // A flagged broker acts as leader again only after a renewal without the flag and a scan: retried for a while.
    for (let attempt = 0; !done && attempt < 200; attempt++) {
      done = await leader(p)[0]!
        .context.engine.produce('w', [{ value: `after ${p}` }], { partition: p, acks: 'all' })
        .then(
          () => true,
          () => false,
        );
      if (!done) await Bun.sleep(50);
    }
    expect(done).toBe(true);
    const { batches } = await leader(p)[0]!.context.engine.fetchWithTier('w', p, 0, { maxBytes: 1 << 20 });
    const values = batches.flatMap((batch) => [...batch.records()].map((r) => new TextDecoder().decode(r.value!)));
    const heldCount = values.filter((v) => v === `held ${p}`).length;
    expect(acked[p] ? heldCount === 1 : heldCount <= 1).toBe(true);
  }
});
