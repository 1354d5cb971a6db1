// Finding 10 of issue 9: leader epochs on the wire (KIP-320). Metadata reports the partition's
// epoch, Fetch and ListOffsets fence a request's current_leader_epoch, and OffsetForLeaderEpoch
// answers where an epoch ended, so consumers detect truncation after a leader change.
import { LOCAL_SESSION } from '../../../src/broker/handlers/authorize.ts';
import { afterEach, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FetchRequest } from '../../../src/broker/apis/fetch.ts';
import { offsetForLeaderEpochCodec } from '../../../src/broker/apis/offset-for-leader-epoch.ts';
import { Broker } from '../../../src/broker/broker.ts';
import type { BrokerContext } from '../../../src/broker/context.ts';
import { handleFetch } from '../../../src/broker/handlers/fetch.ts';
import { handleListOffsets } from '../../../src/broker/handlers/list-offsets.ts';
import { handleMetadata } from '../../../src/broker/handlers/metadata.ts';
import { handleOffsetForLeaderEpoch } from '../../../src/broker/handlers/offset-for-leader-epoch.ts';
import { ErrorCode } from '../../../src/protocol/error-codes.ts';
import { KafkaReader } from '../../../src/protocol/reader.ts';
import { KafkaWriter } from '../../../src/protocol/writer.ts';
import { ClusterTopology, SingleBrokerTopology, type Topology } from '../../../src/broker/topology.ts';
import type { ClusterNode } from '../../../src/cluster/node.ts';
import type { BrokerRecord, PartitionRecord } from '../../../src/cluster/control-records.ts';
import { RegisteredAddresses } from '../../../src/cluster/replica-address.ts';
import { systemClock } from '../../../src/util/clock.ts';
import { Engine } from '../../../src/engine/index.ts';
import type { PartitionLog } from '../../../src/log/partition-log.ts';
import { ManualClock } from '../../../src/util/clock.ts';
import { batchOf } from '../../support/batches.ts';
import { idOf } from '../../support/topic-ids.ts';
import { fetchRequest as fetchRequestOf, listOffsetsRequest, metadataRequest } from '../../support/requests.ts';
import { OPEN_SECURITY } from '../../support/broker-security.ts';
import { managedBy } from '../../support/cluster-policy.ts';

setDefaultTimeout(60_000);

const SELF = { nodeId: 1, host: '127.0.0.1', port: 9092, rack: null };
/** The epoch the partition under test was adopted with, as a cluster claim would assign it. */
const EPOCH = 3;

const engines: Engine[] = [];
const directories: string[] = [];
// One hook, so the engines close before their directories go.
afterEach(async () => {
  for (const engine of engines.splice(0)) await engine.close();
  for (const directory of directories.splice(0)) rmSync(directory, { recursive: true, force: true });
});

function tempDir(): string {
  const directory = mkdtempSync(join(tmpdir(), 'ferry-epochs-'));
  directories.push(directory);
  return directory;
}

/** Epochs 0 (offsets 0-2), 1 (3-4) and 3 (5-8): the log of a partition whose leader changed twice. */
async function rebuild(log: PartitionLog): Promise<void> {
  log.append(batchOf('a', 3), 0);
  log.append(batchOf('b', 2), 1);
  log.append(batchOf('c', 4), EPOCH);
}

async function engineAdopting(as: 'leader' | 'follower'): Promise<Engine> {
  const engine = await Engine.open({ directory: tempDir(), cluster: managedBy() });
  engines.push(engine);
  await engine.adoptPartition('t', idOf('t'), 0, 1, rebuild, as, 1, EPOCH);
  return engine;
}

/** What these handlers use of a broker's context (groups, offsets and producers they never touch). */
function contextFor(engine: Engine, topology: Topology = new SingleBrokerTopology(SELF, engine)): BrokerContext {
  const context = {
    ...OPEN_SECURITY,
    nodeId: SELF.nodeId,
    advertisedHost: SELF.host,
    advertisedPort: SELF.port,
    rack: null,
    clusterId: 'epochs',
    engine,
    clock: new ManualClock(),
    topology,
    autoCreateTopics: false,
    defaultPartitions: 1,
  };
  return context as unknown as BrokerContext;
}

function fetchRequest(currentLeaderEpoch: number): FetchRequest {
  return fetchRequestOf({
    replicaId: -1,
    maxWaitMs: 0,
    minBytes: 0,
    maxBytes: 1 << 20,
    isolationLevel: 0,
    sessionId: 0,
    sessionEpoch: -1,
    topics: [{ topic: 't', partitions: [{ partition: 0, currentLeaderEpoch, fetchOffset: 0, logStartOffset: -1, partitionMaxBytes: 1 << 20 }] }],
    forgottenTopicsData: [],
    rackId: '',
  });
}

