// Cluster brokers in one process on one memory store (docs/cluster-protocol.md): every adoption
// compare-and-swaps the broker's current stream into the chain [C3], a fenced writer is replaced
// by a new epoch [C7], a broker whose lease may have lapsed acknowledges nothing [C1], and
// Metadata reads a topic's record before answering [C2].
import { afterEach, expect, setDefaultTimeout, test } from 'bun:test';
import { Broker } from '../../src/broker/broker.ts';
import { handleMetadata } from '../../src/broker/handlers/metadata.ts';
import { ControlStore } from '../../src/control/control-store.ts';
import type { BrokerRecord, PartitionRecord } from '../../src/cluster/control-records.ts';
import { isFerryError } from '../../src/errors.ts';
import type { ObjectStore } from '../../src/store/object-store.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import { sealStream } from '../../src/wal/seal.ts';
import { GatedStore } from '../support/gated-store.ts';
import { tempDir } from '../support/temp-dir.ts';
import { metadataRequest } from '../support/requests.ts';

setDefaultTimeout(60_000);

const running: Broker[] = [];
afterEach(async () => {
  for (const broker of running.splice(0)) await broker.stop().catch(() => {});
});

async function start(store: ObjectStore, directory: string, nodeId = 1, options: { leaseMs?: number; scanIntervalMs?: number } = {}): Promise<Broker> {
  const broker = await Broker.start({
    listenHost: '127.0.0.1',
    listenPort: 0,
    nodeId,
    cluster: { store, leaseMs: options.leaseMs ?? 1000, scanIntervalMs: options.scanIntervalMs ?? 50 },
    engine: { directory, log: { flush: { kind: 'none' } }, wal: { store, writerId: `broker-${nodeId}`, config: { uploadIntervalMs: 1 } } },
  });
  running.push(broker);
  return broker;
}

async function stop(broker: Broker): Promise<void> {
  running.splice(running.indexOf(broker), 1);
  await broker.stop();
}

/** Waits for a condition the brokers reach by themselves (bounded: a stuck broker fails the test). */
async function until(condition: () => boolean | Promise<boolean>, what: string): Promise<void> {
  const deadline = performance.now() + 20_000;
  while (!(await condition())) {
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(10);
  }
}

function values(broker: Broker, topic: string, partition: number): string[] {
  return broker.context.engine.fetch(topic, partition, 0).batches.flatMap((batch) => [...batch.records()].map((r) => new TextDecoder().decode(r.value!)));
}

const partitionRecord = async (store: ObjectStore, id: string) => (await new ControlStore(store, '').read<PartitionRecord>(`partitions/${id}`))!.value;

test('a restarted broker still named leader adds its new stream to the chain: what it acknowledged survives the next restart (finding 3)', async () => {
  const store = new MemoryStore();
  const directory = tempDir();
  let broker = await start(store, directory);
  await broker.context.topology.createTopic('t', 1);
  await until(() => broker.context.engine.serves('t', 0), 'the first adoption');
  await broker.context.engine.produce('t', [{ value: 'epoch-0' }], { partition: 0, acks: 'all' });
  await stop(broker);
  broker = await start(store, directory);
  await until(() => broker.context.engine.serves('t', 0), 'the adoption after a restart');
  await broker.context.engine.produce('t', [{ value: 'epoch-1' }], { partition: 0, acks: 'all' });
  const record = await partitionRecord(store, 't/0');
  expect(record.chain.map((s) => s.epoch)).toEqual([0, 1]);
  expect(record.leaderEpoch).toBe(1);
  await stop(broker);
  broker = await start(store, directory);
  await until(() => broker.context.engine.serves('t', 0), 'the adoption after a second restart');
  expect(values(broker, 't', 0)).toEqual(['epoch-0', 'epoch-1']);
  expect(broker.context.engine.leaderEpoch('t', 0)).toBe(2);
});

test('a fenced writer is replaced by a new epoch: the broker serves on, keeps what was durable, acknowledges nothing of the lost suffix (finding 8)', async () => {
  const store = new MemoryStore();
  const broker = await start(store, tempDir());
  const engine = broker.context.engine;
  await broker.context.topology.createTopic('t', 2);
  await until(() => engine.serves('t', 0) && engine.serves('t', 1), 'adoption');
  await engine.produce('t', [{ value: 'kept' }], { partition: 0, acks: 'all' });
  const fenced = engine.wal!.config.stream;
  await sealStream(store, '', fenced, { writerId: 'intruder', nowMs: Date.now() }); // as a successor would
  let rejected: unknown;
  await engine.produce('t', [{ value: 'lost' }], { partition: 0, acks: 'all' }).catch((error: unknown) => (rejected = error));
  expect(isFerryError(rejected, 'Fenced') || isFerryError(rejected, 'NotLeader')).toBe(true);
  let acknowledged = false;
  await until(async () => {
    acknowledged = await engine.produce('t', [{ value: 'after' }], { partition: 0, acks: 'all' }).then(
      () => true,
      () => false,
    );
    return acknowledged;
  }, 'a produce acknowledged after the new epoch');
  expect(engine.wal!.config.stream.epoch).toBeGreaterThan(fenced.epoch);
  expect(values(broker, 't', 0)).toEqual(['kept', 'after']);
  const record = await partitionRecord(store, 't/0');
  expect(record.chain).toEqual([fenced, engine.wal!.config.stream]);
  const published = (await new ControlStore(store, '').read<BrokerRecord>('brokers/1'))!.value;
  expect(published.stream).toEqual(engine.wal!.config.stream);
  await until(() => engine.serves('t', 1), 'the other partition re-adopted');
  await engine.produce('t', [{ value: 'p1' }], { partition: 1, acks: 'all' });
});

