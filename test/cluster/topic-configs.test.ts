// Topic configs in a cluster: kept in the topic record, altered there by compare-and-swap, taken by
// every broker's open partitions on its next scan, and used by a broker that restarts or takes a
// partition over. Brokers run in this process over one memory store.
import { afterEach, expect, setDefaultTimeout, test } from 'bun:test';
import { Broker } from '../../src/broker/broker.ts';
import { ControlStore } from '../../src/control/control-store.ts';
import type { TopicRecord } from '../../src/cluster/control-records.ts';
import { isFerryError } from '../../src/errors.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import type { ObjectStore } from '../../src/store/object-store.ts';
import { batchOf } from '../support/batches.ts';
import { tempDir } from '../support/temp-dir.ts';
import { idOf } from '../support/topic-ids.ts';
import { until } from '../support/until.ts';

setDefaultTimeout(60_000);

/** A batch of about 3 KB: over max.message.bytes 2000, under 10000. */
const VALUE_BYTES = 3000;

const running: Broker[] = [];
afterEach(async () => {
  for (const broker of running.splice(0)) await broker.stop().catch(() => {});
});

async function start(store: ObjectStore, nodeId: number, directory = tempDir(), minInsyncReplicas?: number): Promise<Broker> {
  const broker = await Broker.start({
    listenHost: '127.0.0.1',
    listenPort: 0,
    nodeId,
    cluster: { store, leaseMs: 1000, scanIntervalMs: 50, peerPort: null },
    ...(minInsyncReplicas === undefined ? {} : { minInsyncReplicas }),
    engine: { directory, log: { flush: { kind: 'none' } }, wal: { store, writerId: `broker-${nodeId}`, config: { uploadIntervalMs: 1 } } },
  });
  running.push(broker);
  return broker;
}

async function stop(broker: Broker): Promise<void> {
  running.splice(running.indexOf(broker), 1);
  await broker.stop();
}

/** What an append of a ~3 KB batch to the partition's leader among `brokers` answers: 'ok' or the error kind. */
async function bigAppend(brokers: Broker[], partition: number): Promise<string> {
  const leader = brokers.find((broker) => broker.context.engine.leads('t', partition));
  if (leader === undefined) return 'no leader';
  try {
    await leader.context.engine.appendBatches('t', partition, batchOf('big', 1, Date.now(), VALUE_BYTES));
    return 'ok';
  } catch (error) {
    return isFerryError(error) ? error.kind : String(error);
  }
}