describe('Fetch fences current_leader_epoch (KIP-320)', () => {
  for (const as of ['leader', 'follower'] as const) {
    test(`on a ${as} adopted in epoch ${EPOCH}: 2 is FENCED_LEADER_EPOCH, 4 UNKNOWN_LEADER_EPOCH, -1 and 3 read data`, async () => {
      const context = contextFor(await engineAdopting(as));
      const answer = async (epoch: number) => (await handleFetch(context, fetchRequest(epoch))).responses[0]!.partitions[0]!;
      for (const [epoch, errorCode] of [
        [EPOCH - 1, ErrorCode.FENCED_LEADER_EPOCH],
        [EPOCH + 1, ErrorCode.UNKNOWN_LEADER_EPOCH],
      ] as const) {
        const fenced = await answer(epoch);
        expect(fenced.errorCode).toBe(errorCode);
        expect(fenced.records).toEqual([]);
      }
      for (const epoch of [-1, EPOCH]) {
        const served = await answer(epoch);
        expect(served.errorCode).toBe(ErrorCode.NONE);
        expect(served.records!.length).toBe(3); // the three batches
        expect(served.highWatermark).toBe(9);
      }
    });
  }
});

describe('replica progress counts only in the leader epoch (issue 9 finding 5, docs/cluster-protocol.md R2)', () => {
  test(`a leader in epoch ${EPOCH} refuses a follower's report in 2 (FENCED_LEADER_EPOCH), 4 (UNKNOWN_LEADER_EPOCH) and -1, counts it in ${EPOCH}`, async () => {
    const engine = await Engine.open({ directory: tempDir(), cluster: managedBy({ followersOf: () => new Set(['broker-2']) }), minInsyncReplicas: 2 });
    engines.push(engine);
    await engine.adoptPartition('t', idOf('t'), 0, 1, rebuild, 'leader', 2, EPOCH);
    // Broker 2 is a genuine follower (live lease, registered address): only its epoch decides.
    const single = new SingleBrokerTopology(SELF, engine);
    const topology = new Proxy(single, { get: (target, name) => (name === 'isReplicaConnection' ? async () => true : Reflect.get(target, name, target).bind(target)) });
    const context = contextFor(engine, topology);
    const report = async (currentLeaderEpoch: number) =>
      (
        await handleFetch(
          context,
          fetchRequestOf({
            ...fetchRequest(currentLeaderEpoch),
            replicaId: 2,
            maxBytes: 0,
            topics: [{ topic: 't', partitions: [{ partition: 0, currentLeaderEpoch, fetchOffset: 9, logStartOffset: -1, partitionMaxBytes: 0 }] }],
          }),
          { ...LOCAL_SESSION, clientAddress: '127.0.0.1' },
        )
      ).responses[0]!.partitions[0]!;
    for (const [epoch, errorCode] of [
      [EPOCH - 1, ErrorCode.FENCED_LEADER_EPOCH],
      [EPOCH + 1, ErrorCode.UNKNOWN_LEADER_EPOCH],
      [-1, ErrorCode.NOT_LEADER_OR_FOLLOWER],
    ] as const) {
      expect((await report(epoch)).errorCode).toBe(errorCode);
      expect(engine.inSyncReplicaEnd('t', 0, 'broker-2')).toBeNull(); // not counted: the follower is not in sync
    }
    const counted = await report(EPOCH);
    expect(counted.errorCode).toBe(ErrorCode.NONE);
    expect(counted.highWatermark).toBe(9);
    expect(engine.inSyncReplicaEnd('t', 0, 'broker-2')).toBe(9);
  });
});

describe('ListOffsets fences current_leader_epoch and answers with the epoch', () => {
  test(`latest in epoch ${EPOCH}; earliest in the epoch that wrote offset 0; 2 fenced, 4 unknown`, async () => {
    const context = contextFor(await engineAdopting('leader'));
    const answer = async (currentLeaderEpoch: number, timestamp: number) =>
      (
        await handleListOffsets(
          context,
          listOffsetsRequest({ replicaId: -1, isolationLevel: 0, topics: [{ name: 't', partitions: [{ partitionIndex: 0, currentLeaderEpoch, timestamp, maxNumOffsets: 1 }] }] }),
        )
      ).topics[0]!.partitions[0]!;
    expect(await answer(EPOCH, -1)).toMatchObject({ errorCode: ErrorCode.NONE, offset: 9, leaderEpoch: EPOCH });
    expect(await answer(-1, -2)).toMatchObject({ errorCode: ErrorCode.NONE, offset: 0, leaderEpoch: 0 });
    expect(await answer(EPOCH - 1, -1)).toMatchObject({ errorCode: ErrorCode.FENCED_LEADER_EPOCH, offset: -1 });
    expect(await answer(EPOCH + 1, -1)).toMatchObject({ errorCode: ErrorCode.UNKNOWN_LEADER_EPOCH, offset: -1 });
  });
});

