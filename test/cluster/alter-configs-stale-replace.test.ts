// AlterConfigs replaces all of a topic's configs. In a cluster the replace-all is worked out from
// the topic record the compare-and-swap reads, not from this broker's copy of its last scan: a
// config set through another broker a moment ago is replaced too (found by the review of issue 12).
import { afterEach, expect, setDefaultTimeout, test } from 'bun:test';
import { Broker } from '../../src/broker/broker.ts';
import { handleAlterConfigs } from '../../src/broker/handlers/configs.ts';
import { completeMessage } from '../../src/protocol/message-codec.ts';
import { type AlterConfigsRequest, alterConfigsRequestSchema } from '../../src/protocol/messages/alter-configs.ts';
import { ControlStore } from '../../src/control/control-store.ts';
import type { TopicRecord } from '../../src/cluster/control-records.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import type { ObjectStore } from '../../src/store/object-store.ts';
import { tempDir } from '../support/temp-dir.ts';

setDefaultTimeout(60_000);
/** Long enough that no scan refreshes broker 2's copy of the topic record during the test. */
const SCAN_INTERVAL_MS = 60_000;
const TOPIC_RESOURCE = 2;

const running: Broker[] = [];
afterEach(async () => {
  for (const broker of running.splice(0)) await broker.stop().catch(() => {});
});

async function start(store: ObjectStore, nodeId: number): Promise<Broker> {
  const broker = await Broker.start({
    listenHost: '127.0.0.1',
    listenPort: 0,
    nodeId,
    cluster: { store, leaseMs: 120_000, scanIntervalMs: SCAN_INTERVAL_MS, peerPort: null },
    engine: { directory: tempDir(), log: { flush: { kind: 'none' } }, wal: { store, writerId: `broker-${nodeId}`, config: { uploadIntervalMs: 1 } } },
  });
  running.push(broker);
  return broker;
}

test('AlterConfigs through one broker replaces a config another broker set since its last scan', async () => {
  const store = new MemoryStore();
  const [one, two] = [await start(store, 1), await start(store, 2)];
  await one.context.topology.createTopic('t', 1, 1, {});
  expect(await two.context.topology.describeTopicConfigs('t')).not.toBeNull(); // broker 2 now knows the topic (no configs)
  await one.context.topology.alterTopicConfig('t', [{ name: 'retention.ms', op: 'set', value: '3600000' }]);
  // Broker 2 describes what broker 1 set? (Kafka: every broker answers from the same metadata within ms.)
  const described = new Map((await two.context.topology.describeTopicConfigs('t'))!.map((entry) => [entry.name, entry.value]));
  const staleDescribe = described.get('retention.ms') !== '3600000';

  const request = completeMessage<AlterConfigsRequest>(
    alterConfigsRequestSchema,
    { resources: [{ resourceType: TOPIC_RESOURCE, resourceName: 't', configs: [{ name: 'segment.bytes', value: '2097152' }] }] },
    2,
  );
  const answer = await handleAlterConfigs(two.context, request);
  expect(answer.responses[0]!.errorCode).toBe(0);
  const record = await new ControlStore(store, '').read<TopicRecord>('topics/t');
  // Replace-all: only what the request named.
  expect({ configs: record!.value.configs, staleDescribe }).toEqual({ configs: { 'segment.bytes': '2097152' }, staleDescribe: false });
});
