// DeleteRecords in a cluster: the leader records the new log start in the partition record before
// it moves its own log, so a takeover (a broker on an empty disk, rebuilding from the WAL chain and
// the tier) serves nothing below it again; a broker that does not lead the partition refuses.
import { afterEach, expect, setDefaultTimeout, test } from 'bun:test';
import { Broker } from '../../src/broker/broker.ts';
import { ControlStore } from '../../src/control/control-store.ts';
import type { PartitionRecord } from '../../src/cluster/control-records.ts';
import { isFerryError } from '../../src/errors.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import type { ObjectStore } from '../../src/store/object-store.ts';
import { startTieredBroker } from '../support/tiered-brokers.ts';
import { tempDir } from '../support/temp-dir.ts';
import { until } from '../support/until.ts';

setDefaultTimeout(60_000);

const EARLIEST = -2;
const running: Broker[] = [];
afterEach(async () => {
  for (const broker of running.splice(0)) await broker.stop().catch(() => {});
});

/** A cluster broker without a tier: a takeover rebuilds the whole log from the WAL chain. */
async function startUntiered(store: ObjectStore, nodeId: number): Promise<Broker> {
  const broker = await Broker.start({
    listenHost: '127.0.0.1',
    listenPort: 0,
    nodeId,
    cluster: { store, leaseMs: 1000, scanIntervalMs: 50 },
    engine: { directory: tempDir(), log: { flush: { kind: 'none' }, segmentBytes: 2048 }, wal: { store, writerId: `broker-${nodeId}`, config: { uploadIntervalMs: 1 } } },
  });
  running.push(broker);
  return broker;
}

async function leaderWithRecords(start: (nodeId: number) => Promise<Broker>): Promise<Broker> {
  const first = await start(1);
  await first.context.topology.createTopic('t', 1);
  await until(() => first.context.engine.leads('t', 0), 'the first adoption');
  for (let i = 0; i < 30; i++) await first.context.engine.produce('t', [{ value: `record ${i} `.padEnd(200, '.') }], { partition: 0, acks: 'all' });
  return first;
}

async function stop(broker: Broker): Promise<void> {
  await broker.stop(); // its lease is resigned: another broker takes over at once
  running.splice(running.indexOf(broker), 1);
}

async function outOfRange(read: () => unknown): Promise<boolean> {
  try {
    await read();
  } catch (error) {
    return isFerryError(error, 'OffsetOutOfRange');
  }
  return false;
}

const STARTS: Record<string, (store: ObjectStore, nodeId: number) => Promise<Broker>> = {
  'without a tier': startUntiered,
  'with a tier': (store, nodeId) => startTieredBroker(store, nodeId, running),
};

for (const [mode, startIn] of Object.entries(STARTS)) {
  test(`${mode}: a takeover on an empty disk starts at the log start DeleteRecords set, and serves nothing below it`, async () => {
    const store = new MemoryStore();
    const start = (nodeId: number) => startIn(store, nodeId);
    const first = await leaderWithRecords(start);
    if (mode === 'with a tier') while ((await first.context.engine.tierer!.tierDue()) > 0); // the tier holds the deleted records too
    expect(await first.context.topology.deleteRecords('t', 0, 12)).toBe(12);
    expect(await outOfRange(() => first.context.engine.fetchWithTier('t', 0, 11))).toBe(true);
    const record = await new ControlStore(store, '').read<PartitionRecord>('partitions/t/0');
    expect(record!.value.logStartOffset).toBe(12);
    await stop(first);

    const second = await start(2);
    await until(() => second.context.engine.leads('t', 0), 'the takeover');
    const engine = second.context.engine;
    expect((await engine.offsetForWithTier('t', 0, EARLIEST)).offset).toBe(12);
    expect(engine.offsetFor('t', 0, -1).offset).toBe(30);
    expect(await outOfRange(() => engine.fetchWithTier('t', 0, 0))).toBe(true);
    expect(await outOfRange(() => engine.fetchWithTier('t', 0, 11))).toBe(true);
    const read = await engine.fetchWithTier('t', 0, 12);
    expect(read.logStartOffset).toBe(12);
    expect(read.batches[0]!.baseOffset).toBe(12);
    // ...and the next takeover (a claim of the claim) carries it on.
    expect((await new ControlStore(store, '').read<PartitionRecord>('partitions/t/0'))!.value).toMatchObject({ leader: 2, leaderEpoch: 1, logStartOffset: 12 });
  });
}

test('the broker that does not lead the partition answers NotLeader, and nothing changes', async () => {
  const store = new MemoryStore();
  const first = await leaderWithRecords((nodeId) => startUntiered(store, nodeId));
  const second = await startUntiered(store, 2);
  await until(() => second.context.topology.topics().get('t') === 1, 'the second broker sees the topic');
  let kind: string | null = null;
  try {
    await second.context.topology.deleteRecords('t', 0, 5);
  } catch (error) {
    kind = isFerryError(error) ? error.kind : null;
  }
  expect(kind).toBe('NotLeader');
  expect(first.context.engine.offsetFor('t', 0, EARLIEST).offset).toBe(0);
  expect((await new ControlStore(store, '').read<PartitionRecord>('partitions/t/0'))!.value.logStartOffset).toBeUndefined();
});

test('a follower learns the log start at its next scan, and keeps it when it is promoted', async () => {
  const store = new MemoryStore();
  const brokers = [await startUntiered(store, 1), await startUntiered(store, 2)];
  await brokers[0]!.context.topology.createTopic('t', 1, 2);
  await until(() => brokers.some((b) => b.context.engine.leads('t', 0)) && brokers.every((b) => b.context.engine.serves('t', 0)), 'a leader and a follower');
  const leader = brokers.find((b) => b.context.engine.leads('t', 0))!;
  const follower = brokers.find((b) => b !== leader)!;
  for (let i = 0; i < 30; i++) await leader.context.engine.produce('t', [{ value: `record ${i} `.padEnd(200, '.') }], { partition: 0, acks: 'all' });
  expect(await leader.context.topology.deleteRecords('t', 0, 12)).toBe(12);
  await until(() => follower.context.engine.offsetFor('t', 0, EARLIEST).offset === 12, "the follower's log start");
  expect(await outOfRange(() => follower.context.engine.fetchWithTier('t', 0, 11))).toBe(true);
  await stop(leader);
  await until(() => follower.context.engine.leads('t', 0), 'the promotion');
  expect(follower.context.engine.offsetFor('t', 0, EARLIEST).offset).toBe(12);
  expect(follower.context.engine.offsetFor('t', 0, -1).offset).toBe(30);
});