describe("ListOffsets is the leader's to answer (Kafka's fetchOnlyFromLeader)", () => {
  test("a follower answers a consumer NOT_LEADER_OR_FOLLOWER (its log start lags the leader's DeleteRecords: sim seed 30293); a debugging tool (replica id -2) is answered", async () => {
    const context = contextFor(await engineAdopting('follower'));
    const answer = async (replicaId: number) =>
      (
        await handleListOffsets(
          context,
          listOffsetsRequest({ replicaId, isolationLevel: 0, topics: [{ name: 't', partitions: [{ partitionIndex: 0, currentLeaderEpoch: -1, timestamp: -2, maxNumOffsets: 1 }] }] }),
        )
      ).topics[0]!.partitions[0]!;
    expect(await answer(-1)).toMatchObject({ errorCode: ErrorCode.NOT_LEADER_OR_FOLLOWER, offset: -1 });
    expect(await answer(-2)).toMatchObject({ errorCode: ErrorCode.NONE, offset: 0 });
  });
});

describe('Metadata reports the leader epoch', () => {
  test('of the partition served here (single broker)', async () => {
    const context = contextFor(await engineAdopting('leader'));
    const response = await handleMetadata(
      context,
      metadataRequest({ topics: [{ name: 't' }], allowAutoTopicCreation: false, includeClusterAuthorizedOperations: false, includeTopicAuthorizedOperations: false }),
      12,
    );
    expect(response.topics[0]!.partitions[0]).toMatchObject({ errorCode: ErrorCode.NONE, leaderId: SELF.nodeId, leaderEpoch: EPOCH });
  });

  test("of the partition's control record in a cluster", async () => {
    const leader: BrokerRecord = { ...SELF, nodeId: 2, stream: { writerId: 'broker-2', epoch: 1 }, renewedAtMs: 1, leaseMs: 10_000 };
    const record: PartitionRecord = { topicId: idOf('t'), leader: 2, leaderEpoch: 7, chain: [leader.stream] };
    const node = {
      topics: () => new Map([['t', { topicId: idOf('t'), partitions: 1, replicationFactor: 1 }]]),
      describeTopic: async () => ({ topicId: idOf('t'), partitions: 1, replicationFactor: 1 }),
      leaderOf: () => ({ broker: leader, record }),
      followersOf: () => [],
      liveBrokers: () => [leader],
    } as unknown as ClusterNode;
    const context = contextFor(await engineAdopting('follower'), new ClusterTopology(node, 1, new RegisteredAddresses(systemClock)));
    const response = await handleMetadata(
      context,
      metadataRequest({ topics: [{ name: 't' }], allowAutoTopicCreation: false, includeClusterAuthorizedOperations: false, includeTopicAuthorizedOperations: false }),
      12,
    );
    expect(response.topics[0]!.partitions[0]).toMatchObject({ errorCode: ErrorCode.NONE, leaderId: 2, leaderEpoch: 7 });
  });
});

