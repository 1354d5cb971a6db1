// @platformatic/kafka 2.12.1 (pinned devDependency; Kafka 3.5 to 4.2 protocol versions), unchanged,
// in this process against a `ferry broker` process: idempotent producers with every codec, by
// partition (manual offsets) and in a group (commit, resume after the consumer restarts), every
// admin call Ferry must support (DescribeProducers and DescribeCluster through the client's own
// request codecs: its Admin has no method for them), and a transactional producer, which must be
// refused fast (Ferry has no transactions). The tests run in order: later ones read what earlier
// ones wrote.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import {
  Admin,
  ConfigResourceTypes,
  ConfigSources,
  Connection,
  Consumer,
  describeClusterV1,
  describeProducersV0,
  IncrementalAlterConfigOperationTypes,
  MessagesStreamModes,
  Producer,
  ProduceAcks,
  stringDeserializers,
  stringSerializers,
  type CompressionAlgorithmValue,
  type MessagesStream,
} from '@platformatic/kafka';
import { startClientBroker, type ClientBroker } from './support/client-broker.ts';
import { configEntries, TRANSACTIONS_REFUSED_MS_MAX } from './support/kafka-semantics.ts';

setDefaultTimeout(30_000);

/** Every client call gives up after this long, so one missing API fails its test and not the file. */
const CALL_TIMEOUT_MS = 10_000;
const MESSAGES_PER_TOPIC = 30;
const CODECS: CompressionAlgorithmValue[] = ['none', 'gzip', 'snappy', 'lz4', 'zstd'];
const GROUP = 'pf-readers';
const GROUP_TOPIC = 'pf-group';
const ADMIN_TOPIC = 'pf-admin';
const CONFIGURED_TOPIC = 'pf-configured';
const RECORDS_TOPIC = 'pf-none';
const DELETE_BEFORE = 10n;
/** Kafka's retention.ms default (log.retention.hours=168). */
const RETENTION_MS_DEFAULT = '604800000';

let broker: ClientBroker;
let admin: Admin;

beforeAll(async () => {
  broker = await startClientBroker('platformatic');
  admin = new Admin({ clientId: 'ferry-platformatic', bootstrapBrokers: [broker.bootstrap], retries: 1, timeout: CALL_TIMEOUT_MS });
});

afterAll(async () => {
  await admin?.close().catch(() => {});
  await broker?.stop();
});