async function untilAnswer(brokers: Broker[], partition: number, wanted: string, what: string): Promise<void> {
  let last = '';
  const deadline = performance.now() + 30_000;
  while ((last = await bigAppend(brokers, partition)) !== wanted) {
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}: the append answers ${last}`);
    await Bun.sleep(20);
  }
}

test('configs created with the topic are in its record; a bad one creates no record', async () => {
  const store = new MemoryStore();
  const broker = await start(store, 1);
  await expect(broker.context.topology.createTopic('bad', 1, 1, { 'retention.ms': 'abc' })).rejects.toMatchObject({
    kind: 'InvalidConfig',
    message: 'Invalid value abc for configuration retention.ms: Not a number of type LONG',
  });
  await expect(broker.context.topology.createTopic('bad', 1, 1, { 'retention.bytes': '10', 'local.retention.bytes': '20' })).rejects.toMatchObject({ kind: 'InvalidConfig' });
  const control = new ControlStore(store, '');
  expect(await control.read('topics/bad')).toBeNull();
  expect(await broker.context.topology.createTopic('t', 1, 1, { 'retention.ms': '3600000' })).toBe(true);
  expect((await control.read<TopicRecord>('topics/t'))!.value.configs).toEqual({ 'retention.ms': '3600000' });
  const described = new Map((await broker.context.topology.describeTopicConfigs('t'))!.map((entry) => [entry.name, entry]));
  expect(described.get('retention.ms')).toMatchObject({ value: '3600000', source: 'TOPIC_CONFIG' });
  expect(await broker.context.topology.describeTopicConfigs('nope')).toBeNull();
});

test('an alteration made through one broker takes effect on the partitions another leads, and survives a restart and a takeover', async () => {
  const store = new MemoryStore();
  const directories = [tempDir(), tempDir()];
  let brokers = [await start(store, 1, directories[0]), await start(store, 2, directories[1])];
  await brokers[0]!.context.topology.createTopic('t', 2, 1, { 'max.message.bytes': '2000' });
  await until(() => [0, 1].every((p) => brokers.some((b) => b.context.engine.leads('t', p))), 'both partitions led');
  for (const partition of [0, 1]) expect(await bigAppend(brokers, partition)).toBe('RecordTooLarge');
  // Altered through broker 2: broker 1's partitions take it on its next scan.
  const after = await brokers[1]!.context.topology.alterTopicConfig('t', [{ name: 'max.message.bytes', op: 'set', value: '10000' }]);
  expect(after).toEqual({ 'max.message.bytes': '10000' });
  for (const partition of [0, 1]) await untilAnswer(brokers, partition, 'ok', `partition ${partition} taking the alteration`);
  // validateOnly writes nothing.
  await brokers[0]!.context.topology.alterTopicConfig('t', [{ name: 'max.message.bytes', op: 'set', value: '2000' }], true);
  for (const partition of [0, 1]) expect(await bigAppend(brokers, partition)).toBe('ok');
  await expect(brokers[0]!.context.topology.alterTopicConfig('t', [{ name: 'segment.bytes', op: 'set', value: '12' }])).rejects.toMatchObject({ kind: 'InvalidConfig' });
  await brokers[0]!.context.topology.alterTopicConfig('t', [{ name: 'max.message.bytes', op: 'set', value: '2000' }]);
  for (const partition of [0, 1]) await untilAnswer(brokers, partition, 'RecordTooLarge', `partition ${partition} taking the second alteration`);

  // Takeover: broker 1 stops; broker 2 adopts its partitions with the record's configs.
  await stop(brokers[0]!);
  brokers = [brokers[1]!];
  await until(() => [0, 1].every((p) => brokers[0]!.context.engine.leads('t', p)), 'broker 2 leading both partitions');
  for (const partition of [0, 1]) expect(await bigAppend(brokers, partition)).toBe('RecordTooLarge');
  // Restart: broker 2 comes back on its directory and adopts again with the record's configs.
  await stop(brokers[0]!);
  brokers = [await start(store, 2, directories[1])];
  await until(() => [0, 1].every((p) => brokers[0]!.context.engine.leads('t', p)), 'broker 2 leading both partitions after its restart');
  for (const partition of [0, 1]) expect(await bigAppend(brokers, partition)).toBe('RecordTooLarge');
  expect(brokers[0]!.context.engine.topicConfigs('t')).toEqual({ 'max.message.bytes': '2000' });
});

test("a topic record written before configs existed keeps working: no configs, the broker's defaults", async () => {
  const store = new MemoryStore();
  const control = new ControlStore(store, '');
  await control.create<TopicRecord>('topics/old', { topicId: idOf('old'), partitions: 1, replicationFactor: 1 });
  const broker = await start(store, 1);
  await until(() => broker.context.engine.leads('old', 0), 'the old topic led');
  expect(broker.context.engine.topicConfigs('old')).toEqual({});
  await broker.context.topology.alterTopicConfig('old', [{ name: 'retention.ms', op: 'set', value: '1000' }]);
  expect((await control.read<TopicRecord>('topics/old'))!.value).toMatchObject({ partitions: 1, replicationFactor: 1, configs: { 'retention.ms': '1000' } });
});

test("min.insync.replicas per topic: acks=all waits for the topic's count, and lowering it releases the wait", async () => {
  const store = new MemoryStore();
  const broker = await start(store, 1);
  await broker.context.topology.createTopic('t', 1, 2, { 'min.insync.replicas': '2' }); // its second replica never comes
  await until(() => broker.context.engine.leads('t', 0), 'the partition led');
  let outcome = 'pending';
  void broker.context.engine.produce('t', [{ value: 'x' }], { partition: 0, acks: 'all' }).then(
    () => (outcome = 'acknowledged'),
    (error: unknown) => (outcome = String(error)),
  );
  await until(() => broker.context.engine.logEndOffset('t', 0) === 1, 'the append');
  await Bun.sleep(300); // the WAL object is durable long before this: only the follower count holds it
  expect(outcome).toBe('pending');
  await broker.context.topology.alterTopicConfig('t', [{ name: 'min.insync.replicas', op: 'set', value: '1' }]);
  await until(() => outcome !== 'pending', 'the acknowledgement');
  expect(outcome).toBe('acknowledged');
});

test('LogAppendTime: the stamped batch travels through the WAL and verifies; after a takeover it reads back with the time the first leader stamped', async () => {
  const store = new MemoryStore();
  const first = await start(store, 1);
  await first.context.topology.createTopic('t', 1, 1, { 'message.timestamp.type': 'LogAppendTime' });
  await until(() => first.context.engine.leads('t', 0), 'the partition led');
  const appended = await first.context.engine.appendBatches('t', 0, batchOf('a', 3, Date.now() - 3_600_000));
  await appended.committed;
  expect(appended.logAppendTimeMs).toBeGreaterThan(Date.now() - 60_000);
  await stop(first);
  const second = await start(store, 2);
  await until(() => second.context.engine.leads('t', 0), 'the takeover'); // its rebuild checks every frame and batch CRC
  const [batch] = second.context.engine.fetch('t', 0, 0).batches;
  expect({ type: batch!.timestampType, max: batch!.maxTimestamp, crc: batch!.isCrcValid() }).toEqual({ type: 'LogAppendTime', max: appended.logAppendTimeMs, crc: true });
  expect([...batch!.records()].map((record) => record.timestamp)).toEqual([appended.logAppendTimeMs, appended.logAppendTimeMs, appended.logAppendTimeMs]);
});