describe('OffsetForLeaderEpoch', () => {
  const ask = (context: BrokerContext, leaderEpoch: number, currentLeaderEpoch = -1, replicaId = -1) =>
    handleOffsetForLeaderEpoch(context, { replicaId, topics: [{ topic: 't', partitions: [{ partition: 0, currentLeaderEpoch, leaderEpoch }] }] }).topics[0]!.partitions[0]!;

  test('answers where each epoch ended, from the log with several epochs', async () => {
    const context = contextFor(await engineAdopting('leader'));
    expect(ask(context, 0, EPOCH)).toEqual({ errorCode: ErrorCode.NONE, partition: 0, leaderEpoch: 0, endOffset: 3 });
    expect(ask(context, 1)).toEqual({ errorCode: ErrorCode.NONE, partition: 0, leaderEpoch: 1, endOffset: 5 });
    expect(ask(context, 2)).toEqual({ errorCode: ErrorCode.NONE, partition: 0, leaderEpoch: 1, endOffset: 5 }); // no leader of epoch 2 wrote
    expect(ask(context, EPOCH)).toEqual({ errorCode: ErrorCode.NONE, partition: 0, leaderEpoch: EPOCH, endOffset: 9 }); // current: the log end
    expect(ask(context, EPOCH + 1)).toEqual({ errorCode: ErrorCode.NONE, partition: 0, leaderEpoch: -1, endOffset: -1 });
  });

  test('fences current_leader_epoch first; only the leader answers a consumer; unknown partitions', async () => {
    const leader = contextFor(await engineAdopting('leader'));
    expect(ask(leader, 1, EPOCH - 1)).toEqual({ errorCode: ErrorCode.FENCED_LEADER_EPOCH, partition: 0, leaderEpoch: -1, endOffset: -1 });
    expect(ask(leader, 1, EPOCH + 1)).toEqual({ errorCode: ErrorCode.UNKNOWN_LEADER_EPOCH, partition: 0, leaderEpoch: -1, endOffset: -1 });
    const follower = contextFor(await engineAdopting('follower'));
    expect(ask(follower, 1, EPOCH).errorCode).toBe(ErrorCode.NOT_LEADER_OR_FOLLOWER);
    expect(ask(follower, 1, EPOCH - 1).errorCode).toBe(ErrorCode.FENCED_LEADER_EPOCH);
    expect(ask(follower, 1, EPOCH, -2)).toEqual({ errorCode: ErrorCode.NONE, partition: 0, leaderEpoch: 1, endOffset: 5 }); // a debugging request (v0-2)
    const unknown = handleOffsetForLeaderEpoch(leader, { replicaId: -1, topics: [{ topic: 'nope', partitions: [{ partition: 0, currentLeaderEpoch: -1, leaderEpoch: 0 }] }] });
    expect(unknown.topics[0]!.partitions[0]!.errorCode).toBe(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
  });
});

describe('through a broker', () => {
  test('ApiVersions advertises OffsetForLeaderEpoch 0-4, and a flexible v4 request (header v2) is answered', async () => {
    const directory = tempDir();
    const broker = await Broker.start({ listenHost: '127.0.0.1', listenPort: 0, nodeId: 1, engine: { directory: join(directory, 'data'), log: { flush: { kind: 'none' } } } });
    try {
      broker.context.engine.createTopic('w');
      await broker.context.engine.produce('w', [{ value: 'one' }, { value: 'two' }], { partition: 0 });
      const versions = new KafkaReader(await roundTrip(broker.port, new KafkaWriter().int16(18).int16(0).int32(1).string('epochs')), 4);
      expect(versions.int16()).toBe(ErrorCode.NONE);
      const ranges = versions.array((r) => ({ apiKey: r.int16(), minVersion: r.int16(), maxVersion: r.int16() }));
      expect(ranges).toContainEqual({ apiKey: 23, minVersion: 0, maxVersion: 4 });

      const request = new KafkaWriter()
        .int16(offsetForLeaderEpochCodec.key)
        .int16(4)
        .int32(2)
        .string('epochs')
        .emptyTaggedFields()
        .int32(-1)
        .uvarint(2)
        .compactString('w')
        .uvarint(3)
        .int32(0)
        .int32(0)
        .int32(0)
        .emptyTaggedFields() // partition 0, current epoch 0, epoch 0
        .int32(0)
        .int32(1)
        .int32(0)
        .emptyTaggedFields() // partition 0, current epoch 1: unknown here
        .emptyTaggedFields()
        .emptyTaggedFields();
      const reader = new KafkaReader(await roundTrip(broker.port, request));
      expect(reader.int32()).toBe(2); // correlation id
      reader.skipTaggedFields(); // response header v1
      expect(reader.int32()).toBe(0); // throttle
      expect(reader.compactArrayLength()).toBe(1);
      expect(reader.compactString()).toBe('w');
      const partitions = reader.compactArray((r) => {
        const partition = { errorCode: r.int16(), partition: r.int32(), leaderEpoch: r.int32(), endOffset: r.int64() };
        r.skipTaggedFields();
        return partition;
      });
      expect(partitions).toEqual([
        { errorCode: ErrorCode.NONE, partition: 0, leaderEpoch: 0, endOffset: 2 },
        { errorCode: ErrorCode.UNKNOWN_LEADER_EPOCH, partition: 0, leaderEpoch: -1, endOffset: -1 },
      ]);
    } finally {
      await broker.stop();
    }
  });
});

/** Sends one size-prefixed request frame on a fresh loopback connection and resolves with the response frame. */
async function roundTrip(port: number, request: KafkaWriter): Promise<Uint8Array> {
  const frame = Buffer.concat(request.chunks());
  let received = Buffer.alloc(0);
  return new Promise((resolve, reject) => {
    Bun.connect({
      hostname: '127.0.0.1',
      port,
      socket: {
        open(socket) {
          const prefix = Buffer.alloc(4);
          prefix.writeInt32BE(frame.length);
          socket.write(Buffer.concat([prefix, frame]));
        },
        data(socket, chunk) {
          received = Buffer.concat([received, chunk]);
          if (received.length >= 4 && received.length >= 4 + received.readInt32BE(0)) {
            socket.end();
            resolve(new Uint8Array(received.subarray(4, 4 + received.readInt32BE(0))));
          }
        },
        error: (_socket, error) => reject(error),
      },
    }).catch(reject);
  });
}