/** `promise`, or a rejection naming `what` after CALL_TIMEOUT_MS. */
async function bounded<T>(what: string, promise: Promise<T>): Promise<T> {
  let timer: Timer | undefined;
  const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what}: no answer after ${CALL_TIMEOUT_MS} ms`)), CALL_TIMEOUT_MS)));
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** The error's text with the Kafka error names platformatic nests in it (MultipleErrors of ResponseErrors). */
function errorText(error: unknown): string {
  const parts: string[] = [];
  const visit = (e: unknown) => {
    if (!(e instanceof Error)) return void parts.push(String(e));
    const apiId = (e as { apiId?: unknown }).apiId;
    parts.push(typeof apiId === 'string' ? `${apiId}: ${e.message}` : e.message);
    const nested = (e as { errors?: unknown }).errors;
    if (Array.isArray(nested)) nested.forEach(visit);
    else if (nested !== undefined && typeof nested === 'object') parts.push(JSON.stringify(nested, (_, v) => (typeof v === 'bigint' ? String(v) : v)));
  };
  visit(error);
  return parts.join(' | ');
}

function valuesOf(name: string, count: number): string[] {
  return Array.from({ length: count }, (_, i) => `${name} message ${i} ${'x'.repeat(i * 7)}`);
}

async function produce(topic: string, values: readonly string[], options: { compression?: CompressionAlgorithmValue; idempotent?: boolean }): Promise<bigint[]> {
  const producer = new Producer({
    clientId: 'ferry-platformatic',
    bootstrapBrokers: [broker.bootstrap],
    serializers: stringSerializers,
    acks: ProduceAcks.ALL,
    retries: 1,
    timeout: CALL_TIMEOUT_MS,
    autocreateTopics: true,
    ...options,
  });
  try {
    const result = await bounded(`produce to ${topic}`, producer.send({ messages: values.map((value) => ({ topic, value, partition: 0 })) }));
    const base = result.offsets?.find((o) => o.topic === topic && o.partition === 0)?.offset;
    if (base === undefined) throw new Error(`no offset for ${topic}-0 in ${JSON.stringify(result, (_, v) => (typeof v === 'bigint' ? String(v) : v))}`);
    return values.map((_, i) => base + BigInt(i));
  } finally {
    await producer.close(true);
  }
}

/** Reads `count` messages from a stream (or what arrived within CALL_TIMEOUT_MS), committing each if asked. */
async function read(stream: MessagesStream<string, string, string, string>, count: number, commit: boolean): Promise<[bigint, string][]> {
  const got: [bigint, string][] = [];
  const deadline = Date.now() + CALL_TIMEOUT_MS;
  const iterator = stream[Symbol.asyncIterator]();
  while (got.length < count && Date.now() < deadline) {
    const next = await bounded('the next message', iterator.next());
    if (next.done === true) break;
    got.push([next.value.offset, next.value.value]);
    if (commit) await next.value.commit();
  }
  return got;
}

function consumer(groupId: string): Consumer<string, string, string, string> {
  return new Consumer({
    groupId,
    clientId: 'ferry-platformatic',
    bootstrapBrokers: [broker.bootstrap],
    deserializers: stringDeserializers,
    retries: 1,
    timeout: CALL_TIMEOUT_MS,
    sessionTimeout: 6000,
    heartbeatInterval: 1000,
    maxWaitTime: 200,
  });
}

/** By partition: the consumer starts at `offset` (manual mode), commits nothing. */
async function readPartition(topic: string, offset: bigint, count: number): Promise<[bigint, string][]> {
  const reader = consumer(`pf-by-partition-${topic}-${offset}`);
  try {
    const stream = await bounded('consume', reader.consume({ topics: [topic], mode: MessagesStreamModes.MANUAL, offsets: [{ topic, partition: 0, offset }], autocommit: false }));
    return await read(stream, count, false);
  } finally {
    await reader.close(true);
  }
}

/** A group member from the committed offset (earliest without one), committing each message. */
async function readGroup(count: number): Promise<string[]> {
  const member = consumer(GROUP);
  try {
    const stream = await bounded('consume', member.consume({ topics: [GROUP_TOPIC], mode: MessagesStreamModes.COMMITTED, fallbackMode: 'earliest', autocommit: false }));
    return (await read(stream, count, true)).map(([, value]) => value);
  } finally {
    await member.close(true);
  }
}

async function topicConfigs(topic: string) {
  const [description] = await bounded('describeConfigs', admin.describeConfigs({ resources: [{ resourceType: ConfigResourceTypes.TOPIC, resourceName: topic }] }));
  return configEntries(description!.configs.map((c) => ({ name: c.name, value: c.value, source: c.configSource, readOnly: c.readOnly })));
}

async function partitionsOf(topic: string): Promise<number> {
  const metadata = await bounded('metadata', admin.metadata({ topics: [topic], forceUpdate: true }));
  return metadata.topics.get(topic)!.partitionsCount;
}

/** A raw connection, for the requests platformatic's Admin has no method for. */
async function withConnection<T>(use: (connection: Connection) => Promise<T>): Promise<T> {
  const connection = new Connection('ferry-platformatic', { requestTimeout: CALL_TIMEOUT_MS });
  await bounded('connect', connection.connect('127.0.0.1', broker.process.port) as Promise<void>);
  try {
    return await use(connection);
  } finally {
    await connection.close();
  }
}

describe('@platformatic/kafka 2.12.1 against a Ferry broker', () => {
  for (const codec of CODECS) {
    test(`an idempotent producer with acks=all and ${codec} compression; read back by partition`, async () => {
      const topic = `pf-${codec}`;
      const values = valuesOf(codec, MESSAGES_PER_TOPIC);
      expect(await produce(topic, values, { compression: codec, idempotent: true })).toEqual(values.map((_, i) => BigInt(i)));
      expect(await readPartition(topic, 0n, values.length)).toEqual(values.map((value, i) => [BigInt(i), value]));
    });
  }

  test('a partition consumer started at an offset reads from there', async () => {
    const consumed = await readPartition(RECORDS_TOPIC, 10n, MESSAGES_PER_TOPIC - 10);
    expect(consumed.map(([offset]) => offset)).toEqual(Array.from({ length: 20 }, (_, i) => BigInt(10 + i)));
  });

  test('a group member reads everything and commits; a restarted member resumes after the commit', async () => {
    await produce(
      GROUP_TOPIC,
      Array.from({ length: 10 }, (_, i) => `first-${i}`),
      {},
    );
    expect(await readGroup(10)).toEqual(Array.from({ length: 10 }, (_, i) => `first-${i}`));
    await produce(
      GROUP_TOPIC,
      Array.from({ length: 5 }, (_, i) => `second-${i}`),
      {},
    );
    expect(await readGroup(5)).toEqual(Array.from({ length: 5 }, (_, i) => `second-${i}`));
  });

  test('a transactional producer is refused within a few seconds (Ferry has no transactions), not left hanging', async () => {
    const producer = new Producer({
      clientId: 'ferry-platformatic',
      bootstrapBrokers: [broker.bootstrap],
      serializers: stringSerializers,
      transactionalId: 'pf-transactions',
      idempotent: true,
      acks: ProduceAcks.ALL,
      retries: 0,
      timeout: CALL_TIMEOUT_MS,
    });
    const started = Date.now();
    try {
      const outcome = await bounded('beginTransaction', producer.beginTransaction()).then(
        () => 'began',
        (error: unknown) => errorText(error),
      );
      expect(outcome).not.toBe('began');
      expect(outcome).not.toContain('no answer after');
      expect(Date.now() - started).toBeLessThan(TRANSACTIONS_REFUSED_MS_MAX);
    } finally {
      await producer.close(true).catch(() => {});
    }
  });

  test('createTopics creates topics with their partition counts and configs; again, TOPIC_ALREADY_EXISTS', async () => {
    await bounded('createTopics', admin.createTopics({ topics: [ADMIN_TOPIC], partitions: 3, replicas: 1 }));
    await bounded('createTopics', admin.createTopics({ topics: [CONFIGURED_TOPIC], partitions: 1, replicas: 1, configs: [{ name: 'retention.ms', value: '3600000' }] }));
    expect(await partitionsOf(ADMIN_TOPIC)).toBe(3);
    const again = await bounded('createTopics', admin.createTopics({ topics: [ADMIN_TOPIC], partitions: 3, replicas: 1 })).then(() => 'created', errorText);
    expect(again).toContain('TOPIC_ALREADY_EXISTS');
  });

  test('describeConfigs: a config given at creation reads back with source DYNAMIC_TOPIC_CONFIG, others as defaults', async () => {
    const entries = await topicConfigs(CONFIGURED_TOPIC);
    expect(entries.get('retention.ms')).toMatchObject({ value: '3600000', source: ConfigSources.DYNAMIC_TOPIC_CONFIG, readOnly: false });
    expect(entries.get('cleanup.policy')).toMatchObject({ value: 'delete', source: ConfigSources.DEFAULT_CONFIG });
  });

  test('incrementalAlterConfigs SET changes one config; DELETE returns it to the default', async () => {
    const resource = { resourceType: ConfigResourceTypes.TOPIC, resourceName: CONFIGURED_TOPIC };
    await bounded(
      'incrementalAlterConfigs',
      admin.incrementalAlterConfigs({ resources: [{ ...resource, configs: [{ name: 'retention.ms', configOperation: IncrementalAlterConfigOperationTypes.SET, value: '7200000' }] }] }),
    );
    expect((await topicConfigs(CONFIGURED_TOPIC)).get('retention.ms')).toMatchObject({ value: '7200000', source: ConfigSources.DYNAMIC_TOPIC_CONFIG });
    await bounded(
      'incrementalAlterConfigs',
      admin.incrementalAlterConfigs({ resources: [{ ...resource, configs: [{ name: 'retention.ms', configOperation: IncrementalAlterConfigOperationTypes.DELETE }] }] }),
    );
    expect((await topicConfigs(CONFIGURED_TOPIC)).get('retention.ms')).toMatchObject({ value: RETENTION_MS_DEFAULT, source: ConfigSources.DEFAULT_CONFIG });
  });

  test("alterConfigs replaces a topic's configs with the ones given", async () => {
    await bounded(
      'alterConfigs',
      admin.alterConfigs({ resources: [{ resourceType: ConfigResourceTypes.TOPIC, resourceName: CONFIGURED_TOPIC, configs: [{ name: 'retention.ms', value: '1800000' }] }] }),
    );
    expect((await topicConfigs(CONFIGURED_TOPIC)).get('retention.ms')).toMatchObject({ value: '1800000', source: ConfigSources.DYNAMIC_TOPIC_CONFIG });
  });

  test('createPartitions grows a topic to the total asked for; fewer than it has is INVALID_PARTITIONS', async () => {
    await bounded('createPartitions', admin.createPartitions({ topics: [{ name: ADMIN_TOPIC, count: 5 }] }));
    expect(await partitionsOf(ADMIN_TOPIC)).toBe(5);
    const shrunk = await bounded('createPartitions', admin.createPartitions({ topics: [{ name: ADMIN_TOPIC, count: 2 }] })).then(() => 'shrunk', errorText);
    expect(shrunk).toContain('INVALID_PARTITIONS');
  });

  test('listGroups lists the group, Empty once its members left, protocol type consumer', async () => {
    const groups = await bounded('listGroups', admin.listGroups());
    expect(groups.get(GROUP)).toMatchObject({ id: GROUP, protocolType: 'consumer' });
    expect(['Empty', 'EMPTY']).toContain(groups.get(GROUP)!.state);
  });

  test('describeGroups: the group is Empty with no members, protocol type consumer', async () => {
    const group = (await bounded('describeGroups', admin.describeGroups({ groups: [GROUP] }))).get(GROUP)!;
    expect(group).toMatchObject({ id: GROUP, protocolType: 'consumer' });
    expect(['Empty', 'EMPTY']).toContain(group.state);
    expect(group.members.size).toBe(0);
  });

  test('listConsumerGroupOffsets reads the committed offset', async () => {
    const [group] = await bounded('listConsumerGroupOffsets', admin.listConsumerGroupOffsets({ groups: [GROUP] }));
    const partition = group!.topics.find((t) => t.name === GROUP_TOPIC)!.partitions.find((p) => p.partitionIndex === 0)!;
    expect(partition.committedOffset).toBe(15n);
  });

  test('deleteRecords moves the log start offset: the low watermark, then ListOffsets earliest', async () => {
    const [deleted] = await bounded('deleteRecords', admin.deleteRecords({ topics: [{ name: RECORDS_TOPIC, partitions: [{ partition: 0, offset: DELETE_BEFORE }] }] }));
    expect(deleted!.partitions).toEqual([{ partition: 0, lowWatermark: DELETE_BEFORE }]);
    const [listed] = await bounded('listOffsets', admin.listOffsets({ topics: [{ name: RECORDS_TOPIC, partitions: [{ partitionIndex: 0, timestamp: -2n }] }] }));
    expect(listed!.partitions[0]!.offset).toBe(DELETE_BEFORE);
  });

  test('describeLogDirs names the log directory holding a partition and its size', async () => {
    const [described] = await bounded('describeLogDirs', admin.describeLogDirs({ topics: [{ name: RECORDS_TOPIC, partitions: [0] }] }));
    expect(described!.broker).toBe(1);
    const partitions = described!.results.flatMap((dir) => dir.topics.filter((t) => t.name === RECORDS_TOPIC).flatMap((t) => t.partitions));
    expect(partitions.map((p) => p.partitionIndex)).toEqual([0]);
    expect(partitions[0]!.partitionSize).toBeGreaterThan(0n);
  });

  test('DescribeProducers reports the idempotent producer of a partition and its last sequence', async () => {
    const response = await withConnection((connection) => describeProducersV0.api.async(connection, [{ name: 'pf-gzip', partitionIndexes: [0] }]));
    const partition = response.topics[0]!.partitions[0]!;
    expect(partition.errorCode).toBe(0);
    expect(partition.activeProducers.length).toBe(1);
    expect(partition.activeProducers[0]!.lastSequence).toBe(MESSAGES_PER_TOPIC - 1);
  });

  test('DescribeCluster names the broker, the controller and the cluster id', async () => {
    const response = await withConnection((connection) => describeClusterV1.api.async(connection, false, 1));
    expect(response.errorCode).toBe(0);
    expect(response.brokers.map((b) => [b.brokerId, b.host, b.port])).toEqual([[1, '127.0.0.1', broker.process.port]]);
    expect(response.controllerId).toBe(1);
    expect(response.clusterId).toBeString();
  });

  test("deleteConsumerGroupOffsets (OffsetDelete) removes an empty group's committed offset", async () => {
    await bounded('deleteConsumerGroupOffsets', admin.deleteConsumerGroupOffsets({ groupId: GROUP, topics: [{ name: GROUP_TOPIC, partitionIndexes: [0] }] }));
    const [group] = await bounded('listConsumerGroupOffsets', admin.listConsumerGroupOffsets({ groups: [GROUP] }));
    const partition = group!.topics.find((t) => t.name === GROUP_TOPIC)?.partitions.find((p) => p.partitionIndex === 0);
    expect(partition?.committedOffset ?? -1n).toBe(-1n);
  });

  test('deleteGroups deletes an empty group, which then is not listed', async () => {
    await bounded('deleteGroups', admin.deleteGroups({ groups: [GROUP] }));
    expect([...(await bounded('listGroups', admin.listGroups())).keys()]).not.toContain(GROUP);
  });

  test('deleteTopics deletes a topic, which then is not listed', async () => {
    await bounded('deleteTopics', admin.deleteTopics({ topics: [ADMIN_TOPIC] }));
    expect(await bounded('listTopics', admin.listTopics())).not.toContain(ADMIN_TOPIC);
  });
});
