// docs/tier-protocol.md [D1] on a follower: local retention of a tiered topic deletes only segments
// wholly below the tier's end, as on the leader. Simulation seed 200858 (test/sim/found-bugs.test.ts):
// a follower applied retention.* to its whole log, tiered or not; promoted, it kept a log starting
// far above the tier's end, and acknowledged records between the two were served by no one.
import { afterAll, expect, setDefaultTimeout, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Broker } from '../../src/broker/broker.ts';
import { ControlStore } from '../../src/control/control-store.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import { until } from '../support/until.ts';

setDefaultTimeout(60_000);

/** Tier rounds, retention and WAL GC run only when the test says. */
const NEVER_MS = 3_600_000;
const RECORDS = 30;

const root = mkdtempSync(join(tmpdir(), 'ferry-follower-retention-'));
const brokers: Broker[] = [];

afterAll(async () => {
  for (const broker of brokers) await broker.stop().catch(() => {});
  rmSync(root, { recursive: true, force: true });
});

async function startBroker(store: MemoryStore, nodeId: number): Promise<Broker> {
  const broker = await Broker.start({
    listenHost: '127.0.0.1',
    listenPort: 0,
    nodeId,
    cluster: { store, leaseMs: 1000, scanIntervalMs: 50 },
    engine: {
      directory: join(root, `broker-${nodeId}`),
      log: { flush: { kind: 'none' }, segmentBytes: 2048, retentionBytes: 1 }, // local retention as retention: keep one segment
      wal: { store, writerId: `broker-${nodeId}`, config: { uploadIntervalMs: 1 } },
      tier: { store, control: new ControlStore(store, ''), intervalMs: NEVER_MS },
      walGcIntervalMs: NEVER_MS,
      retentionCheckIntervalMs: NEVER_MS,
    },
  });
  brokers.push(broker);
  return broker;
}

test('a follower of a tiered topic deletes no untiered segment, and promoted it serves every record', async () => {
  const store = new MemoryStore();
  for (const nodeId of [1, 2]) await startBroker(store, nodeId);
  await brokers[0]!.context.topology.createTopic('t', 1, 2);
  const leaderOf = () => brokers.find((b) => b.context.engine.leads('t', 0));
  await until(() => leaderOf() !== undefined && brokers.every((b) => b.context.engine.serves('t', 0)), 'a leader and a follower');
  const leader = leaderOf()!;
  const follower = brokers.find((b) => b !== leader)!.context.engine;
  for (let i = 0; i < RECORDS; i++) await leader.context.engine.produce('t', [{ value: `record ${i} `.padEnd(300, '.') }], { partition: 0, acks: 'all' });
  await until(() => follower.logEndOffset('t', 0) === RECORDS, 'the follower to apply everything');

  expect(follower.enforceRetention()).toBe(0); // nothing is tiered: retention.bytes 1 takes nothing
  expect(follower.localLogStartOffset('t', 0)).toBe(0);

  // The leader tiers part of the log; the follower deletes only below the tier's end, once it read it.
  await leader.context.engine.tierer!.tierDue();
  const tieredEnd = leader.context.engine.tierer!.tieredEndOf(leader.context.engine.topics()[0]!.id, 0)!;
  expect(tieredEnd).toBeGreaterThan(0);
  await until(() => follower.enforceRetention() > 0, 'the follower to read the tier end and delete below it', 15_000);
  expect(follower.localLogStartOffset('t', 0)).toBeGreaterThan(0);
  expect(follower.localLogStartOffset('t', 0)).toBeLessThanOrEqual(tieredEnd);

  brokers.splice(brokers.indexOf(leader), 1);
  await leader.stop(); // resigns: the follower is promoted at its next scan
  await until(() => follower.leads('t', 0), 'the promotion');
  const values: string[] = [];
  while (values.length < RECORDS) {
    const { batches } = await follower.fetchWithTier('t', 0, values.length, { maxBytes: 1 << 20 });
    expect(batches.length).toBeGreaterThan(0);
    for (const batch of batches) {
      [...batch.records()].forEach((record, i) => {
        if (batch.baseOffset + i === values.length) values.push(new TextDecoder().decode(record.value!).trim());
      });
    }
  }
  expect(values).toEqual(Array.from({ length: RECORDS }, (_, i) => `record ${i} `.padEnd(300, '.').trim()));
});