test('a broker whose lease renewals fail stops acknowledging before its lease ends, and goes on once renewed (finding 9)', async () => {
  const gated = new GatedStore();
  const leaseMs = 600;
  const broker = await start(gated.store, tempDir(), 1, { leaseMs });
  const engine = broker.context.engine;
  await broker.context.topology.createTopic('t', 1);
  await until(() => engine.serves('t', 0), 'adoption');
  await engine.produce('t', [{ value: 'before' }], { partition: 0, acks: 'all' });
  // A write whose WAL object is held, while renewals start failing: its durability comes after the lease is gone.
  gated.hold('wal/');
  const waiting = engine.produce('t', [{ value: 'late' }], { partition: 0, acks: 'all' }).then(
    () => 'acknowledged',
    (error: unknown) => error,
  );
  gated.fail('control/brokers/');
  // (How soon, to the millisecond, is Lease's own test on a manual clock.)
  await until(
    async () =>
      await engine.produce('t', [{ value: 'refused' }], { partition: 0, acks: 1 }).then(
        () => false,
        (error: unknown) => isFerryError(error, 'NotLeader'),
      ),
    'new produces refused',
  );
  gated.release('wal/');
  const outcome = await waiting;
  expect(isFerryError(outcome, 'NotLeader')).toBe(true); // durable, but never acknowledged
  gated.heal('control/brokers/');
  await until(
    async () =>
      await engine.produce('t', [{ value: 'renewed' }], { partition: 0, acks: 'all' }).then(
        () => true,
        () => false,
      ),
    'acknowledgements after the renewal',
  );
});

test('Metadata from a broker that has not scanned a new topic yet reads its record: the real partition count (finding 19)', async () => {
  const store = new MemoryStore();
  const a = await start(store, tempDir(), 1);
  const b = await start(store, tempDir(), 2, { scanIntervalMs: 60_000 });
  expect(await a.context.topology.createTopic('fresh', 3)).toBe(true);
  const response = await handleMetadata(
    b.context,
    metadataRequest({ topics: [{ name: 'fresh' }], allowAutoTopicCreation: true, includeClusterAuthorizedOperations: false, includeTopicAuthorizedOperations: false }),
    12,
  );
  expect(response.topics[0]!.partitions.length).toBe(3);
  // CreateTopics that loses to an existing record learns its count as well.
  expect(await b.context.topology.createTopic('fresh', 1)).toBe(false);
  expect(b.context.topology.topics().get('fresh')).toBe(3);
});

test('a broker that re-claims a partition it lost rebuilds from its own earlier stream too: A0, B0 and on (finding 4)', async () => {
  const gated = new GatedStore();
  const a = await start(gated.store, tempDir(), 1, { leaseMs: 600 });
  await a.context.topology.createTopic('t', 1);
  await until(() => a.context.engine.serves('t', 0), 'a leads');
  await a.context.engine.produce('t', [{ value: 'a1' }, { value: 'a2' }], { partition: 0, acks: 'all' });
  const b = await start(gated.store, tempDir(), 2, { leaseMs: 600 });
  gated.fail('control/brokers/1'); // a's lease runs out (as if it were paused); b takes over
  await until(() => b.context.engine.serves('t', 0), 'b takes over');
  await b.context.engine.produce('t', [{ value: 'b1' }], { partition: 0, acks: 'all' });
  gated.heal('control/brokers/1');
  await until(() => !a.context.engine.serves('t', 0), 'a lets go');
  await stop(b); // b resigns: the partition is up for grabs again, and a claims it back
  await until(() => a.context.engine.serves('t', 0), 'a leads again');
  expect(values(a, 't', 0)).toEqual(['a1', 'a2', 'b1']);
  const record = await partitionRecord(gated.inner, 't/0');
  expect(record.chain.map((s) => `${s.writerId}/${s.epoch}`)).toEqual(['broker-1/0', 'broker-2/0', 'broker-1/1']); // a's sealed epoch 0 gave way to epoch 1
  await a.context.engine.produce('t', [{ value: 'a3' }], { partition: 0, acks: 'all' });
  expect(values(a, 't', 0)).toEqual(['a1', 'a2', 'b1', 'a3']);
});
