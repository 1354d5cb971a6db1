// Metadata, FindCoordinator and DescribeCluster name each broker at its endpoint of the listener the
// request came in on, and leave out brokers that have listeners but not that one, as Kafka does; a
// partition led by such a broker is LISTENER_NOT_FOUND (LEADER_NOT_AVAILABLE before Metadata v6).
import { expect, setDefaultTimeout, test } from 'bun:test';
import type { DescribeClusterRequest } from '../../../src/broker/apis/describe-cluster.ts';
import type { FindCoordinatorRequest } from '../../../src/broker/apis/find-coordinator.ts';
import { handleDescribeCluster } from '../../../src/broker/handlers/cluster.ts';
import { handleFindCoordinator } from '../../../src/broker/handlers/coordinator.ts';
import { handleMetadata } from '../../../src/broker/handlers/metadata.ts';
import { ErrorCode } from '../../../src/protocol/error-codes.ts';
import { completeMessage } from '../../../src/protocol/message-codec.ts';
import { describeClusterRequestSchema } from '../../../src/protocol/messages/describe-cluster.ts';
import { findCoordinatorRequestSchema } from '../../../src/protocol/messages/find-coordinator.ts';
import { type BrokerAddress, SingleBrokerTopology, type Topology } from '../../../src/broker/topology.ts';
import type { Engine } from '../../../src/engine/index.ts';
import { metadataRequest } from '../../support/requests.ts';
import { ALICE, type BrokerOptions, sessionOf, TOPIC, withBroker } from './authz-broker.ts';

setDefaultTimeout(30_000);

const ENDPOINTS = [
  { listener: 'CLIENTS', host: 'broker-1.example', port: 9092 },
  { listener: 'INTERNAL', host: '10.1.0.1', port: 19092 },
];
/** Broker 2 has only the INTERNAL listener. */
const OTHER: BrokerAddress = { nodeId: 2, host: '10.1.0.2', port: 19092, rack: 'b', endpoints: [{ listener: 'INTERNAL', host: '10.1.0.2', port: 19092 }] };
/** Broker 3 was registered before listeners had names: reached at its host and port on any listener. */
const LEGACY: BrokerAddress = { nodeId: 3, host: '10.1.0.3', port: 9092, rack: null };

/** This broker and two others; broker 2 leads t/0 (epoch 7) and coordinates group `g2`, broker 3 group `g3`. */
function threeBrokers(engine: Engine, self: BrokerAddress): Topology {
  const single = new SingleBrokerTopology(self, engine);
  const overrides: Partial<Topology> = {
    brokers: () => [self, OTHER, LEGACY],
    leaderOf: () => OTHER.nodeId,
    leaderEpochOf: () => 7,
    coordinatorFor: (group) => (group === 'g2' ? OTHER : group === 'g3' ? LEGACY : self),
  };
  return new Proxy(single, {
    get(target, property) {
      if (Object.hasOwn(overrides, property)) return overrides[property as keyof Topology];
      const value = Reflect.get(target, property, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

const threeBrokersOptions: BrokerOptions = { acls: null, endpoints: ENDPOINTS, topology: threeBrokers };

test("Metadata lists each broker at its endpoint of the request's listener, those without it left out", async () => {
  await withBroker(threeBrokersOptions, async ({ context }) => {
    const brokers = async (listener: string) => (await handleMetadata(context, metadataRequest({ topics: [] }), 12, sessionOf(ALICE, listener))).brokers;
    expect(await brokers('CLIENTS')).toEqual([
      { nodeId: 1, host: 'broker-1.example', port: 9092, rack: null },
      { nodeId: 3, host: '10.1.0.3', port: 9092, rack: null },
    ]);
    expect(await brokers('INTERNAL')).toEqual([
      { nodeId: 1, host: '10.1.0.1', port: 19092, rack: null },
      { nodeId: 2, host: '10.1.0.2', port: 19092, rack: 'b' },
      { nodeId: 3, host: '10.1.0.3', port: 9092, rack: null },
    ]);
  });
});

test("a partition led by a broker without the request's listener is LISTENER_NOT_FOUND from v6, LEADER_NOT_AVAILABLE before, without a leader", async () => {
  await withBroker(threeBrokersOptions, async ({ context }) => {
    const partition = async (listener: string, version: number) =>
      (await handleMetadata(context, metadataRequest({ topics: [{ name: TOPIC }], allowAutoTopicCreation: false }), version, sessionOf(ALICE, listener))).topics[0]!.partitions[0]!;
    expect(await partition('CLIENTS', 12)).toMatchObject({ errorCode: ErrorCode.LISTENER_NOT_FOUND, leaderId: -1, leaderEpoch: 7 });
    expect(await partition('CLIENTS', 5)).toMatchObject({ errorCode: ErrorCode.LEADER_NOT_AVAILABLE, leaderId: -1, leaderEpoch: 7 });
    expect(await partition('INTERNAL', 12)).toMatchObject({ errorCode: ErrorCode.NONE, leaderId: 2, leaderEpoch: 7 });
  });
});

test("FindCoordinator answers the coordinator's endpoint of the request's listener; COORDINATOR_NOT_AVAILABLE if it has none", async () => {
  await withBroker(threeBrokersOptions, async ({ context }) => {
    const find = (listener: string, keys: string[]) =>
      handleFindCoordinator(context, completeMessage<FindCoordinatorRequest>(findCoordinatorRequestSchema, { keyType: 0, coordinatorKeys: keys }), sessionOf(ALICE, listener)).coordinators!;
    expect(find('CLIENTS', ['g', 'g2', 'g3']).map(({ key, errorCode, nodeId, host, port }) => ({ key, errorCode, nodeId, host, port }))).toEqual([
      { key: 'g', errorCode: ErrorCode.NONE, nodeId: 1, host: 'broker-1.example', port: 9092 },
      { key: 'g2', errorCode: ErrorCode.COORDINATOR_NOT_AVAILABLE, nodeId: -1, host: '', port: -1 },
      { key: 'g3', errorCode: ErrorCode.NONE, nodeId: 3, host: '10.1.0.3', port: 9092 },
    ]);
    expect(find('INTERNAL', ['g', 'g2']).map(({ nodeId, host, port }) => ({ nodeId, host, port }))).toEqual([
      { nodeId: 1, host: '10.1.0.1', port: 19092 },
      { nodeId: 2, host: '10.1.0.2', port: 19092 },
    ]);
  });
});

test("DescribeCluster lists the brokers reachable on the request's listener; the controller is one of them", async () => {
  await withBroker(threeBrokersOptions, async ({ context }) => {
    const describe = (listener: string) => handleDescribeCluster(context, completeMessage<DescribeClusterRequest>(describeClusterRequestSchema, { endpointType: 1 }), sessionOf(ALICE, listener));
    const clients = describe('CLIENTS');
    expect(clients.brokers).toEqual([
      { brokerId: 1, host: 'broker-1.example', port: 9092, rack: null },
      { brokerId: 3, host: '10.1.0.3', port: 9092, rack: null },
    ]);
    expect(clients.controllerId).toBe(1);
    expect(describe('INTERNAL').brokers.map((b) => b.brokerId)).toEqual([1, 2, 3]);
  });
});
