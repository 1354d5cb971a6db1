// Found by the simulation (seed 85): Metadata for a topic this broker has not seen yet reads the
// topic's control record [C2]. When that read failed (a throttled or timed-out GET), the handler
// threw and the broker closed the connection: every other request on it failed too, and the client
// learnt nothing. Kafka answers a topic it cannot describe now with a retriable topic-level error.
import { expect, test } from 'bun:test';
import { metadataRequest } from '../support/requests.ts';
import type { BrokerContext } from '../../src/broker/context.ts';
import { handleMetadata } from '../../src/broker/handlers/metadata.ts';
import { ErrorCode } from '../../src/protocol/error-codes.ts';
import { ClusterTopology } from '../../src/broker/topology.ts';
import { RegisteredAddresses } from '../../src/cluster/replica-address.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import { ManualClock } from '../../src/util/clock.ts';
import { testClusterNode } from '../support/cluster-node.ts';
import { OPEN_SECURITY } from '../support/broker-security.ts';

const REQUEST = metadataRequest({ topics: [{ name: 't' }], allowAutoTopicCreation: false });

test('Metadata answers LEADER_NOT_AVAILABLE for a topic whose record cannot be read now, then describes it', async () => {
  const store = new MemoryStore();
  const clock = new ManualClock();
  const creator = testClusterNode({ store, clock, nodeId: 1 });
  const asked = testClusterNode({ store, clock, nodeId: 2 });
  await creator.start();
  await asked.start();
  expect(await creator.createTopic('t', 3)).toBe(true); // broker 2 has not scanned since
  const context = {
    ...OPEN_SECURITY,
    topology: new ClusterTopology(asked, 1, new RegisteredAddresses(clock)),
    clusterId: 'c',
    nodeId: 2,
    autoCreateTopics: false,
    defaultPartitions: 1,
  } as unknown as BrokerContext;

  store.injectFault({ operation: 'get', kind: 'Throttled', keyPrefix: 'c/control/topics/t' });
  const failed = await handleMetadata(context, REQUEST, 12);
  expect(failed.topics[0]!.errorCode).toBe(ErrorCode.LEADER_NOT_AVAILABLE);
  expect(failed.topics[0]!.partitions).toEqual([]);

  const answered = await handleMetadata(context, REQUEST, 12);
  expect(answered.topics[0]!.errorCode).toBe(ErrorCode.NONE);
  expect(answered.topics[0]!.partitions.length).toBe(3);
});
